import { stat } from 'node:fs/promises';
import type { ToolOutcome } from '../../shared/tool-definition';
import { GREP_DEFAULT_HEAD_LIMIT, type GrepInput } from '../../shared/tools/grep';
import { describeFsError, toolError, toolResult } from './fs-errors';
import { sortNewestFirst } from './mtime';
import {
  EXCLUDED_DIRECTORY_GLOBS,
  findRipgrep,
  IGNORE_FLAGS,
  outputLines,
  RIPGREP_MISSING,
  runRipgrep,
} from './ripgrep';
import type { ToolContext } from './tool-context';
import { resolveWorkspacePath } from './workspace-path';

/** Search file contents with ripgrep; paths in the result are relative to the workspace. */
export async function runGrep(input: GrepInput, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await resolveWorkspacePath(ctx.workspace, input.path ?? '.');
  if (!target.ok) return toolError(target.error);
  try {
    await stat(target.absolute);
  } catch (error) {
    return toolError(describeFsError(error, target.relative).replace('File does not exist', 'Path does not exist'));
  }

  const rg = await findRipgrep();
  if (!rg) return toolError(RIPGREP_MISSING);
  const mode = input.output_mode ?? 'files_with_matches';
  const run = await runRipgrep(rg, buildArgs(input, mode, target.relative), {
    cwd: ctx.workspace,
    signal: ctx.signal,
    heartbeat: () => ctx.heartbeat({ tool: 'Grep' }),
  });
  let lines = outputLines(run.stdout);
  if (run.exitCode === 2 && lines.length === 0) {
    return toolError(`Grep failed: ${run.stderr.trim() || 'ripgrep reported an error'}`);
  }
  if (mode === 'files_with_matches') lines = await sortNewestFirst(lines, ctx.workspace);

  const offset = input.offset ?? 0;
  const headLimit = input.head_limit ?? GREP_DEFAULT_HEAD_LIMIT;
  const page = headLimit === 0 ? lines.slice(offset) : lines.slice(offset, offset + headLimit);
  const limited = page.length < lines.length - Math.min(offset, lines.length) || run.truncated;
  const pagination =
    limited || offset > 0
      ? `[Showing results with pagination = limit: ${headLimit === 0 ? 'none' : headLimit}, offset: ${offset}${
          limited
            ? `; ${run.truncated ? 'more than ' : ''}${lines.length} in total, use offset ${offset + page.length} for more`
            : ''
        }]`
      : '';

  if (mode === 'files_with_matches') {
    if (page.length === 0)
      return toolResult(lines.length === 0 ? 'No files found' : `No files found at offset ${offset}`);
    const header = `Found ${page.length} file${page.length === 1 ? '' : 's'}${pagination ? ` ${pagination}` : ''}`;
    return toolResult(`${header}\n${page.join('\n')}`);
  }
  if (page.length === 0)
    return toolResult(lines.length === 0 ? 'No matches found' : `No matches found at offset ${offset}`);
  if (mode === 'count') {
    let total = 0;
    for (const line of page) total += Number(line.slice(line.lastIndexOf(':') + 1)) || 0;
    const summary = `Found ${total} matching line${total === 1 ? '' : 's'} across ${page.length} file${page.length === 1 ? '' : 's'}.`;
    return toolResult(`${page.join('\n')}\n\n${summary}${pagination ? ` ${pagination}` : ''}`);
  }
  return toolResult(page.join('\n') + (pagination ? `\n\n${pagination}` : ''));
}

/** ripgrep arguments; every model-supplied value is attached to its flag or placed after `--`. */
function buildArgs(input: GrepInput, mode: NonNullable<GrepInput['output_mode']>, target: string): string[] {
  const args = ['--hidden', ...IGNORE_FLAGS, '--no-heading', '--with-filename', '--color=never'];
  // rg searches files in parallel and prints them in whatever order they finish; pagination with
  // offset needs the same order on every call. files_with_matches is sorted by mtime afterwards.
  if (mode === 'files_with_matches') args.push('--files-with-matches');
  else if (mode === 'count') args.push('--count', '--sort=path');
  else {
    args.push('--sort=path', '--max-columns=500');
    if (input['-n'] !== false) args.push('--line-number');
    if (input['-C'] !== undefined) args.push(`--context=${input['-C']}`);
    else {
      if (input['-A'] !== undefined) args.push(`--after-context=${input['-A']}`);
      if (input['-B'] !== undefined) args.push(`--before-context=${input['-B']}`);
    }
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
