/**
 * POSIX path normalisation, gitignore-style glob matching and the "inside the working
 * directories" test, written here because workflow code cannot import `path`. Paths are plain
 * strings; nothing touches a file system, so symbolic links are not resolved: the tools re-check
 * Read deny rules on the real paths they touch, and the OS sandbox confines what a Bash command
 * can read.
 */
import type { PathPattern } from './types';

/** Resolve `.`, `..` and repeated slashes. Absolute in, absolute out; `..` stops at `/`. */
export function normalizePosixPath(path: string): string {
  const absolute = path.startsWith('/');
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!absolute) out.push('..');
      continue;
    }
    out.push(segment);
  }
  const joined = out.join('/');
  if (absolute) return '/' + joined;
  return joined === '' ? '.' : joined;
}

/**
 * The absolute path a tool will use for `path`: absolute paths as given, relative ones against the
 * workspace. `~` is not expanded: the tools do not expand it either.
 */
export function resolveToolPath(path: string, workspace: string): string {
  return normalizePosixPath(path.startsWith('/') ? path : `${normalizeDirectory(workspace)}/${path}`);
}

/** A directory given by the caller, made absolute and normalised. */
export function normalizeDirectory(directory: string): string {
  return normalizePosixPath(directory.startsWith('/') ? directory : `/${directory}`);
}

/** True when `path` is `directory` or below it (both absolute and normalised). */
export function isInsideDirectory(path: string, directory: string): boolean {
  if (directory === '/') return true;
  return path === directory || path.startsWith(directory + '/');
}

/**
 * Places never counted as inside a working directory unless the directory itself lies in them:
 * kernel interfaces (another process's environment is one `cat /proc/<pid>/environ` away) and
 * device files.
 */
const SYSTEM_AREAS = ['/proc', '/sys', '/dev'];

/**
 * True when `path` (absolute, normalised) is inside one of `roots` (the workspace and the added
 * directories) and not in an area no working directory should open by accident: `/proc`, `/sys`,
 * `/dev`, and the dot files and dot directories directly in the home directory (`~/.ssh`,
 * `~/.aws`, `~/.bashrc`, ...). A root that itself lies in such an area (a workspace under
 * `~/.config`) opens what is below it.
 */
export function isInWorkingDirectories(path: string, roots: readonly string[], homeDir: string | undefined): boolean {
  return roots.some((root) => isInsideDirectory(path, root) && sensitiveAreaOf(path, homeDir, root) === undefined);
}

/**
 * The same for a glob: `prefix` is the literal directory before its first wildcard, `dotBelow`
 * whether a literal segment after a wildcard starts with a dot. A glob may reach any file below
 * its prefix, so a sensitive area below the prefix counts too.
 */
export function isGlobInWorkingDirectories(
  prefix: string,
  dotBelow: boolean,
  roots: readonly string[],
  homeDir: string | undefined,
): boolean {
  const home = homeDir === undefined ? undefined : normalizeDirectory(homeDir);
  return roots.some((root) => {
    if (!isInsideDirectory(prefix, root) || sensitiveAreaOf(prefix, homeDir, root) !== undefined) return false;
    if (SYSTEM_AREAS.some((area) => isInsideDirectory(area, prefix) && !isInsideDirectory(root, area))) return false;
    return !(dotBelow && home !== undefined && isInsideDirectory(home, prefix) && !isInsideDirectory(root, home));
  });
}

/** The sensitive area (see {@link isInWorkingDirectories}) `path` lies in, unless `root` is in it too. */
function sensitiveAreaOf(path: string, homeDir: string | undefined, root: string): string | undefined {
  for (const area of SYSTEM_AREAS) {
    if (isInsideDirectory(path, area) && !isInsideDirectory(root, area)) return area;
  }
  if (homeDir === undefined) return undefined;
  const home = normalizeDirectory(homeDir);
  if (path === home || !isInsideDirectory(path, home)) return undefined;
  const first = relativeSegments(path, home)[0] as string;
  const area = home === '/' ? `/${first}` : `${home}/${first}`;
  return first.startsWith('.') && !isInsideDirectory(root, area) ? area : undefined;
}

