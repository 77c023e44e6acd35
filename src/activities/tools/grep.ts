import type { ToolOutcome } from '../../shared/tool-definition';
import { GREP_DEFAULT_HEAD_LIMIT, type GrepInput } from '../../shared/tools/grep';
import { describeFsError, toolError, toolResult, workingDirectoryNote } from './fs-errors';
import { sortNewestFirst } from './mtime';
import { ReadDenyGuard, ruleForTarget, searchDeniedMessage, WITHHELD_NOTE } from './read-deny';
import {
  EXCLUDED_DIRECTORY_GLOBS,
  findRipgrep,
  IGNORE_FLAGS,
  outputLines,
  RIPGREP_MISSING,
  runRipgrep,
  searchSandbox,
} from './ripgrep';
import type { ToolContext } from './tool-context';
import { handlePath, openWorkspaceFile, type OpenedWorkspaceFile } from './workspace-open';

/** Search file contents with ripgrep; paths in the result are relative to the workspace. */
export async function runGrep(input: GrepInput, ctx: ToolContext): Promise<ToolOutcome> {
  // Opened from a handle on the workspace, name by name; rg searches what the handle has open.
  const target = await openWorkspaceFile(ctx.workspace, input.path ?? '.');
  if (!target.ok && target.code === 'outside') return toolError(target.error);
  // A denied path is refused before anything says whether it exists: that is part of what the rule hides.
  const guard = await ReadDenyGuard.create(ctx).catch(async (error: unknown) => {
    if (target.ok) await target.handle.close();
    throw error;
  });
  const deniedTarget = guard && ruleForTarget(guard, ctx.workspace, input.path ?? '.', target.absolute);
  if (!target.ok) {
    if (deniedTarget) return toolError(searchDeniedMessage('Grep', input.path ?? '.', deniedTarget));
    if (target.code === 'ENOENT')
      return toolError(`Path does not exist: ${target.relative}. ${workingDirectoryNote(ctx.workspace)}`);
    return toolError(target.error);
  }
  try {
    if (deniedTarget) return toolError(searchDeniedMessage('Grep', input.path ?? '.', deniedTarget));
    return await grepOpened(input, ctx, target, guard);
  } finally {
    await target.handle.close();
  }
}

