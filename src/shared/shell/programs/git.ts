/**
 * git as a program model, for both readings the permission engine makes of a command line.
 *
 * Deny and ask rules (`invocations.ts`): what git itself may run besides the subcommand a rule
 * names. A deny rule such as `Bash(git push:*)` or `Bash(rm:*)` must not be walked around by
 * git's configuration:
 * - `git -c alias.p=push p`, `git -c alias.x='!rm f' x`: an alias renames a subcommand or runs a
 *   shell command, and any word that is not one of git's own commands may be an alias from the
 *   repository's config (`git p` with `[alias] p = push` in .git/config);
 * - `git -c core.sshCommand='rm f' push`, `core.editor`, `sequence.editor`, `diff.external`,
 *   `credential.helper`, filter and merge drivers, ...: settings that name a program git runs;
 * - `--config-env`, `--exec-path=DIR`: settings from the environment, programs from a folder;
 * - `GIT_SSH_COMMAND=...`, `GIT_EDITOR=...`, `GIT_CONFIG_*`, ...: the same through the environment.
 * Each is reported as code only known when the command runs, which makes any Bash deny or ask rule
 * "cannot be ruled out" (see `permissions/decide.ts`). Settings a repository's config file makes
 * are for the git shim (`git-shim/git`), which sees them when the command runs.
 *
 * The read-only test (`read-only.ts`, whose module comment says why): `status`, `log`, `diff`,
 * `show` and listing `branch` only read, in their plain form; and (generation 2) what git prints
 * from history (`diff`, `show`, `log -p`, `cat-file`, ...) is a read too, for Read deny rules.
 * Pure code.
 */
import { engineAtLeast } from '../../permissions/types';
import type { ShellWord } from '../types';
import { refuse, show, sliceWord, type PathScope, type Refusal } from './check';

// --- what git may run, for deny and ask rules ----------------------------------------------------

/**
 * git's own commands (`git --list-cmds=main` of git 2.39, and later additions): words that can be
 * neither an alias (git ignores an alias named like a command) nor an outside `git-<word>`.
 */
const GIT_COMMANDS = new Set(
  (
    'add am annotate apply archive backfill bisect blame branch bugreport bundle cat-file check-attr ' +
    'check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick clean clone ' +
    'column commit commit-graph commit-tree config count-objects credential credential-cache ' +
    'credential-store daemon describe diagnose diff diff-files diff-index diff-tree difftool fast-export ' +
    'fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck ' +
    'fsck-objects gc get-tar-commit-id grep hash-object help hook http-backend http-fetch http-push ' +
    'imap-send index-pack init init-db instaweb interpret-trailers last-modified log ls-files ls-remote ' +
    'ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-one-file ' +
    'merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes pack-objects pack-redundant ' +
    'pack-refs patch-id prune prune-packed pull push quiltimport range-diff read-tree rebase receive-pack ' +
    'reflog refs remote repack replace replay request-pull rerere reset restore rev-list rev-parse revert ' +
    'rm send-pack shortlog show show-branch show-index show-ref sparse-checkout stage stash status ' +
    'stripspace submodule switch symbolic-ref tag unpack-file unpack-objects update-index update-ref ' +
    'update-server-info upload-archive upload-pack var verify-commit verify-pack verify-tag version ' +
    'whatchanged worktree write-tree'
  ).split(' '),
);

/**
 * Config keys (as git compares them: section and name case-insensitive) whose value is a program
 * or shell command git may run, or that rename a subcommand or let a URL run one.
 */