/**
 * Could `pattern` match `directory` or anything below it? For commands that read a whole tree
 * (`grep -r`, `rg`): they cannot skip the files a Read deny rule covers, as the Grep tool does.
 * 'unknown' (the pattern needs a home directory nobody gave) counts as yes.
 */
export function pathPatternMayCover(
  directory: string,
  pattern: PathPattern,
  workspace: string,
  homeDir: string | undefined,
): boolean {
  const base = patternBase(pattern, workspace, homeDir);
  if (base === undefined) return true;
  if (isInsideDirectory(base, directory)) return true;
  if (!isInsideDirectory(directory, base)) return false;
  return prefixMayMatch(pattern.segments, 0, relativeSegments(directory, base), 0);
}

/** Can `pattern[p..]` match a path that starts with `path[s..]`, or an ancestor of it? */
function prefixMayMatch(pattern: string[], p: number, path: string[], s: number): boolean {
  if (s === path.length || p === pattern.length) return true;
  const head = pattern[p] as string;
  if (head === '**') return prefixMayMatch(pattern, p + 1, path, s) || prefixMayMatch(pattern, p, path, s + 1);
  return segmentRegExp(head).test(path[s] as string) && prefixMayMatch(pattern, p + 1, path, s + 1);
}

/** `path` relative to `directory` (which must contain it), as segments. */
export function relativeSegments(path: string, directory: string): string[] {
  const rest = directory === '/' ? path.slice(1) : path.slice(directory.length + 1);
  return rest === '' ? [] : rest.split('/');
}

/** The directory a pattern's segments are relative to, or undefined when `~` has no home. */
export function patternBase(pattern: PathPattern, workspace: string, homeDir: string | undefined): string | undefined {
  let base: string;
  if (pattern.anchor === 'root') base = '/';
  else if (pattern.anchor === 'home') {
    if (homeDir === undefined) return undefined;
    base = normalizeDirectory(homeDir);
  } else base = normalizeDirectory(workspace);
  for (let i = 0; i < pattern.up; i++) base = normalizePosixPath(`${base}/..`);
  return base;
}

/**
 * Gitignore semantics for one absolute, normalised path: the pattern matches when it matches the
 * path or one of its ancestor directories below the pattern's base (ignoring a directory ignores
 * what is inside it). Returns 'unknown' when the pattern needs a home directory nobody gave.
 */
export function matchPathPattern(
  path: string,
  pattern: PathPattern,
  workspace: string,
  homeDir: string | undefined,
): boolean | 'unknown' {
  const base = patternBase(pattern, workspace, homeDir);
  if (base === undefined) return 'unknown';
  if (!isInsideDirectory(path, base)) return false;
  const segments = relativeSegments(path, base);
  for (let length = segments.length; length >= 0; length--) {
    if (matchSegments(pattern.segments, 0, segments.slice(0, length), 0)) return true;
  }
  return false;
}

function matchSegments(pattern: string[], p: number, path: string[], s: number): boolean {
  if (p === pattern.length) return s === path.length;
  const head = pattern[p] as string;
  if (head === '**') {
    // `**` matches zero or more whole segments.
    for (let skip = s; skip <= path.length; skip++) {
      if (matchSegments(pattern, p + 1, path, skip)) return true;
    }
    return false;
  }
  if (s === path.length) return false;
  return segmentRegExp(head).test(path[s] as string) && matchSegments(pattern, p + 1, path, s + 1);
}

const SEGMENT_CACHE = new Map<string, RegExp>();

/** `*` = any run of characters within a segment, `?` = one character, `\x` = a literal x. */
function segmentRegExp(segment: string): RegExp {
  let cached = SEGMENT_CACHE.get(segment);
  if (cached) return cached;
  let source = '';
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i] as string;
    if (ch === '\\' && i + 1 < segment.length) {
      source += escapeRegExp(segment[i + 1] as string);
      i++;
    } else if (ch === '*') {
      source += '[^/]*';
    } else if (ch === '?') {
      source += '[^/]';
    } else {
      source += escapeRegExp(ch);
    }
  }
  cached = new RegExp(`^${source}$`, 's');
  if (SEGMENT_CACHE.size > 1000) SEGMENT_CACHE.clear();
  SEGMENT_CACHE.set(segment, cached);
  return cached;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
