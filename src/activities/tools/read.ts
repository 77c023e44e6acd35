import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { fileStateKey } from '../../shared/file-state';
import type { ToolOutcome } from '../../shared/tool-definition';
import {
  READ_ALLOW_LARGE_MAX_TOKENS,
  READ_MAX_FILE_BYTES,
  READ_MAX_TOKENS,
  type ReadInput,
} from '../../shared/tools/read';
import { binaryExtension } from './binary-extensions';
import { formatFileSize } from './file-size';
import { BINARY_SNIFF_BYTES, describeFsError, looksBinary, toolError } from './fs-errors';
import { readLine, safeSlice } from './numbered-lines';
import { keptLines, scanRange, type RangeScan } from './read-range';
import { readMedia } from './read-media';
import { ReadDenyGuard, readDeniedMessage, ruleForTarget } from './read-deny';
import { stateOf } from './read-state';
import { fileDoesNotExist, similarNames } from './similar-files';
import type { ToolContext } from './tool-context';
import { openWorkspaceFile } from './workspace-open';

/**
 * Read a file: text numbered like `cat -n`, images and PDFs as content blocks, notebooks as
 * cells. A successful read records the file's state (mtime, size, whether only part was shown) so
 * a later Write or Edit may change it.
 */
export async function runRead(input: ReadInput, ctx: ToolContext): Promise<ToolOutcome> {
  // The workflow judged the path as written; a symlink or another spelling may lead elsewhere.
  const guard = await ReadDenyGuard.create(ctx);
  // Opened from a handle on the workspace, name by name: what is checked below is what is read.
  const target = await openWorkspaceFile(ctx.workspace, input.file_path, { listSiblingsIfMissing: true });
  if (!target.ok) {
    if (target.code === 'outside') return toolError(target.error);
    const rule = guard && ruleForTarget(guard, ctx.workspace, input.file_path, target.absolute);
    if (rule !== undefined) return toolError(readDeniedMessage(input.file_path, rule));
    if (target.code !== 'ENOENT') return toolError(target.error);
    const similar = target.siblings
      ? similarNames(target.siblings, path.basename(target.absolute), path.dirname(target.relative))
      : [];
    // Suggest no file the rules hide: its name is part of what they protect.
    const suggestions = guard ? await visibleSuggestions(guard, similar, path.dirname(target.absolute)) : similar;
    return toolError(fileDoesNotExist(ctx.workspace, suggestions));
  }
  const { handle } = target;
  try {
    return await readOpened(input, ctx, guard, target.absolute, target.relative, handle);
  } finally {
    await handle.close();
  }
}

async function readOpened(
  input: ReadInput,
  ctx: ToolContext,
  guard: ReadDenyGuard | undefined,
  absolute: string,
  shown: string,
  handle: FileHandle,
): Promise<ToolOutcome> {
  if (guard) {
    const rule = ruleForTarget(guard, ctx.workspace, input.file_path, absolute);
    if (rule !== undefined) return toolError(readDeniedMessage(input.file_path, rule));
  }
  let info;
  try {
    info = await handle.stat();
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }
  // Node's own words, as Claude Code passes them on: the model knows them.
  if (info.isDirectory()) return toolError(`EISDIR: illegal operation on a directory, read '${absolute}'`);
  // A FIFO or device would block or never end.
  if (!info.isFile()) return toolError(`${shown} is not a regular file.`);

  const start = Math.max(input.offset ?? 1, 1);
  const key = fileStateKey(ctx.workspace, input.file_path);
  const read = (content: string, partial: boolean): ToolOutcome => ({
    content,
    isError: false,
    fileStates: [{ key, state: stateOf(info, partial) }],
  });
  // An empty file has one line, an empty one; an offset past it is past the end.
  if (info.size === 0) return start > 1 ? read(shorterThanOffset(start, 1), true) : read(EMPTY_FILE_REMINDER, false);

  // Images, PDFs and notebooks are shown in their own form; offset and limit do not apply.
  const media = await readMedia(handle, info.size, shown, absolute, input.pages);
  if (media) return media.isError ? media : { ...media, fileStates: [{ key, state: stateOf(info, false) }] };

  const extension = binaryExtension(shown);
  if (extension) return toolError(binaryRefusal(extension));
  let hasNul: boolean;
  try {
    const head = Buffer.alloc(Math.min(BINARY_SNIFF_BYTES, info.size));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    hasNul = looksBinary(head.subarray(0, bytesRead));
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }

  const allowLarge = input.allow_large === true;
  if (input.limit === undefined && !allowLarge && info.size > READ_MAX_FILE_BYTES) {
    return toolError(
      `File content (${formatFileSize(info.size)}) exceeds maximum allowed size (${formatFileSize(READ_MAX_FILE_BYTES)}). ` +
        `Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file. ${ALLOW_LARGE_HINT}`,
    );
  }
  const cap = allowLarge ? READ_ALLOW_LARGE_MAX_TOKENS : READ_MAX_TOKENS;
  const scan = await scanRange(handle, {
    start,
    end: input.limit === undefined ? Number.POSITIVE_INFINITY : start + input.limit - 1,
    // Enough for any page that fits the cap (a token is about four characters).
    keepChars: cap * 4,
    // "of N total" needs the file's line count; a huge file read in parts need not be counted.
    toEnd: input.limit === undefined && info.size <= COUNT_LINES_MAX_BYTES,
    signal: ctx.signal,
  });
  const nulNote = hasNul ? `\n\n${NUL_NOTE}` : '';
  if (scan.rangeLines === 0) return read(shorterThanOffset(start, scan.totalLines ?? start - 1), true);

  const tokens = estimateTokens(scan.rangeChars, scan.rangeLines);
  if (tokens <= cap) {
    const lines = keptLines(scan.kept);
    const numbered = lines.map((line, i) => readLine(start + i, line)).join('\n');
    return read(numbered + nulNote, start > 1 || scan.more);
  }
  if (input.limit !== undefined && !allowLarge) {
    return toolError(
      `File content (${tokens} tokens) exceeds maximum allowed tokens (${cap}). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file. ${ALLOW_LARGE_HINT}`,
    );
  }
  return read(partialView(shown, start, scan, tokens, cap, allowLarge) + nulNote, true);
}

