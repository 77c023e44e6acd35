import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { fileStateKey } from '../../shared/file-state';
import type { ToolOutcome } from '../../shared/tool-definition';
import { toolUseError } from '../../shared/tools/tool-use-error';
import { applyEdits, type ChangedSpan, type EditOperation } from './edit-apply';
import { BINARY_SNIFF_BYTES, describeFsError, looksBinary, toolError } from './fs-errors';
import { recordedState, staleReadError, stateOf } from './read-state';
import { contentHash, FileChangeNotRecordedError, replaceFile } from './replace-file';
import { fileDoesNotExist, similarNames } from './similar-files';
import type { ToolContext } from './tool-context';
import { openWorkspaceFile } from './workspace-open';
import { openWriteTarget, type WriteTarget } from './workspace-write';

/** Files above this size are refused: an edit holds the whole file in memory. */
const MAX_EDIT_BYTES = 64 * 1024 * 1024;

/** What a successful edit did, for the tool to word its answer. */
export interface EditDone {
  /** The file's path as the model gave it. */
  filePath: string;
  /** The path relative to the workspace. */
  shown: string;
  /** The file after the edits, with '\n' line ends. */
  text: string;
  changes: readonly ChangedSpan[];
  edits: number;
  replacements: number;
  /** True when the session has seen only part of the file (it read a range, never all of it). */
  partial: boolean;
}

/**
 * Edit and MultiEdit: check the session read the file and nothing changed it since, apply `edits`
 * in memory, and replace the file (atomically, keeping its mode) only if every edit applied. A
 * file that does not exist is created when the first edit's old_string is empty, as Claude Code
 * does (the read-before-write rule concerns files that exist). `describe(index)` names an edit in
 * an error ('' for Edit's only edit); `report` words the answer to a successful call. Returns that
 * answer and the new file state. Every error comes inside `<tool_use_error>`, as Claude Code's
 * Edit errors do.
 */
export async function editFile(
  filePath: string,
  edits: readonly EditOperation[],
  ctx: ToolContext,
  describe: (index: number) => string,
  report: (done: EditDone) => string,
): Promise<ToolOutcome> {
  const outcome = await editOrCreate(filePath, edits, ctx, describe, report);
  return outcome.isError ? { ...outcome, content: toolUseError(outcome.content) } : outcome;
}

async function editOrCreate(
  filePath: string,
  edits: readonly EditOperation[],
  ctx: ToolContext,
  describe: (index: number) => string,
  report: (done: EditDone) => string,
): Promise<ToolOutcome> {
  // Claude Code checks this before the file, so a no-op edit is named as such whatever the file.
  const noop = edits.findIndex((edit) => edit.old_string === edit.new_string);
  if (noop >= 0) {
    return toolError(
      `${describe(noop)}No changes to make: old_string and new_string are exactly the same.${unchanged(edits)}`,
    );
  }
  // Opened from a handle on the workspace, folder by folder; written through the folder's handle.
  const target = await openWriteTarget(ctx.workspace, filePath, { createFolders: false });
  if (!target.ok && target.code !== 'ENOENT') return toolError(target.error);
  if (!target.ok || !target.existing) {
    if (target.ok) await target.close();
    if (edits[0]?.old_string !== '') return missingFile(ctx, filePath, target.relative);
    return createFile(filePath, edits, ctx, describe, report);
  }
  try {
    return await editOpened(target, target.existing, filePath, edits, ctx, describe, report);
  } finally {
    await target.close();
  }
}

/**
 * A file created by edits whose first old_string is empty: the edits apply to an empty text, and
 * only then are missing folders made and the file written. No read is needed: there was nothing
 * to read, and the session knows every byte it wrote.
 */
async function createFile(
  filePath: string,
  edits: readonly EditOperation[],
  ctx: ToolContext,
  describe: (index: number) => string,
  report: (done: EditDone) => string,
): Promise<ToolOutcome> {
  const applied = applyEdits('', edits);
  if (!applied.ok) return toolError(`${describe(applied.index)}${applied.error}${unchanged(edits)}`);
  const target = await openWriteTarget(ctx.workspace, filePath, { createFolders: true });
  if (!target.ok) return toolError(target.error);
  try {
    // Created meanwhile (by a command still running, say): it is a file this session has not read.
    if (target.existing) return await editOpened(target, target.existing, filePath, edits, ctx, describe, report);
    return await writeEdited(target, filePath, applied, edits.length, ctx, report, {
      before: null,
      partial: false,
      data: applied.content,
    });
  } finally {
    await target.close();
  }
}

