/** Longer lines in an Edit snippet are cut; Read shows every line whole. */
export const SNIPPET_MAX_LINE_CHARS = 2000;

/**
 * `cat -n` formatting shared by Read and the snippets Edit returns, so the model sees one format
 * and knows to strip the same prefix: the line number right-aligned to width 6, then a tab.
 */
export function numberedLine(lineNumber: number, line: string, fullLength = line.length): string {
  return `${String(lineNumber).padStart(6)}\t${cutLine(line, fullLength)}`;
}

/** A line as Read shows it: its number, a tab, and the whole line. */
export function readLine(lineNumber: number, line: string): string {
  return `${String(lineNumber).padStart(6)}\t${line}`;
}

/**
 * Cut a line longer than SNIPPET_MAX_LINE_CHARS, saying how much is hidden. `fullLength` is the
 * line's real length when the caller kept only its start.
 */
export function cutLine(line: string, fullLength = line.length): string {
  if (fullLength <= SNIPPET_MAX_LINE_CHARS) return line;
  const kept = safeSlice(line, SNIPPET_MAX_LINE_CHARS);
  return `${kept}... [line truncated, ${fullLength - kept.length} more characters]`;
}

/** The first `length` UTF-16 units of `text`, one fewer if the cut would split a surrogate pair. */
export function safeSlice(text: string, length: number): string {
  if (text.length <= length) return text;
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}
