import type { FileHandle } from 'node:fs/promises';
import { abortError } from './abort-error';

/** What one pass over a file found of the lines start..end (1-based, inclusive). */
export interface RangeScan {
  /** The start of the range's text, '\n' between lines, at most `keepChars` characters. */
  kept: string;
  /** True when `kept` holds the whole range. */
  keptAll: boolean;
  /** Lines in the range (fewer than asked when the file ends first). */
  rangeLines: number;
  /** Characters of those lines, line breaks included. */
  rangeChars: number;
  /** True when text follows the range (the empty last line after a final line break is none). */
  more: boolean;
  /** Lines in the whole file, when the scan went to its end; undefined otherwise. */
  totalLines: number | undefined;
}

/**
 * Stream the file once, keeping only the first `keepChars` characters of lines start..end and
 * counting the rest, so neither a huge log nor a huge minified line costs more memory than what
 * can be shown. Lines end at '\n'; a lone '\r' is not a line break, as in `cat -n`. What follows
 * the last '\n' is a line too, an empty one when the file ends with a line break: as in Claude
 * Code, "a\nb\n" has three lines, the third empty. With `toEnd` the scan counts the file's lines
 * to its end (for "of N total"); without, it stops as soon as it knows whether anything follows
 * the range.
 */
export async function scanRange(
  file: FileHandle,
  options: { start: number; end: number; keepChars: number; toEnd: boolean; signal: AbortSignal },
): Promise<RangeScan> {
  const { start, end, keepChars, toEnd, signal } = options;
  let kept = '';
  let keptAll = true;
  let rangeLines = 0;
  let rangeChars = 0;
  // 1-based number of the line being read.
  let lineNumber = 1;
  let more = false;
  const keep = (piece: string) => {
    if (piece === '') return;
    const room = keepChars - kept.length;
    if (room >= piece.length) kept += piece;
    else {
      kept += piece.slice(0, Math.max(room, 0));
      keptAll = false;
    }
  };

  const stream = file.createReadStream({ encoding: 'utf8', highWaterMark: 64 * 1024, start: 0, autoClose: false });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      if (signal.aborted) throw abortError();
      let from = 0;
      while (from < chunk.length) {
        if (lineNumber > end) {
          more = true;
          if (!toEnd) return finish(false);
          // Past the range only line breaks matter.
          for (let i = chunk.indexOf('\n', from); i >= 0; i = chunk.indexOf('\n', i + 1)) lineNumber++;
          break;
        }
        const newline = chunk.indexOf('\n', from);
        const piece = newline < 0 ? chunk.slice(from) : chunk.slice(from, newline);
        const inRange = lineNumber >= start;
        if (inRange) {
          keep(piece);
          rangeChars += piece.length + (newline < 0 ? 0 : 1);
        }
        if (newline < 0) break;
        if (inRange) {
          rangeLines++;
          // The next line exists (if only as the empty last one), so it is in the range too.
          if (lineNumber < end) keep('\n');
        }
        lineNumber++;
        from = newline + 1;
      }
    }
  } finally {
    stream.destroy();
  }
  // The text after the last line break, empty or not.
  if (lineNumber >= start && lineNumber <= end) rangeLines++;
  return finish(true);

  function finish(atEnd: boolean): RangeScan {
    return { kept, keptAll, rangeLines, rangeChars, more, totalLines: atEnd ? lineNumber : undefined };
  }
}

/**
 * The kept text of a range of at least one line as lines, a '\r' before each line break dropped
 * (CRLF files). A range of only the empty last line keeps '' and is one line.
 */
export function keptLines(kept: string): string[] {
  return kept.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}
