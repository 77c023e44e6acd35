/**
 * The rule to add when the user approves a call "always". Like Claude Code's suggestions: a
 * prefix rule for an ordinary Bash command (`npm test` → `Bash(npm test:*)`), an exact rule when a
 * prefix would grant too much (compound commands, redirections to files, programs that delete,
 * move or run arbitrary code), the file for an edit or a read, the directory for a search, and
 * the bare tool name otherwise.
 */
import { splitShellCommand, type ShellToken } from '../shell';
import { isInsideDirectory, normalizeDirectory, normalizePosixPath, relativeSegments } from './paths';
import { EDIT_FAMILY } from './rules';

/** Programs whose first word(s) say what they do, so the prefix keeps the subcommand. */
const SUBCOMMAND_PROGRAMS = new Set([
  'git',
  'npm',
  'npx',
  'pnpm',
  'pnpx',
  'yarn',
  'bun',
  'bunx',
  'deno',
  'cargo',
  'go',
  'rustup',
  'docker',
  'podman',
  'kubectl',
  'helm',
  'terraform',
  'gh',
  'pip',
  'pip3',
  'poetry',
  'uv',
  'make',
  'dotnet',
  'mvn',
  'gradle',
  './gradlew',
  'bundle',
  'rake',
  'composer',
  'brew',
  'apt',
  'apt-get',
  'systemctl',
  'swift',
  'mix',
]);
/** Subcommands that name a script to run next (`npm run build`, `uv run pytest`). */
const RUN_SUBCOMMANDS = new Set(['run', 'run-script', 'exec', 'x', 'dlx']);
/**
 * Programs for which "this program with any arguments" is far more than the user approved
 * (deleting, moving, changing permissions, running arbitrary code, reaching the network): the
 * suggestion is the exact command. The content readers are here too: inside the working
 * directories they need no rule, so approving one means approving a read outside them, and
 * `Bash(cat:*)` would then open every file on the machine.
 */
const NO_PREFIX_PROGRAMS = new Set([
  'cat',
  'head',
  'tail',
  'grep',
  'rg',
  'rm',
  'rmdir',
  'mv',
  'cp',
  'dd',
  'ln',
  'chmod',
  'chown',
  'chgrp',
  'truncate',
  'shred',
  'mkfs',
  'tee',
  'sed',
  'awk',
  'perl',
  'python',
  'python3',
  'node',
  'ruby',
  'php',
  'bash',
  'sh',
  'zsh',
  'dash',
  'fish',
  'eval',
  'exec',
  'source',
  '.',
  'env',
  'sudo',
  'doas',
  'su',
  'xargs',
  'find',
  'curl',
  'wget',
  'ssh',
  'scp',
  'rsync',
  'nc',
  'kill',
  'pkill',
  'killall',
  'crontab',
  'osascript',
]);

/** A plain word: no quotes, escapes, variables or globs, so the rule text equals what runs. */
const PLAIN_WORD = /^[A-Za-z0-9_./@+-][A-Za-z0-9_./@:+=,-]*$/;

/**
 * The rule to add to `permissions.allow` when the user approves `toolName` with `input` for good.
 * `workspace` turns an absolute edit path into a workspace-relative rule.
 */
export function suggestAllowRule(toolName: string, input: unknown, workspace?: string): string {
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  if (toolName === 'Bash' && typeof fields.command === 'string' && fields.command.trim() !== '') {
    return suggestBashRule(fields.command);
  }
  if (EDIT_FAMILY.includes(toolName) && typeof fields.file_path === 'string' && fields.file_path !== '') {
    return `Edit(${pathSpecifier(fields.file_path, workspace)})`;
  }
  // Reads inside the workspace need no rule; approving one outside it "always" should open that
  // file or directory, not the whole file system (Claude Code, too, scopes such grants to a path).
  if (toolName === 'Read' && typeof fields.file_path === 'string' && fields.file_path !== '') {
    return `Read(${pathSpecifier(fields.file_path, workspace)})`;
  }
  if ((toolName === 'Glob' || toolName === 'Grep') && typeof fields.path === 'string' && fields.path !== '') {
    return `Read(${pathSpecifier(fields.path, workspace)}/**)`;
  }
  return EDIT_FAMILY.includes(toolName) ? 'Edit' : toolName;
}

function suggestBashRule(command: string): string {
  const split = splitShellCommand(command);
  // Substitutions and other unparseable commands: an exact rule never auto-approves them, but
  // it is still the narrowest honest record of what the user approved.
  if (!split.ok) return `Bash(${escapeSpecifier(command.trim())})`;
  const exact = `Bash(${escapeSpecifier(split.text)})`;
  const [only] = split.commands;
  if (split.commands.length !== 1 || only === undefined || only.fileWrites.length > 0) return exact;
  const prefix = commandPrefix(only.tokens);
  return prefix === undefined ? exact : `Bash(${escapeSpecifier(prefix)}:*)`;
}

/** The first word(s) of a simple command worth approving with any arguments, if any. */
function commandPrefix(tokens: ShellToken[]): string | undefined {
  const plain = (index: number): string | undefined => {
    const token = tokens[index];
    return token !== undefined && token.raw === token.value && PLAIN_WORD.test(token.raw) && !token.raw.startsWith('-')
      ? token.raw
      : undefined;
  };
  const program = plain(0);
  if (program === undefined || program.includes('=')) return undefined;
  const name = program.slice(program.lastIndexOf('/') + 1);
  if (NO_PREFIX_PROGRAMS.has(name)) return undefined;
  if (!SUBCOMMAND_PROGRAMS.has(program)) return program;
  const subcommand = plain(1);
  // `git -C dir push`: options before the subcommand; a prefix would cover every subcommand.
  if (subcommand === undefined) return tokens.length === 1 ? program : undefined;
  if (RUN_SUBCOMMANDS.has(subcommand)) {
    const script = plain(2);
    return script === undefined ? `${program} ${subcommand}` : `${program} ${subcommand} ${script}`;
  }
  return `${program} ${subcommand}`;
}

/** `./relative` inside the workspace, `//absolute` outside it (gitignore-escaped). */
function pathSpecifier(filePath: string, workspace: string | undefined): string {
  const root = workspace === undefined ? undefined : normalizeDirectory(workspace);
  const absolute = filePath.startsWith('/')
    ? normalizePosixPath(filePath)
    : root !== undefined
      ? normalizePosixPath(`${root}/${filePath}`)
      : undefined;
  if (absolute === undefined) {
    const relative = normalizePosixPath(filePath);
    if (relative === '.') return '.';
    return (
      (relative === '..' || relative.startsWith('../') ? '' : './') + relative.split('/').map(escapeGlob).join('/')
    );
  }
  if (root !== undefined && isInsideDirectory(absolute, root)) {
    return absolute === root ? '.' : './' + relativeSegments(absolute, root).map(escapeGlob).join('/');
  }
  return '/' + absolute.split('/').map(escapeGlob).join('/');
}

function escapeGlob(segment: string): string {
  return segment.replace(/[\\*?]/g, '\\$&').replace(/[()]/g, '\\$&');
}

/** Escape a command for `Bash(...)`: backslashes, stars and parentheses. */
export function escapeSpecifier(command: string): string {
  return command.replace(/[\\*()]/g, '\\$&');
}
