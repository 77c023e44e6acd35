import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { ToolOutcome } from '../../shared/tool-definition';
import { READ_DEFAULT_LIMIT, READ_MAX_LINE_CHARS, type ReadInput } from '../../shared/tools/read';
import { abortError } from './abort-error';
import { BINARY_SNIFF_BYTES, describeFsError, looksBinary, toolError, toolResult } from './fs-errors';
import type { ToolContext } from './tool-context';
import { resolveWorkspacePath } from './workspace-path';

/** Read a text file and number its lines like `cat -n`. */
export async function runRead(input: ReadInput, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await resolveWorkspacePath(ctx.workspace, input.file_path);
  if (!target.ok) return toolError(target.error);
  const shown = target.relative;

  let info;
  try {
    info = await stat(target.absolute);
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }
  if (info.isDirectory()) {
    return toolError(`${shown} is a directory, not a file. Use Glob, or Bash with ls, to list its contents.`);
  }
  // A FIFO or device would block or never end.
  if (!info.isFile()) return toolError(`${shown} is not a regular file.`);
  if (info.size === 0) {
    return toolResult('<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>');
  }

  try {
    const handle = await open(target.absolute, 'r');
    try {
      const head = Buffer.alloc(Math.min(BINARY_SNIFF_BYTES, info.size));
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      if (looksBinary(head.subarray(0, bytesRead))) {
        return toolError(
          `Cannot read ${shown}: it is a binary file (it contains NUL bytes). Read shows text files only.`,
        );
      }
    } finally {
      await handle.close();
    }
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }

  const start = Math.max(input.offset ?? 1, 1);
  const limit = input.limit ?? READ_DEFAULT_LIMIT;
  const window = await readLineWindow(target.absolute, start, limit, ctx.signal);
  if (window.lines.length === 0) {
    return toolResult(
      `<system-reminder>Warning: the file exists but is shorter than the provided offset (${start}). The file has ${window.linesSeen} lines.</system-reminder>`,
    );
  }
  const numbered = window.lines.map((line, i) => `${String(start + i).padStart(6)}\t${cutLine(line)}`).join('\n');
  const last = start + window.lines.length - 1;
  const more = window.more
    ? `\n\n(Showing lines ${start}-${last}. The file has more lines: call Read with offset ${last + 1} to continue.)`
    : '';
  return toolResult(numbered + more);
}

function cutLine(line: string): string {
  if (line.length <= READ_MAX_LINE_CHARS) return line;
  return `${line.slice(0, READ_MAX_LINE_CHARS)}... [line truncated, ${line.length - READ_MAX_LINE_CHARS} more characters]`;
}

/**
 * Stream the file and keep only lines start..start+limit-1, so a huge log costs memory for the
 * window alone. Lines end at '\n' with a trailing '\r' dropped; a lone '\r' is not a line break,
 * as in `cat -n`.
 */
async function readLineWindow(
  file: string,
  start: number,
  limit: number,
  signal: AbortSignal,
): Promise<{ lines: string[]; more: boolean; linesSeen: number }> {
  const end = start + limit - 1;
  const lines: string[] = [];
  let lineNumber = 0;
  let carry = '';
  const keep = (line: string) => {
    lineNumber++;
    if (lineNumber >= start && lineNumber <= end) lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
  };

  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      if (signal.aborted) throw abortError();
      const parts = (carry + chunk).split('\n');
      carry = parts.pop() ?? '';
      for (const part of parts) keep(part);
      if (lineNumber > end) return { lines, more: true, linesSeen: lineNumber };
    }
  } finally {
    stream.destroy();
  }
  if (carry !== '') keep(carry);
  return { lines, more: lineNumber > end, linesSeen: lineNumber };
}
