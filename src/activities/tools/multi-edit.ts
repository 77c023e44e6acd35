import type { ToolOutcome } from '../../shared/tool-definition';
import type { MultiEditInput } from '../../shared/tools/multi-edit';
import { editFile } from './edit-file';
import type { ToolContext } from './tool-context';

/** Apply several edits to one file in order, all or none. */
export function runMultiEdit(input: MultiEditInput, ctx: ToolContext): Promise<ToolOutcome> {
  const total = input.edits.length;
  // Both the 1-based count a person would say and the index into `edits` the model sent.
  return editFile(
    input.file_path,
    input.edits,
    ctx,
    (index) => `Edit ${index + 1} of ${total} (edits[${index}]) failed: `,
  );
}
