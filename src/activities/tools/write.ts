import { fileStateKey } from '../../shared/file-state';
import type { ToolOutcome } from '../../shared/tool-definition';
import { toolUseError } from '../../shared/tools/tool-use-error';
import type { WriteInput } from '../../shared/tools/write';
import { describeFsError, toolError } from './fs-errors';
import { FILE_STATE_CURRENT, recordedState, staleReadError, stateOf } from './read-state';
import { contentHash, FileChangeNotRecordedError, replaceFile } from './replace-file';
import type { ToolContext } from './tool-context';
import { openWriteTarget, type WriteTarget } from './workspace-write';

/**
 * Create or overwrite a file, creating missing parent directories. An existing file must have been
 * read by the session and be unchanged since; a new file needs no read. The file is replaced
 * atomically (`replaceFile`), keeping its mode. Returns the new file state so an Edit may follow
 * without another Read. A refusal before anything is written (the path, a folder, a file not read or
 * changed since) comes inside `<tool_use_error>`, as Claude Code's Write sends it; a failure of the
 * write itself does not.
 */
export async function runWrite(input: WriteInput, ctx: ToolContext): Promise<ToolOutcome> {
  // Opened from a handle on the workspace, folder by folder; written through the folder's handle.
  const target = await openWriteTarget(ctx.workspace, input.file_path, { createFolders: true });
  if (!target.ok) return refused(target.error);
  try {
    return await writeTo(target, input, ctx);
  } finally {
    await target.close();
  }
}

async function writeTo(target: WriteTarget, input: WriteInput, ctx: ToolContext): Promise<ToolOutcome> {
  const shown = target.relative;
  const key = fileStateKey(ctx.workspace, input.file_path);
  let info;
  let before: string | null = null;
  if (target.existing) {
    try {
      info = await target.existing.stat();
      if (info.isDirectory()) {
        return refused(
          `${shown} is a directory, not a file. To create a file inside it, include the file name in file_path.`,
        );
      }
      if (!info.isFile()) return refused(`${shown} exists and is not a regular file.`);
      const stale = staleReadError(recordedState(ctx.readState, key), info);
      if (stale) return refused(stale);
      before = contentHash(await target.existing.readFile());
    } catch (error) {
      return toolError(describeFsError(error, shown));
    }
  }

  // Claude Code's words, with the path as the model gave it.
  const content = info
    ? `The file ${input.file_path} has been updated successfully.${FILE_STATE_CURRENT}`
    : `File created successfully at: ${input.file_path}${FILE_STATE_CURRENT}`;
  let written;
  try {
    written = await replaceFile(
      ctx,
      { path: target.absolute, before, content, stateKey: key, partial: false },
      input.content,
      { folder: target.folder, name: target.name, ...(info ? { existing: info } : {}) },
    );
  } catch (error) {
    if (error instanceof FileChangeNotRecordedError) throw error;
    return toolError(describeFsError(error, shown));
  }
  // The session wrote every byte, so it knows the whole file.
  return { content, isError: false, fileStates: [{ key, state: stateOf(written, false) }] };
}

/** A call refused before anything was written. */
function refused(message: string): ToolOutcome {
  return toolError(toolUseError(message));
}
