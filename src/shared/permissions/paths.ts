/**
 * POSIX path normalisation and gitignore-style glob matching, written here because workflow code
 * cannot import `path`. Paths are plain strings; nothing touches a file system, so symbolic links
 * are not resolved (the tools confine real paths to the workspace themselves).
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
