import type { ToolOutcome } from '../../shared/tool-definition';
import type { EditInput } from '../../shared/tools/edit';
import { editFile, type EditDone } from './edit-file';
import { FILE_STATE_CURRENT } from './read-state';
import type { ToolContext } from './tool-context';

/** Replace old_string by new_string in one file: exactly once, or everywhere with replace_all. */
export function runEdit(input: EditInput, ctx: ToolContext): Promise<ToolOutcome> {
  const { file_path: filePath, ...edit } = input;
  return editFile(
    filePath,
    [edit],
    ctx,
    () => '',
    (done) => editDone(done, edit.replace_all === true),
  );
}

/**
 * Claude Code's answer, with the path as the model gave it. After a partial read the model has not
 * seen the whole file, so it is not told the file is in its context.
 */
function editDone(done: EditDone, replaceAll: boolean): string {
  const state = done.partial ? '' : FILE_STATE_CURRENT;
  return replaceAll
    ? `The file ${done.filePath} has been updated. All occurrences were successfully replaced.${state}`
    : `The file ${done.filePath} has been updated successfully.${state}`;
}