const PROGRAM_KEY = new RegExp(
  '^(?:' +
    [
      'alias\\..+',
      'core\\.(?:sshcommand|editor|pager|askpass|hookspath|fsmonitor|gitproxy|alternaterefscommand)',
      'sequence\\.editor',
      'diff\\.external',
      'diff\\..+\\.(?:command|textconv)',
      'merge\\..+\\.driver',
      '(?:diff|merge)tool\\..+\\.(?:cmd|path)',
      'filter\\..+\\.(?:clean|smudge|process)',
      'credential\\.(?:.+\\.)?helper',
      'gpg\\.(?:.+\\.)?program',
      'gpg\\.ssh\\.defaultkeycommand',
      'pager\\..+',
      'uploadpack\\.packobjectshook',
      'remote\\..+\\.(?:uploadpack|receivepack|vcs|url|pushurl)',
      'url\\..+\\.(?:insteadof|pushinsteadof)',
      'protocol\\.(?:.+\\.)?allow',
      '(?:browser|man)\\..+\\.(?:cmd|path)',
      'web\\.browser',
      'sendemail\\..*',
      'include(?:if\\..+)?\\.path',
      'interactive\\.difffilter',
      'trailer\\..+\\.(?:command|cmd)',
      'imap\\.tunnel',
      'submodule\\..+\\.update',
    ].join('|') +
    ')$',
  'is',
);

/**
 * Environment variables through which git runs a program, reads settings, or finds its programs;
 * `DURABLE_AGENT_GIT_*` are the worker's settings for the git shim.
 */
export const GIT_PROGRAM_VARIABLE =
  /^(?:HOME|XDG_CONFIG_HOME|GIT_(?:SSH|SSH_COMMAND|EDITOR|SEQUENCE_EDITOR|PAGER|EXTERNAL_DIFF|ASKPASS|PROXY_COMMAND|EXEC_PATH|ALLOW_PROTOCOL|CONFIG|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+|CONFIG_GLOBAL|CONFIG_SYSTEM|CONFIG_NOSYSTEM|TEMPLATE_DIR)|SSH_ASKPASS|EDITOR|VISUAL|DURABLE_AGENT_GIT_.*)$/s;

/** A word of a git command line as {@link gitDangers} needs it. */
export interface GitWord {
  raw: string;
  value: string;
  literal: boolean;
}

/**
 * Why git, run with `words` (`git` first), may run something no rule sees: one reason per
 * danger, empty when there is none. `subcommandAt` is where the subcommand is.
 */
export function gitDangers(words: readonly GitWord[], subcommandAt: number): string[] {
  const dangers: string[] = [];
  const program = words[0];
  if (program !== undefined && program.value.includes('/')) {
    dangers.push(`${JSON.stringify(program.raw)} runs git by its path, around the checks durable-agent's git makes`);
  }
  for (let i = 1; i < subcommandAt; i++) {
    const word = words[i] as GitWord;
    const option = word.value;
    if (option === '-c') {
      const setting = words[i + 1];
      if (setting !== undefined) dangers.push(...settingDanger(setting));
      i++;
    } else if (option === '--config-env' || option.startsWith('--config-env=')) {
      dangers.push(`git ${JSON.stringify(word.raw)} takes a setting from the environment, only known when it runs`);
    } else if (option.startsWith('--exec-path=')) {
      dangers.push(`git ${JSON.stringify(word.raw)} runs git's commands from another folder`);
    }
  }
  const sub = words[subcommandAt];
  if (sub !== undefined) {
    if (!sub.literal) {
      dangers.push(`git's subcommand ${JSON.stringify(sub.raw)} is only known when it runs`);
    } else if (!GIT_COMMANDS.has(sub.value)) {
      dangers.push(
        `${JSON.stringify(sub.raw)} is not one of git's own commands: an alias (from -c or the repository's config) or a git-${sub.value} program may run anything`,
      );
    } else {
      dangers.push(...subcommandDangers(sub.value, words.slice(subcommandAt + 1)));
    }
  }
  return dangers;
}

/** Options of git's own commands that run a command line, and `git config` writing a program. */
const RUNS_COMMANDS: Readonly<Record<string, RegExp>> = {
  rebase: /^(?:-x.*|--exec(?:=.*)?)$/,
  difftool: /^(?:-x.*|--extcmd(?:=.*)?)$/,
  fetch: /^--upload-pack(?:=.*)?$/,
  pull: /^--upload-pack(?:=.*)?$/,
  clone: /^(?:-u.*|--upload-pack(?:=.*)?)$/,
  'ls-remote': /^--upload-pack(?:=.*)?$/,
  push: /^--(?:receive-pack|exec)(?:=.*)?$/,
  archive: /^--exec(?:=.*)?$/,
};

