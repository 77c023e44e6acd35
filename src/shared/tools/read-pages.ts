/** Most PDF pages one Read may ask for, as in Claude Code. */
export const READ_MAX_PDF_PAGES = 20;
/** A PDF of more pages than this is read only with `pages`, as in Claude Code: each page costs context. */
export const READ_MAX_PDF_PAGES_WHOLE = 10;

/**
 * Read's `pages`: "3" or "1-5" (1-based, inclusive), at most READ_MAX_PDF_PAGES pages. Undefined
 * when the text is not such a range.
 */
export function parsePageRange(text: string): { first: number; last: number } | undefined {
  const match = /^\s*(\d{1,6})\s*(?:-\s*(\d{1,6})\s*)?$/.exec(text);
  if (!match) return undefined;
  const first = Number(match[1]);
  const last = match[2] === undefined ? first : Number(match[2]);
  if (first < 1 || last < first || last - first + 1 > READ_MAX_PDF_PAGES) return undefined;
  return { first, last };
}
