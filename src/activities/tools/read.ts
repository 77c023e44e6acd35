import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { fileStateKey } from '../../shared/file-state';
import type { ToolOutcome } from '../../shared/tool-definition';
import { READ_DEFAULT_LIMIT, READ_MAX_LINE_CHARS, type ReadInput } from '../../shared/tools/read';
import { abortError } from './abort-error';
import { binaryExtension } from './binary-extensions';
import { BINARY_SNIFF_BYTES, describeFsError, looksBinary, toolError } from './fs-errors';
import { numberedLine } from './numbered-lines';
import { ReadDenyGuard, readDeniedMessage, ruleForTarget } from './read-deny';
import { stateOf } from './read-state';
import { didYouMean, similarNames } from './similar-files';
import type { ToolContext } from './tool-context';
import { openWorkspaceFile } from './workspace-open';

/** Text one Read returns at most (the default window of full-width lines); a larger `limit` stops here. */
const READ_MAX_OUTPUT_CHARS = READ_DEFAULT_LIMIT * READ_MAX_LINE_CHARS;

/**
 * Read a text file and number its lines like `cat -n`. A successful read records the file's state
 * (mtime, size, whether only part was shown) so a later Write or Edit may change it.
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
    if (target.code !== 'ENOENT' || !target.siblings) return toolError(target.error);
    // Suggest no file the rules hide: its name is part of what they protect.
    const similar = similarNames(target.siblings, path.basename(target.absolute), path.dirname(target.relative));
    const suggestions = guard ? await visibleSuggestions(guard, similar, path.dirname(target.absolute)) : similar;
    return toolError(`${target.error}${suggestions.length > 0 ? `.${didYouMean(suggestions)}` : ''}`);
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
  if (info.isDirectory()) {
    return toolError(
      `EISDIR: ${shown} is a directory, not a file. Read shows files only: use Glob to find files in it, or Bash with ls to list it.`,
    );
  }
  // A FIFO or device would block or never end.
  if (!info.isFile()) return toolError(`${shown} is not a regular file.`);

  const start = Math.max(input.offset ?? 1, 1);
  const limit = input.limit ?? READ_DEFAULT_LIMIT;
  const key = fileStateKey(ctx.workspace, input.file_path);
  const read = (content: string, partial: boolean): ToolOutcome => ({
    content,
    isError: false,
    fileStates: [{ key, state: stateOf(info, partial) }],
  });
  if (info.size === 0) {
    return read(
      `<system-reminder>Note: ${shown} exists but is empty (0 bytes); there are no lines to show.</system-reminder>`,
      false,
    );
  }

  const extension = binaryExtension(shown);
  if (extension) return toolError(binaryRefusal(shown, `a ${extension} file`));
  try {
    const head = Buffer.alloc(Math.min(BINARY_SNIFF_BYTES, info.size));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (looksBinary(head.subarray(0, bytesRead))) return toolError(binaryRefusal(shown, 'it contains NUL bytes'));
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }

  const window = await readLineWindow(handle, start, limit, ctx.signal);
  if (window.lines.length === 0) {
    const lines = `${window.linesSeen} line${window.linesSeen === 1 ? '' : 's'}`;
    return read(
      `<system-reminder>Note: ${shown} is shorter than offset ${start}: it has only ${lines}. Call Read with a smaller offset.</system-reminder>`,
      true,
    );
  }
  const numbered = window.lines.map((line, i) => numberedLine(start + i, line.text, line.length)).join('\n');
  const last = start + window.lines.length - 1;
  const more = window.more
    ? `\n\n(Showing lines ${start}-${last}. The file has more lines: call Read with offset ${last + 1} to continue.)`
    : '';
  return read(numbered + more, start > 1 || window.more);
}

/** The suggestions (workspace-relative names of entries of `directory`) that no deny rule covers. */
async function visibleSuggestions(guard: ReadDenyGuard, suggestions: string[], directory: string): Promise<string[]> {
  const denied = await Promise.all(
    suggestions.map((file) => guard.ruleForListed(path.join(directory, path.basename(file)), directory)),
  );
  return suggestions.filter((_, i) => denied[i] === undefined);
}

function binaryRefusal(shown: string, why: string): string {
  return `Cannot read ${shown}: it is a binary file (${why}). Read shows text files only.`;
}

/** A line as Read keeps it: its first characters and its real length. */
interface KeptLine {
  text: string;
  length: number;
}

/**
 * Stream the file and keep only lines start..start+limit-1, and of each only what will be shown,
 * so neither a huge log nor a huge minified line costs more memory than the output. Lines end at
 * '\n' with a trailing '\r' dropped; a lone '\r' is not a line break, as in `cat -n`. Stops early
 * (reporting `more`) when the kept text would exceed READ_MAX_OUTPUT_CHARS, whatever `limit` says.
 */
async function readLineWindow(
  file: FileHandle,
  start: number,
  limit: number,
  signal: AbortSignal,
): Promise<{ lines: KeptLine[]; more: boolean; linesSeen: number }> {
  const end = start + limit - 1;
  const lines: KeptLine[] = [];
  let lineNumber = 0;
  let keptChars = 0;
  // The line being read: its start (at most one character more than can be shown), length, last character.
  let text = '';
  let length = 0;
  let last = '';
  const inWindow = () => lineNumber + 1 >= start && lineNumber + 1 <= end;
  const append = (piece: string) => {
    if (piece === '') return;
    if (inWindow() && text.length <= READ_MAX_LINE_CHARS) text += piece.slice(0, READ_MAX_LINE_CHARS + 1 - text.length);
    length += piece.length;
    last = piece[piece.length - 1] as string;
  };
  const finishLine = () => {
    if (inWindow()) {
      const crlf = last === '\r';
      const shown = crlf && text.length === length ? text.slice(0, -1) : text;
      lines.push({ text: shown, length: crlf ? length - 1 : length });
      keptChars += Math.min(length, READ_MAX_LINE_CHARS);
    }
    lineNumber++;
    text = '';
    length = 0;
    last = '';
  };

  // Once the window is full, any further character means the file goes on.
  let full = false;
  // From the start, and the handle stays open: the caller closes it.
  const stream = file.createReadStream({ encoding: 'utf8', highWaterMark: 64 * 1024, start: 0, autoClose: false });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      if (signal.aborted) throw abortError();
      if (full && chunk.length > 0) return { lines, more: true, linesSeen: lineNumber };
      let from = 0;
      for (let newline = chunk.indexOf('\n'); newline >= 0; newline = chunk.indexOf('\n', from)) {
        append(chunk.slice(from, newline));
        finishLine();
        from = newline + 1;
        if (lineNumber >= end || keptChars > READ_MAX_OUTPUT_CHARS) {
          if (from < chunk.length) return { lines, more: true, linesSeen: lineNumber };
          full = true;
          break;
        }
      }
      if (!full) append(chunk.slice(from));
    }
  } finally {
    stream.destroy();
  }
  if (length > 0) finishLine();
  return { lines, more: false, linesSeen: lineNumber };
}