/** Claude Code's answer for a missing file, with the names in its folder it may have meant. */
async function missingFile(ctx: ToolContext, filePath: string, shown: string): Promise<ToolOutcome> {
  const listed = await openWorkspaceFile(ctx.workspace, filePath, { listSiblingsIfMissing: true });
  if (listed.ok) await listed.handle.close();
  const suggestions = listed.ok ? [] : similarNames(listed.siblings ?? [], path.basename(shown), path.dirname(shown));
  return toolError(fileDoesNotExist(ctx.workspace, suggestions));
}

async function editOpened(
  target: WriteTarget,
  existing: FileHandle,
  filePath: string,
  edits: readonly EditOperation[],
  ctx: ToolContext,
  describe: (index: number) => string,
  report: (done: EditDone) => string,
): Promise<ToolOutcome> {
  const shown = target.relative;
  const failed = (index: number, error: string) => toolError(`${describe(index)}${error}${unchanged(edits)}`);

  const key = fileStateKey(ctx.workspace, filePath);
  const recorded = recordedState(ctx.readState, key);
  let original: string;
  let before: string;
  let info;
  try {
    info = await existing.stat();
    if (info.isDirectory()) return toolError(`${shown} is a directory, not a file.`);
    if (!info.isFile()) return toolError(`${shown} is not a regular file.`);
    const stale = staleReadError(recorded, info);
    if (stale) return toolError(stale);
    if (info.size > MAX_EDIT_BYTES) {
      return toolError(`${shown} is too large to edit (${info.size} bytes; the limit is ${MAX_EDIT_BYTES}).`);
    }
    const bytes = await existing.readFile();
    if (looksBinary(bytes.subarray(0, BINARY_SNIFF_BYTES))) {
      return toolError(`Cannot edit ${shown}: it is a binary file (it contains NUL bytes).`);
    }
    original = bytes.toString('utf8');
    before = contentHash(bytes);
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }

  // The model writes '\n'; a file that consistently uses CRLF is edited in LF form and converted
  // back, so its line endings survive. Mixed files are matched byte for byte.
  const crlf = original.includes('\r\n') && !/(^|[^\r])\n/.test(original);
  const toLf = (text: string) => (crlf ? text.replace(/\r\n/g, '\n') : text);
  const applied = applyEdits(
    toLf(original),
    edits.map((edit) => ({ ...edit, old_string: toLf(edit.old_string), new_string: toLf(edit.new_string) })),
  );
  if (!applied.ok) return failed(applied.index, applied.error);

  // An edit does not show the model the rest of the file, so a partial read stays partial.
  return writeEdited(target, filePath, applied, edits.length, ctx, report, {
    before,
    partial: recorded?.partial ?? false,
    data: crlf ? applied.content.replace(/\n/g, '\r\n') : applied.content,
    existing: info,
  });
}

/**
 * Word the answer to edits that applied, write `data` as the file (recording the change first),
 * and return the answer with the file's new state.
 */
async function writeEdited(
  target: WriteTarget,
  filePath: string,
  applied: { content: string; changes: readonly ChangedSpan[]; replacements: number },
  edits: number,
  ctx: ToolContext,
  report: (done: EditDone) => string,
  write: { before: string | null; partial: boolean; data: string; existing?: Stats },
): Promise<ToolOutcome> {
  const shown = target.relative;
  const key = fileStateKey(ctx.workspace, filePath);
  const { partial } = write;
  const content = report({
    filePath,
    shown,
    text: applied.content,
    changes: applied.changes,
    edits,
    replacements: applied.replacements,
    partial,
  });
  let written;
  try {
    written = await replaceFile(
      ctx,
      { path: target.absolute, before: write.before, content, stateKey: key, partial },
      write.data,
      {
        folder: target.folder,
        name: target.name,
        ...(write.existing ? { existing: write.existing } : {}),
      },
    );
  } catch (error) {
    if (error instanceof FileChangeNotRecordedError) throw error;
    return toolError(describeFsError(error, shown));
  }
  return { content, isError: false, fileStates: [{ key, state: stateOf(written, partial) }] };
}

/** MultiEdit is all or none; say so, since the model may assume the earlier edits landed. */
function unchanged(edits: readonly EditOperation[]): string {
  return edits.length > 1 ? '\nNo edit was applied: the file is unchanged.' : '';
}
