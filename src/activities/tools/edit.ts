import type { ToolOutcome } from '../../shared/tool-definition';
import type { EditInput } from '../../shared/tools/edit';
import { editFile } from './edit-file';
import type { ToolContext } from './tool-context';

/** Replace old_string by new_string in one file: exactly once, or everywhere with replace_all. */
export function runEdit(input: EditInput, ctx: ToolContext): Promise<ToolOutcome> {
  const { file_path: filePath, ...edit } = input;
  return editFile(filePath, [edit], ctx, () => '');
}
