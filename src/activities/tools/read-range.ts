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
  /** True when the file goes on after the range. */
  more: boolean;
  /** Lines in the whole file, when the scan went to its end; undefined otherwise. */
  totalLines: number | undefined;
}

/**
 * Stream the file once, keeping only the first `keepChars` characters of lines start..end and
 * counting the rest, so neither a huge log nor a huge minified line costs more memory than what
 * can be shown. Lines end at '\n'; a lone '\r' is not a line break, as in `cat -n`. With
 * `toEnd` the scan counts the file's lines to its end (for "of N total"); without, it stops as
 * soon as it knows whether anything follows the range.
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
  // 1-based number of the line being read, and whether any of it was read yet.
  let lineNumber = 1;
  let lineOpen = false;
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
  const inRange = () => lineNumber >= start && lineNumber <= end;

  const stream = file.createReadStream({ encoding: 'utf8', highWaterMark: 64 * 1024, start: 0, autoClose: false });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      if (signal.aborted) throw abortError();
      let from = 0;
      while (from < chunk.length) {
        if (lineNumber > end) {
          more = true;
          if (!toEnd) return finish();
          // Past the range only line breaks matter.
          for (let i = chunk.indexOf('\n', from); i >= 0; i = chunk.indexOf('\n', i + 1)) lineNumber++;
          lineOpen = !chunk.endsWith('\n');
          break;
        }
        const newline = chunk.indexOf('\n', from);
        const piece = newline < 0 ? chunk.slice(from) : chunk.slice(from, newline);
        if (inRange()) {
          if (!lineOpen && rangeLines > 0) keep('\n');
          keep(piece);
          rangeChars += piece.length + (newline < 0 ? 0 : 1);
        }
        if (newline < 0) {
          if (piece !== '') lineOpen = true;
          break;
        }
        if (inRange()) rangeLines++;
        lineNumber++;
        lineOpen = false;
        from = newline + 1;
      }
    }
  } finally {
    stream.destroy();
  }
  // A last line without a final line break is a line too.
  if (lineOpen && inRange()) rangeLines++;
  return finish(true);

  function finish(atEnd = false): RangeScan {
    const totalLines = atEnd ? lineNumber - 1 + (lineOpen ? 1 : 0) : undefined;
    return { kept, keptAll, rangeLines, rangeChars, more, totalLines };
  }
}

/** The kept text as lines, a '\r' before each line break dropped (CRLF files). */
export function keptLines(kept: string): string[] {
  if (kept === '') return [];
  return kept.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}
