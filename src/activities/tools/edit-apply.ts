/**
 * The pure part of Edit and MultiEdit: apply exact string replacements to a file's text, in
 * order, and remember where the text changed so the result can show those regions. No I/O.
 */

/** One replacement, as Edit and each MultiEdit entry describe it. */
export interface EditOperation {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/** Characters [start, end) of the final text that an edit wrote (empty for a pure deletion). */
export interface ChangedSpan {
  start: number;
  end: number;
}

/** The edited text with its changed spans, or the index of the first edit that failed and why. */
export type ApplyEditsResult =
  | { ok: true; content: string; replacements: number; changes: ChangedSpan[] }
  | { ok: false; index: number; error: string };

/** How much of a failing old_string is echoed back to the model. */
const ECHO_CHARS = 500;

/**
 * Apply `edits` in order, each to the text the previous one produced, with Edit's rules: old_string
 * must differ from new_string and occur exactly once (any number of times with replace_all); an
 * empty old_string only fills an empty text (an empty file, or a file Edit creates). Stops at the
 * first failing edit, naming its index. The errors are Claude Code's words, where it has them.
 */
export function applyEdits(content: string, edits: readonly EditOperation[]): ApplyEditsResult {
  let text = content;
  let changes: ChangedSpan[] = [];
  let replacements = 0;
  for (const [index, edit] of edits.entries()) {
    const fail = (error: string): ApplyEditsResult => ({ ok: false, index, error });
    if (edit.old_string === edit.new_string) {
      return fail('No changes to make: old_string and new_string are exactly the same.');
    }
    let positions: number[];
    if (edit.old_string === '') {
      if (text !== '') {
        // An empty old_string asks to create the file (or fill an empty one).
        return fail(
          index === 0
            ? 'Cannot create new file - file already exists.'
            : 'old_string is empty, but the file is not. Give the exact text to replace, or use Write to replace the whole file.',
        );
      }
      positions = [0];
    } else {
      positions = occurrences(text, edit.old_string);
      if (positions.length === 0) {
        return fail(`String to replace not found in file.\nString: ${echo(edit.old_string)}`);
      }
      if (positions.length > 1 && !edit.replace_all) {
        return fail(
          `Found ${positions.length} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: ${echo(edit.old_string)}`,
        );
      }
    }
    const replaced = replaceAt(text, changes, positions, edit.old_string.length, edit.new_string);
    text = replaced.text;
    changes = replaced.changes;
    replacements += positions.length;
  }
  return { ok: true, content: text, replacements, changes };
}

/** Start offsets of the non-overlapping occurrences of `needle`, left to right. */
export function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

/**
 * Replace `oldLength` characters at each of `positions` (sorted, non-overlapping) by `replacement`,
 * literally (String.prototype.replace would interpret `$&` and friends), and carry the spans
 * changed by earlier edits over to the new text. A span an occurrence overlaps grows to cover the
 * replacement; the others shift.
 */
function replaceAt(
  text: string,
  spans: readonly ChangedSpan[],
  positions: readonly number[],
  oldLength: number,
  replacement: string,
): { text: string; changes: ChangedSpan[] } {
  const delta = replacement.length - oldLength;
  const pieces: string[] = [];
  const added: ChangedSpan[] = [];
  let from = 0;
  for (const [k, at] of positions.entries()) {
    pieces.push(text.slice(from, at), replacement);
    from = at + oldLength;
    const start = at + k * delta;
    added.push({ start, end: start + replacement.length });
  }
  pieces.push(text.slice(from));

  // Occurrences ending at or before `x`, and the occurrence containing `x`, by binary search.
  const before = (x: number) => upperBound(positions, x - oldLength);
  const mapStart = (x: number) => {
    const k = upperBound(positions, x) - 1;
    const at = positions[k];
    if (at !== undefined && x < at + oldLength) return (added[k] as ChangedSpan).start;
    return x + before(x) * delta;
  };
  const mapEnd = (x: number) => {
    const k = upperBound(positions, x - 1) - 1;
    const at = positions[k];
    if (at !== undefined && x > at && x < at + oldLength) return (added[k] as ChangedSpan).end;
    return x + before(x) * delta;
  };
  const carried = spans.map((span) => {
    const start = mapStart(span.start);
    return { start, end: Math.max(start, mapEnd(span.end)) };
  });
  return { text: pieces.join(''), changes: mergeSpans([...carried, ...added]) };
}

/** Number of sorted `values` that are <= x. */
export function upperBound(values: readonly number[], x: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((values[mid] as number) <= x) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Sort and merge overlapping or touching spans. */
function mergeSpans(spans: ChangedSpan[]): ChangedSpan[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: ChangedSpan[] = [];
  for (const span of sorted) {
    const last = merged[merged.length - 1];
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  return merged;
}

function echo(text: string): string {
  return text.length <= ECHO_CHARS
    ? text
    : `${text.slice(0, ECHO_CHARS)}... [${text.length - ECHO_CHARS} more characters]`;
}