/** `git config` options that only read. */
const CONFIG_READS =
  /^(?:--get(?:-all|-regexp|-urlmatch|-color|-colorbool)?|--list|-l|--show-origin|--show-scope|--name-only)$/;

function subcommandDangers(sub: string, args: readonly GitWord[]): string[] {
  const runs = RUNS_COMMANDS[sub];
  const option =
    runs === undefined ? undefined : args.find((arg) => (arg.value === '--' ? false : runs.test(arg.value)));
  if (option !== undefined) return [`git ${sub} ${JSON.stringify(option.raw)} runs a command no rule sees`];
  if (
    (sub === 'submodule' && args.some((arg) => arg.value === 'foreach')) ||
    (sub === 'bisect' && args[0]?.value === 'run')
  ) {
    return [`git ${sub} ${args[0]?.value === 'run' ? 'run' : 'foreach'} runs a command no rule sees`];
  }
  if (sub === 'config' && !args.some((arg) => CONFIG_READS.test(arg.value))) {
    const words = args.filter((arg) => !arg.value.startsWith('-'));
    // `git config set KEY VALUE` (git 2.46's form) as well as `git config KEY VALUE`.
    const key = ['set', 'unset'].includes(words[0]?.value ?? '') ? words[1] : words[0];
    if (['get', 'list', 'edit'].includes(words[0]?.value ?? '')) return [];
    if (key !== undefined && (!key.literal || PROGRAM_KEY.test(key.value))) {
      return [`git config ${JSON.stringify(key.raw)} sets what git runs later`];
    }
  }
  return [];
}

function settingDanger(setting: GitWord): string[] {
  if (!setting.literal) return [`git -c ${JSON.stringify(setting.raw)} sets something only known when it runs`];
  const equals = setting.value.indexOf('=');
  const key = equals < 0 ? setting.value : setting.value.slice(0, equals);
  return PROGRAM_KEY.test(key)
    ? [`git -c ${JSON.stringify(setting.raw)} names a program or command for git to run`]
    : [];
}

// --- global options ------------------------------------------------------------------------------

/** git's global options that take the next word as their value. */
export const GIT_GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env']);
/** More of them, read from generation 2 on. */
export const GIT_GLOBAL_WITH_VALUE_2 = new Set(['--attr-source', '--shallow-file', '--super-prefix', '--list-cmds']);

// --- what only reads, for the read-only test -----------------------------------------------------

const GIT_READ_ONLY = new Set(['status', 'log', 'diff', 'show', 'branch']);
const GIT_BRANCH_LIST_FLAGS = new Set([
  '-a',
  '-r',
  '-v',
  '-vv',
  '-l',
  '--all',
  '--remotes',
  '--verbose',
  '--list',
  '--show-current',
  '--no-color',
]);
/** Long options of these subcommands that write files, read outside the repository or run programs. */
const GIT_UNSAFE = [
  'output',
  'output-directory',
  'ext-diff',
  'textconv',
  'no-index',
  'show-signature',
  'open-files-in-pager',
  'exec',
  'upload-pack',
  'receive-pack',
  'contents',
];

