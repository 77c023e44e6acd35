import { mkdir, stat, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { ToolOutcome } from '../../shared/tool-definition';
import type { WriteInput } from '../../shared/tools/write';
import { describeFsError, toolError, toolResult } from './fs-errors';
import type { ToolContext } from './tool-context';
import { resolveWorkspacePath } from './workspace-path';

/** Create or overwrite a file, creating missing parent directories. */
export async function runWrite(input: WriteInput, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await resolveWorkspacePath(ctx.workspace, input.file_path);
  if (!target.ok) return toolError(target.error);
  const shown = target.relative;

  let existed = false;
  try {
    const info = await stat(target.absolute);
    if (info.isDirectory()) return toolError(`${shown} is a directory; give the path of a file to write.`);
    if (!info.isFile()) return toolError(`${shown} exists and is not a regular file.`);
    existed = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return toolError(describeFsError(error, shown));
  }

  try {
    await mkdir(path.dirname(target.absolute), { recursive: true });
    await writeFile(target.absolute, input.content, 'utf8');
  } catch (error) {
    return toolError(describeFsError(error, shown));
  }
  const lines = input.content === '' ? 0 : input.content.split('\n').length - (input.content.endsWith('\n') ? 1 : 0);
  const size = `${lines} line${lines === 1 ? '' : 's'}`;
  return toolResult(
    existed ? `The file ${shown} has been updated (${size}).` : `File created successfully at: ${shown} (${size}).`,
  );
}
