import * as path from 'node:path';
import { workingDirectoryNote } from './fs-errors';

/** Entries compared at most: a huge directory is not worth a slow error message. */
const MAX_ENTRIES = 5000;
const MAX_SUGGESTIONS = 3;

/**
 * Names of the folder a missing file would be in (`entries`, read through that folder's handle)
 * that the model probably meant by `wanted`: the same stem with another extension (Claude Code's
 * hint), or the same name in another case. Returned as paths relative to the workspace root
 * (`relativeDir` is the missing file's folder, relative to the root); empty when nothing is close.
 */
export function similarNames(entries: readonly string[], wanted: string, relativeDir: string): string[] {
  const scored: { name: string; score: number }[] = [];
  for (const name of entries.slice(0, MAX_ENTRIES)) {
    const score = closeness(wanted, name);
    if (score !== undefined) scored.push({ name, score });
  }
  return scored
    .sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : 1))
    .slice(0, MAX_SUGGESTIONS)
    .map(({ name }) => (relativeDir === '.' ? name : path.join(relativeDir, name)));
}

/** A ranking score (lower is closer), or undefined when `candidate` is not a plausible match. */
function closeness(wanted: string, candidate: string): number | undefined {
  if (candidate === wanted) return undefined;
  if (candidate.toLowerCase() === wanted.toLowerCase()) return 0;
  if (stem(candidate) === stem(wanted) && stem(wanted) !== '') return 1;
  return undefined;
}

function stem(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/** " Did you mean a or b?" or '': appended to a "does not exist" message. */
export function didYouMean(suggestions: readonly string[]): string {
  return suggestions.length === 0 ? '' : ` Did you mean ${suggestions.join(' or ')}?`;
}

/**
 * Claude Code's answer for a file that does not exist: it names no path, says where relative
 * paths start (the workspace, the tools' working directory), and offers the names it may have meant.
 */
export function fileDoesNotExist(workspace: string, suggestions: readonly string[]): string {
  return `File does not exist. ${workingDirectoryNote(workspace)}${didYouMean(suggestions)}`;
}