export function checkGit(args: ShellWord[], scope: PathScope): Refusal | undefined {
  // Global options (-c, -C, --git-dir, --exec-path, ...) may point git at other repositories or
  // configured programs, so the subcommand must come first.
  const [sub, ...rest] = args;
  if (sub === undefined || !sub.literal || !GIT_READ_ONLY.has(sub.value)) {
    // Not read-only, but what they print is still a read, for Read deny rules (generation 2).
    if (sub?.literal === true && GIT_PRINTS_FILES.has(sub.value) && engineAtLeast(scope.engine, 2)) {
      if (rest.every((arg) => arg.literal)) contentReads(rest, scope);
    }
    return refuse(sub === undefined ? 'git without a subcommand is not read-only' : `git ${sub.raw} is not read-only`);
  }
  const unknown = rest.find((arg) => !arg.literal);
  if (unknown !== undefined) return refuse(`${show(unknown)} is only known when the command runs`);
  if (sub.value === 'branch') {
    const other = rest.find((arg) => !GIT_BRANCH_LIST_FLAGS.has(arg.value));
    return other === undefined ? undefined : refuse(`git branch ${other.raw} may change branches`);
  }
  let endOfOptions = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as ShellWord;
    const value = arg.value;
    if (!endOfOptions && value === '--') {
      endOfOptions = true;
      continue;
    }
    if (!endOfOptions && value.startsWith('--')) {
      const name = value.slice(2).split('=')[0] as string;
      // git also accepts unambiguous abbreviations (`--out=x` is `--output=x`).
      if (GIT_UNSAFE.some((unsafe) => unsafe.startsWith(name)))
        return refuse(`git ${sub.value} ${value} is not read-only`);
      continue;
    }
    if (!endOfOptions && value.startsWith('-') && value.length > 1) {
      if (!value.startsWith('-O')) continue;
      // -O<orderfile>: a file git reads.
      const file = value.length > 2 ? sliceWord(arg, 2) : rest[++i];
      const refusal = file === undefined ? undefined : scope.path(file, { globs: false, tree: false });
      if (refusal !== undefined) return refusal;
      continue;
    }
    const refusal = scope.path(arg, { globs: false, tree: false });
    if (refusal !== undefined) return refusal;
  }
  // Generation 2: what git prints from history is a read too.
  return engineAtLeast(scope.engine, 2) && printsContent(sub.value, rest) ? contentReads(rest, scope) : undefined;
}

/** Subcommands that are not read-only here but print files' contents from the repository. */
const GIT_PRINTS_FILES = new Set(['cat-file', 'grep', 'archive', 'blame', 'annotate', 'format-patch', 'whatchanged']);

/** `git log` options that make it print changes, not only commits. */
const GIT_LOG_PATCH =
  /^(?:-[a-zA-Z]*[pu][a-zA-Z]*|-U\d*|-L.*|-c|--cc|--dd|--patch.*|--unified.*|--word-diff.*|--color-words.*|--full-diff|--remerge-diff|--diff-merges.*|--binary)$/;

/** Whether git prints file contents from the repository (`diff`, `show`, `log -p`), not only names. */
function printsContent(sub: string, args: ShellWord[]): boolean {
  if (sub === 'diff' || sub === 'show') return true;
  // `git status -v` shows the staged changes, `-vv` the unstaged ones too.
  if (sub === 'status') return args.some((arg) => /^(?:-v+|--verbose)$/.test(arg.value));
  if (sub !== 'log') return false;
  const end = args.findIndex((arg) => arg.value === '--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => GIT_LOG_PATCH.test(arg.value));
}

/**
 * What a content-printing git command may print, as reads for Read deny rules: contents come
 * from commits and the index, not from the files named, so `HEAD:secret/key` reads secret/key and
 * a command that no pathspec after `--` limits may print any file of the repository.
 */
function contentReads(args: ShellWord[], scope: PathScope): Refusal | undefined {
  const end = args.findIndex((arg) => arg.value === '--');
  for (const arg of end < 0 ? args : args.slice(0, end)) {
    const colon = arg.value.indexOf(':');
    if (arg.value.startsWith('-') || colon < 0 || colon === arg.value.length - 1) continue;
    const refusal = scope.path(sliceWord(arg, colon + 1), { globs: false, tree: true });
    if (refusal !== undefined) return refusal;
  }
  const pathspecs = end < 0 ? [] : args.slice(end + 1);
  if (pathspecs.length === 0) {
    scope.cwd(true);
    return undefined;
  }
  for (const pathspec of pathspecs) {
    const refusal = scope.path(pathspec, { globs: false, tree: true });
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}
