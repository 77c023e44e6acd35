import { mkdir, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { fileStateKey } from '../../shared/file-state';
import type { ToolOutcome } from '../../shared/tool-definition';
import type { WriteInput } from '../../shared/tools/write';
import { describeFsError, toolError } from './fs-errors';
import { recordedState, staleReadError, updateAfterWrite } from './read-state';
import { FileChangeNotRecordedError, fileHash, replaceFile } from './replace-file';
import type { ToolContext } from './tool-context';
import { resolveWorkspacePath } from './workspace-path';

/**
 * Create or overwrite a file, creating missing parent directories. An existing file must have been
 * read by the session and be unchanged since; a new file needs no read. The file is replaced
 * atomically (`replaceFile`), keeping its mode. Returns the new file state so an Edit may follow
 * without another Read.
 */
export async function runWrite(input: WriteInput, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await resolveWorkspacePath(ctx.workspace, input.file_path);
  if (!target.ok) return toolError(target.error);
  const shown = target.relative;
  const key = fileStateKey(ctx.workspace, input.file_path);

  let existed = false;
  try {
    const info = await stat(target.absolute);
    if (info.isDirectory()) return toolError(`${shown} is a directory; give the path of a file to write.`);
    if (!info.isFile()) return toolError(`${shown} exists and is not a regular file.`);
    const stale = staleReadError(recordedState(ctx.readState, key), info);
    if (stale) return toolError(stale);
    existed = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return toolError(describeFsError(error, shown));
  }

  const lines = input.content === '' ? 0 : input.content.split('\n').length - (input.content.endsWith('\n') ? 1 : 0);
  const size = `${lines} line${lines === 1 ? '' : 's'}`;
  const content = existed
    ? `The file ${shown} has been updated (${size}).`
    : `File created successfully at: ${shown} (${size}).`;
  let update;
  try {
    await mkdir(path.dirname(target.absolute), { recursive: true });
    const before = existed ? await fileHash(target.absolute) : null;
    await replaceFile(ctx, { path: target.absolute, before, content, stateKey: key, partial: false }, input.content);
    // The session wrote every byte, so it knows the whole file.
    update = await updateAfterWrite(key, target.absolute, false);
  } catch (error) {
    if (error instanceof FileChangeNotRecordedError) throw error;
    return toolError(describeFsError(error, shown));
  }
  return { content, isError: false, fileStates: [update] };
}