/** Claude Code's words for an empty file, shown in place of its lines. */
const EMPTY_FILE_REMINDER = '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>';

/** Claude Code's words for an offset past the last line (its "lines" whatever the count). */
function shorterThanOffset(offset: number, totalLines: number): string {
  return `<system-reminder>Warning: the file exists but is shorter than the provided offset (${offset}). The file has ${totalLines} lines.</system-reminder>`;
}

/** Bytes up to which a paged read counts the file's lines for its "of N total". */
const COUNT_LINES_MAX_BYTES = 64 * 1024 * 1024;

const ALLOW_LARGE_HINT =
  'To read it anyway, up to what still fits in your context, call Read again with allow_large: true — only if you genuinely need all of it or the user asked for the whole file.';

const NUL_NOTE =
  '[This file has NUL bytes in its first 8 KB: binary data, UTF-16/UTF-32 without a byte-order mark, or text with embedded NULs. Edit will refuse it and Write cannot write NUL bytes: change it with a shell command that keeps its encoding, or ask the user whether to convert it to UTF-8.]';

/** Claude Code's estimate of a text's tokens: about four characters (line breaks counted twice) each. */
function estimateTokens(chars: number, lines: number): number {
  return Math.ceil((chars + lines) / 4);
}

/**
 * The first page of a range over the token cap, and where the next one starts. A page is 85% of
 * the share of lines that fits the cap, as in Claude Code; a range whose first line alone is over
 * the cap is shown as the start of that line.
 */
function partialView(
  shown: string,
  start: number,
  scan: RangeScan,
  tokens: number,
  cap: number,
  allowLarge: boolean,
): string {
  const anyway = allowLarge ? '' : ` ${ALLOW_LARGE_HINT}`;
  const lines = keptLines(scan.kept);
  // The kept text may end inside a line: only whole lines make a page.
  const whole = scan.keptAll ? lines.length : lines.length - 1;
  const page = Math.min(Math.floor(Math.floor((scan.rangeLines * cap) / tokens) * 0.85), whole);
  if (page >= 1) {
    const last = start + page - 1;
    const total = scan.totalLines === undefined ? `more than ${last}` : String(scan.totalLines);
    return (
      `${lines
        .slice(0, page)
        .map((line, i) => readLine(start + i, line))
        .join('\n')}\n\n` +
      `[Truncated: PARTIAL view — ${shown}: showing lines ${start}-${last} of ${total} total (${tokens} tokens, cap ${cap}). ` +
      `Call Read with offset=${last + 1} limit=${page} for the next page, or Grep to find a specific section.${anyway} ` +
      'Do NOT answer from this page alone if the answer may be further in the file.]'
    );
  }
  const chars = Math.max(Math.floor(Math.floor((scan.rangeChars * cap) / tokens) * 0.85), 1);
  const excerpt = safeSlice(lines[0] ?? '', chars);
  return (
    `${readLine(start, excerpt)}\n\n` +
    `[Truncated: PARTIAL view — ${shown}: showing the first ${excerpt.length} of ${scan.rangeChars} characters (${tokens} tokens, cap ${cap}); ` +
    `this file has very long lines and cannot be paginated by line. Use Grep to find a specific section, or Read with offset/limit to page through it.${anyway} ` +
    'Do NOT answer from this excerpt alone if the answer may be elsewhere in the file.]'
  );
}

/** The suggestions (workspace-relative names of entries of `directory`) that no deny rule covers. */
async function visibleSuggestions(guard: ReadDenyGuard, suggestions: string[], directory: string): Promise<string[]> {
  const denied = await Promise.all(
    suggestions.map((file) => guard.ruleForListed(path.join(directory, path.basename(file)), directory)),
  );
  return suggestions.filter((_, i) => denied[i] === undefined);
}

function binaryRefusal(extension: string): string {
  return `This tool cannot read binary files. The file appears to be a binary ${extension} file. Use a shell command or script that can read the format.`;
}
