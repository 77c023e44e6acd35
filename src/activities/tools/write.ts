import { mkdir, stat, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { fileStateKey } from '../../shared/file-state';
import type { ToolOutcome } from '../../shared/tool-definition';
import type { WriteInput } from '../../shared/tools/write';
import { describeFsError, toolError } from './fs-errors';
import { recordedState, staleReadError, updateAfterWrite } from './read-state';
import type { ToolContext } from './tool-context';
import { resolveWorkspacePath } from './workspace-path';

/**
 * Create or overwrite a file, creating missing parent directories. An existing file must have been
 * read by the session and be unchanged since; a new file needs no read. Returns the new file state
 * so an Edit may follow without another Read.
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

  let update;
  try {
    await mkdir(path.dirname(target.absolute), { recursive: true });
    await writeFile(target.absolute, input.content, 'utf8');
    // The session wrote every byte, so it knows the whole file.
    update = await updateAfterWrite(key, target.absolute, false);
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }
  const lines = input.content === '' ? 0 : input.content.split('\n').length - (input.content.endsWith('\n') ? 1 : 0);
  const size = `${lines} line${lines === 1 ? '' : 's'}`;
  return {
    content: existed
      ? `The file ${shown} has been updated (${size}).`
      : `File created successfully at: ${shown} (${size}).`,
    isError: false,
    fileStates: [update],
  };
}