async function grepOpened(
  input: GrepInput,
  ctx: ToolContext,
  target: OpenedWorkspaceFile,
  guard: ReadDenyGuard | undefined,
): Promise<ToolOutcome> {
  let folder: boolean;
  try {
    folder = (await target.handle.stat()).isDirectory();
  } catch (error) {
    return toolError(describeFsError(error, target.relative).replace('File does not exist', 'Path does not exist'));
  }

  const rg = await findRipgrep();
  if (!rg) return toolError(RIPGREP_MISSING);
  const mode = input.output_mode ?? 'files_with_matches';
  // A folder is searched from inside it ('.'), a file by the path of its handle; either way rg
  // names what it found relative to the target, and the names are made the workspace's below.
  const opened = handlePath(target.handle);
  // rg anchors globs with a '/' at its working folder, now the target: one the model wrote from
  // the workspace's root ('src/sub/*.ts' with path 'src') is made the target's ('sub/*.ts').
  const inTarget = folder && target.relative !== '.' ? `${target.relative}/` : undefined;
  const globs = inTarget
    ? splitGlobs(input.glob).map((glob) => {
        const negated = glob.startsWith('!') ? '!' : '';
        const bare = glob.slice(negated.length).replace(/^\//, '');
        return bare.startsWith(inTarget) ? `${negated}/${bare.slice(inTarget.length)}` : glob;
      })
    : undefined;
  // A folder is walked by name below it, in the job's sandbox; one file is read from its handle.
  const sandbox = folder ? searchSandbox(ctx, target.handle) : undefined;
  const args = buildArgs(globs ? { ...input, glob: globs.join(' ') } : input, mode, folder ? '.' : opened);
  // With deny rules, rg ends each file name with a NUL so every line can be told apart by file.
  const run = await runRipgrep(rg, guard ? withFileNameMarkers(args, mode) : args, {
    cwd: folder ? opened : ctx.workspace,
    signal: ctx.signal,
    ...(sandbox ? { sandbox } : {}),
  });
  const fromTarget = (line: string) => {
    if (!folder) return line.startsWith(opened) ? target.relative + line.slice(opened.length) : line;
    // Concatenated, not joined: the rest of the line is the file's text.
    return target.relative === '.' || line === '--' ? line : `${target.relative}/${line}`;
  };
  let lines = outputLines(run.stdout).map(fromTarget);
  if (run.exitCode === 2 && lines.length === 0)
    return searchFailed(run.stderr.trim().split(opened).join(target.relative));
  let withheld = false;
  if (guard) ({ lines, withheld } = await withoutDeniedFiles(lines, mode, input['-n'] !== false, guard, ctx.workspace));
  if (mode === 'files_with_matches') lines = await sortNewestFirst(lines, ctx.workspace);
  // The lines of a search of one file name no file, as Claude Code shows them.
  if (!folder && mode === 'content') lines = lines.map((line) => withoutFileName(line, target.relative));
  const note = withheld ? `\n${WITHHELD_NOTE}` : '';
  const stopped = run.truncated ? `${STOPPED_AT_OUTPUT_LIMIT}\n\n` : '';

  const offset = input.offset ?? 0;
  const headLimit = input.head_limit ?? GREP_DEFAULT_HEAD_LIMIT;
  const page = headLimit === 0 ? lines.slice(offset) : lines.slice(offset, offset + headLimit);
  // Claude Code's note: the limit when it left lines out, the offset when there was one.
  const cut = headLimit !== 0 && lines.length - offset > headLimit;
  const pagination = [...(cut ? [`limit: ${headLimit}`] : []), ...(offset > 0 ? [`offset: ${offset}`] : [])].join(', ');
  const pastTheEnd = offset > 0 && lines.length > 0;

  if (mode === 'files_with_matches') {
    if (page.length === 0) {
      const none = pastTheEnd
        ? `No entries at this offset. [Showing results with pagination = ${pagination}]`
        : 'No files found';
      return toolResult(stopped + none + note);
    }
    const header = `Found ${page.length} file${page.length === 1 ? '' : 's'}${pagination ? ` ${pagination}` : ''}`;
    return toolResult(`${stopped}${header}\n${page.join('\n')}${note}`);
  }
  const shown = page.length > 0 ? page.join('\n') : pastTheEnd ? 'No entries at this offset' : 'No matches found';
  if (mode === 'count') {
    // The totals are of the whole search, not only of the lines shown.
    let total = 0;
    for (const line of lines) total += Number(line.slice(line.lastIndexOf(':') + 1)) || 0;
    // rg counts matching lines: Claude Code's "total occurrences" would overstate what a line
    // matching twice counts for.
    const summary = `Found ${total} matching line${total === 1 ? '' : 's'} across ${lines.length} file${lines.length === 1 ? '' : 's'}.`;
    return toolResult(`${stopped}${shown}\n\n${summary}${pagination ? ` with pagination = ${pagination}` : ''}${note}`);
  }
  return toolResult(
    stopped +
      shown +
      (pagination ? `\n\n[Showing results with pagination = ${pagination}]` : '') +
      (withheld ? `\n\n${WITHHELD_NOTE}` : ''),
  );
}

/** Said first when rg's output passed what is kept of it: rg was stopped, so more matches exist. */
const STOPPED_AT_OUTPUT_LIMIT =
  'The search stopped before it finished, at its output limit, so these results are incomplete: more matches exist. Search a more specific path or pattern.';

/** How rg's messages for input it refuses before searching (a bad pattern, glob or file type) start. */
const REJECTED_INPUT =
  '(?:regex parse error|error parsing glob|unrecognized file type|error parsing flag|compiled regex exceeds size limit|the literal|pattern contains)';

/** The answer when rg ended in error with no output: Claude Code's words for input rg refused. */
function searchFailed(stderr: string): ToolOutcome {
  if (!new RegExp(`^(?:rg: )?${REJECTED_INPUT}`, 'm').test(stderr)) {
    return toolError(`Grep failed: ${stderr || 'ripgrep reported an error'}`);
  }
  // ripgrep 14 starts its messages with 'rg: ', older ones do not; the model sees one form.
  const message = new RegExp(`^${REJECTED_INPUT}`).test(stderr) ? `rg: ${stderr}` : stderr;
  return toolError(
    `Search failed — ripgrep rejected the pattern, glob, or file type without searching:\n${message.slice(0, 2000)}`,
  );
}

/**
 * A content line of a one-file search without the file name rg put first: `file:N:text` (a match),
 * `file-N-text` (context), or `file: binary file matches …`. A '--' between groups stays.
 */
function withoutFileName(line: string, file: string): string {
  const binary = BINARY_MATCH.exec(line);
  if (binary && binary[1] === file) return line.slice(file.length + 2);
  const separator = line[file.length];
  return line.startsWith(file) && (separator === ':' || separator === '-') ? line.slice(file.length + 1) : line;
}

/**
 * The same search, with every printed file name followed by a NUL instead of rg's separator, so a
 * line's file is known whatever characters its name holds. Content mode also numbers every line:
 * with -n off, the number's separator is what still tells a match (':') from context ('-').
 * files_with_matches keeps one name per line: `--null` would drop the newlines.
 */
function withFileNameMarkers(args: string[], mode: GrepMode): string[] {
  if (mode === 'files_with_matches') return args;
  const end = args.indexOf('--');
  const extra = mode === 'content' && !args.includes('--line-number') ? ['--null', '--line-number'] : ['--null'];
  return [...args.slice(0, end), ...extra, ...args.slice(end)];
}

/**
 * rg's output (from the `withFileNameMarkers` arguments) without the lines of files a deny rule
 * covers, rebuilt into what rg prints by default. Context separators ('--') left at the start, at
 * the end or next to each other by a dropped file go too.
 */
async function withoutDeniedFiles(
  lines: string[],
  mode: GrepMode,
  lineNumbers: boolean,
  guard: ReadDenyGuard,
  cwd: string,
): Promise<{ lines: string[]; withheld: boolean }> {
  if (mode === 'files_with_matches') {
    const { kept, withheld } = await guard.filterListed(lines, cwd);
    return { lines: kept, withheld };
  }
  const parsed = lines.map((line) => parseMarkedLine(line, mode, lineNumbers));
  const files = [...new Set(parsed.flatMap((line) => (line.file === undefined ? [] : [line.file])))];
  const allowed = new Set((await guard.filterListed(files, cwd)).kept);
  const kept: string[] = [];
  let withheld = false;
  for (const line of parsed) {
    if (line.file === undefined) {
      // A '--' between groups, or a line not in rg's format: keep the one, drop the other.
      if (line.text === '--' && kept.length > 0 && kept[kept.length - 1] !== '--') kept.push('--');
      else if (line.text !== '--') withheld = true;
    } else if (allowed.has(line.file)) kept.push(line.text);
    else withheld = true;
  }
  if (kept[kept.length - 1] === '--') kept.pop();
  return { lines: kept, withheld };
}

type GrepMode = NonNullable<GrepInput['output_mode']>;

/** What rg prints instead of the lines of a binary file it was given as the path. */
const BINARY_MATCH = /^(.+): binary file matches \(found "\\0" byte around offset \d+\)$/;

/**
 * One line of `--null` output: `file\0count` (count mode) or `file\0<number><sep>text` (content;
 * sep ':' for a match, '-' for context), rebuilt as rg prints it without `--null`. `file` is
 * undefined for a line with no file name (a '--' separator).
 */
function parseMarkedLine(line: string, mode: GrepMode, lineNumbers: boolean): { file?: string; text: string } {
  const nul = line.indexOf('\0');
  if (nul < 0) {
    // rg's note for a binary file it was pointed at names the file with no NUL after it.
    const binary = BINARY_MATCH.exec(line);
    return binary ? { file: binary[1] as string, text: line } : { text: line };
  }
  const file = line.slice(0, nul);
  const rest = line.slice(nul + 1);
  if (mode === 'count') return { file, text: `${file}:${rest}` };
  const numbered = /^(\d+)([:-])/.exec(rest);
  if (!numbered) return { text: line };
  const [prefix, number, separator] = numbered as unknown as [string, string, string];
  const text = rest.slice(prefix.length);
  return { file, text: lineNumbers ? `${file}${separator}${number}${separator}${text}` : `${file}${separator}${text}` };
}

/** ripgrep arguments; every model-supplied value is attached to its flag or placed after `--`. */
function buildArgs(input: GrepInput, mode: GrepMode, target: string): string[] {
  const args = ['--hidden', ...IGNORE_FLAGS, '--no-heading', '--with-filename', '--color=never'];
  // rg searches files in parallel and prints them in whatever order they finish; pagination with
  // offset needs the same order on every call. files_with_matches is sorted by mtime afterwards.
  if (mode === 'files_with_matches') args.push('--files-with-matches');
  else if (mode === 'count') args.push('--count', '--sort=path');
  else {
    args.push('--sort=path', '--max-columns=500');
    if (input['-n'] !== false) args.push('--line-number');
    // `context` and `-C` are one option under two names; `context` wins when both are given.
    const context = input.context ?? input['-C'];
    if (context !== undefined) args.push(`--context=${context}`);
    else {
      if (input['-A'] !== undefined) args.push(`--after-context=${input['-A']}`);
      if (input['-B'] !== undefined) args.push(`--before-context=${input['-B']}`);
    }
    if (input['-o']) args.push('--only-matching');
  }
  if (input['-i']) args.push('--ignore-case');
  if (input.multiline) args.push('--multiline', '--multiline-dotall');
  if (input.type) args.push(`--type=${input.type}`);
  for (const glob of splitGlobs(input.glob)) args.push(`--glob=${glob}`);
  // After the caller's globs: with rg the last matching glob wins.
  args.push(...EXCLUDED_DIRECTORY_GLOBS);
  args.push(`--regexp=${input.pattern}`, '--', target);
  return args;
}

/** "*.ts *.tsx" and "*.ts,*.tsx" name two globs; the comma in "*.{ts,tsx}" does not split. */
export function splitGlobs(glob: string | undefined): string[] {
  if (!glob) return [];
  const globs: string[] = [];
  let current = '';
  let depth = 0;
  for (const ch of glob) {
    if (ch === '{') depth++;
    if (ch === '}') depth = Math.max(0, depth - 1);
    if ((ch === ',' && depth === 0) || /\s/.test(ch)) {
      if (current) globs.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current) globs.push(current);
  return globs;
}
