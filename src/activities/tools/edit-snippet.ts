import { upperBound, type ChangedSpan } from './edit-apply';
import { numberedLine } from './numbered-lines';

/** Unchanged lines shown before and after each changed region, as Claude Code does. */
export const SNIPPET_CONTEXT_LINES = 4;
/** Lines shown at most; many scattered replace_all hits are summarised past this. */
export const SNIPPET_MAX_LINES = 80;

/**
 * The edited regions of `text` (the file after the edit, with '\n' line ends), `cat -n` numbered
 * like Read output, with a few lines of context; regions closer than the context merge, and '...'
 * separates the rest. Empty when the file is now empty.
 */
export function editSnippet(text: string, changes: readonly ChangedSpan[]): string {
  if (text === '') return '';
  const lines = text.split('\n');
  // A final newline ends the last line; it does not start another (Read numbers the same way).
  if (text.endsWith('\n')) lines.pop();
  const lineStarts = [0];
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lineStarts.push(at + 1);
  // The 1-based line holding an offset: the number of line starts at or before it.
  const lineOf = (offset: number) => Math.min(upperBound(lineStarts, offset), lines.length);

  const windows: { first: number; last: number }[] = [];
  for (const change of changes) {
    const first = Math.max(1, lineOf(change.start) - SNIPPET_CONTEXT_LINES);
    const last = Math.min(lines.length, lineOf(Math.max(change.start, change.end - 1)) + SNIPPET_CONTEXT_LINES);
    const previous = windows[windows.length - 1];
    if (previous && first <= previous.last + 1) previous.last = Math.max(previous.last, last);
    else windows.push({ first, last });
  }

  const out: string[] = [];
  let shownLines = 0;
  for (const [i, window] of windows.entries()) {
    const size = window.last - window.first + 1;
    if (i > 0 && shownLines + size > SNIPPET_MAX_LINES) {
      const rest = windows.length - i;
      out.push(`... (${rest} more edited region${rest === 1 ? '' : 's'} not shown; Read the file to see them)`);
      break;
    }
    if (i > 0) out.push('...');
    // Only a first region longer than the whole budget is cut inside.
    const last = Math.min(window.last, window.first + SNIPPET_MAX_LINES - 1);
    for (let n = window.first; n <= last; n++) out.push(numberedLine(n, stripCr(lines[n - 1] ?? '')));
    shownLines += last - window.first + 1;
    if (last < window.last) {
      out.push(
        `... (snippet cut at ${SNIPPET_MAX_LINES} lines; Read the file from offset ${last + 1} to see the rest)`,
      );
      break;
    }
  }
  return out.join('\n');
}

/** A file with mixed line ends keeps its '\r's in the text; Read hides them, so the snippet does. */
function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
