import * as path from 'node:path';

/** Entries compared at most: a huge directory is not worth a slow error message. */
const MAX_ENTRIES = 5000;
const MAX_SUGGESTIONS = 3;

/**
 * Names of the folder a missing file would be in (`entries`, read through that folder's handle)
 * that the model probably meant by `wanted`: the same name in another case, the same stem with
 * another extension (Claude Code's hint), or a name a typo or two away. Returned as paths relative
 * to the workspace root (`relativeDir` is the missing file's folder, relative to the root); empty
 * when nothing is close.
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
  // Allow about one typo per four characters, at most three.
  const budget = Math.min(3, Math.floor(wanted.length / 4));
  if (budget === 0 || Math.abs(candidate.length - wanted.length) > budget) return undefined;
  const distance = editDistance(wanted.toLowerCase(), candidate.toLowerCase(), budget);
  return distance <= budget ? 1 + distance : undefined;
}

function stem(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/** Levenshtein distance, giving up (returning budget + 1) once it must exceed `budget`. */
function editDistance(a: string, b: string, budget: number): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > budget) return budget + 1;
    previous = current;
  }
  return previous[b.length] ?? budget + 1;
}

/** " Did you mean a, b?" or '' : appended to a "does not exist" message. */
export function didYouMean(suggestions: readonly string[]): string {
  return suggestions.length === 0 ? '' : ` Did you mean ${suggestions.join(' or ')}?`;
}
