import * as path from 'node:path';
import type { ToolOutcome } from '../../shared/tool-definition';
import { GLOB_MAX_RESULTS, type GlobInput } from '../../shared/tools/glob';
import { toolError, toolResult, workingDirectoryNote } from './fs-errors';
import {
  EXCLUDED_DIRECTORY_GLOBS,
  findRipgrep,
  IGNORE_FLAGS,
  outputLines,
  RIPGREP_MISSING,
  runRipgrep,
  searchSandbox,
} from './ripgrep';
import { sortOldestFirst } from './mtime';
import { ReadDenyGuard, ruleForTarget, searchDeniedMessage, WITHHELD_NOTE } from './read-deny';
import type { ToolContext } from './tool-context';
import { handlePath, openWorkspaceFolder, type OpenedWorkspaceFile } from './workspace-open';

const GLOB_META = /[*?[\]{}!]/;

/**
 * List files matching a glob, oldest first (by modification time), at most GLOB_MAX_RESULTS. Like Claude Code it honours
 * .gitignore (inside a git repository or not) and skips VCS metadata and `.durable-agent/`.
 */
export async function runGlob(input: GlobInput, ctx: ToolContext): Promise<ToolOutcome> {
  const split = splitPattern(input.pattern, input.path);
  if (!split.ok) return toolError(split.error);

  // The folder opened from a handle on the workspace, name by name; rg lists it from inside.
  const base = await openWorkspaceFolder(ctx.workspace, split.base);
  if (!base.ok && base.code === 'outside') return toolError(base.error);
  // A denied path is refused before anything says whether it exists: that is part of what the rule hides.
  const guard = await ReadDenyGuard.create(ctx).catch(async (error: unknown) => {
    if (base.ok) await base.handle.close();
    throw error;
  });
  const deniedBase = guard && ruleForTarget(guard, ctx.workspace, split.base, base.absolute);
  if (!base.ok) {
    if (deniedBase) return toolError(searchDeniedMessage('Glob', split.base, deniedBase));
    if (base.code === 'ENOTDIR')
      return toolError(`Path ${base.relative} is not a directory; pass a directory as path.`);
    if (base.code === 'ENOENT')
      return toolError(`Directory does not exist: ${base.relative}. ${workingDirectoryNote(ctx.workspace)}`);
    return toolError(base.error);
  }
  try {
    if (deniedBase) return toolError(searchDeniedMessage('Glob', split.base, deniedBase));
    return await globOpened(ctx, split, base, guard);
  } finally {
    await base.handle.close();
  }
}

async function globOpened(
  ctx: ToolContext,
  split: { base: string; pattern: string },
  base: OpenedWorkspaceFile,
  guard: ReadDenyGuard | undefined,
): Promise<ToolOutcome> {
  const rg = await findRipgrep();
  if (!rg) return toolError(RIPGREP_MISSING);
  // rg anchors --glob patterns at its working directory, so run it inside the search directory.
  // A --glob that matches a file overrides .gitignore for it, so the matches are filtered by a
  // second listing without the pattern, which honours every ignore rule.
  // Liveness comes from runTool's heartbeat, around the whole call (the sort included).
  const inside = handlePath(base.handle);
  const sandbox = searchSandbox(ctx, base.handle);
  const options = { cwd: inside, signal: ctx.signal, ...(sandbox ? { sandbox } : {}) };
  const common = ['--files', '--hidden', ...IGNORE_FLAGS];
  const [matched, listed] = await Promise.all([
    runRipgrep(rg, [...common, `--glob=${split.pattern}`, ...EXCLUDED_DIRECTORY_GLOBS, '--', '.'], options),
    runRipgrep(rg, [...common, ...EXCLUDED_DIRECTORY_GLOBS, '--', '.'], options),
  ]);
  const failure = [matched, listed].find((run) => run.exitCode === 2 && run.stdout === '');
  if (failure) return toolError(`Glob failed: ${failure.stderr.trim() || 'ripgrep reported an error'}`);
  const visible = new Set(outputLines(listed.stdout));
  const listedMatches = outputLines(matched.stdout).filter((file) => visible.has(file));
  // Files a Read deny rule covers are left out, as listed and at their real paths.
  const { kept: found, withheld } = guard
    ? await guard.filterListed(listedMatches, base.absolute)
    : { kept: listedMatches, withheld: false };
  const note = withheld ? `\n${WITHHELD_NOTE}` : '';
  if (found.length === 0) return toolResult(`No files found${note}`);
  const truncatedRun = matched.truncated || listed.truncated;

  // Claude Code's order: the oldest files first, so a long listing keeps the oldest.
  const sorted = await sortOldestFirst(found, inside);
  const shown = sorted.slice(0, GLOB_MAX_RESULTS).map((file) => toWorkspaceRelative(base.relative, file));
  const rest = sorted.length - shown.length;
  const cut = truncatedRun
    ? `\n(Showing ${shown.length} of more than ${sorted.length} matching files; the rest are not listed. Narrow the pattern or path to see the rest.)`
    : rest > 0
      ? `\n(Showing ${shown.length} of ${sorted.length} matching files; ${rest} more are not listed. Narrow the pattern or path to see the rest.)`
      : '';
  return toolResult(shown.join('\n') + cut + note);
}

function toWorkspaceRelative(baseRelative: string, file: string): string {
  return baseRelative === '.' ? file : path.join(baseRelative, file);
}

/**
 * Move an absolute or `..`-climbing static prefix of the pattern into the base directory, so it
 * goes through the workspace check like any path. A relative pattern without `..` is left alone:
 * moving its prefix would change rg's anchoring ('src/*.ts' matches only src/, '*.ts' anywhere).
 */
function splitPattern(
  pattern: string,
  basePath: string | undefined,
): { ok: true; base: string; pattern: string } | { ok: false; error: string } {
  const segments = pattern.split('/');
  const climbs = segments.includes('..');
  if (!path.isAbsolute(pattern) && !climbs) return { ok: true, base: basePath ?? '.', pattern };

  const firstGlob = segments.findIndex((segment) => GLOB_META.test(segment));
  const staticCount = firstGlob < 0 ? segments.length - 1 : firstGlob;
  const prefix = segments.slice(0, staticCount);
  const rest = segments.slice(staticCount);
  if (rest.includes('..')) {
    return {
      ok: false,
      error: `Glob pattern "${pattern}" uses '..' after a wildcard; pass the directory as path instead.`,
    };
  }
  const prefixPath = prefix.join('/') || '/';
  const base = path.isAbsolute(prefixPath) ? prefixPath : path.join(basePath ?? '.', prefixPath);
  // A leading '/' anchors the remaining glob at the base directory, as it was in the original.
  return { ok: true, base, pattern: `/${rest.join('/')}` };
}
