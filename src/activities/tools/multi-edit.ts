import type { ToolOutcome } from '../../shared/tool-definition';
import type { MultiEditInput } from '../../shared/tools/multi-edit';
import { editFile, type EditDone } from './edit-file';
import { editSnippet } from './edit-snippet';
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
    multiEditDone,
  );
}

/**
 * The counts and a `cat -n` snippet of the changed regions: several edits may land far apart, and
 * the model sees where each one went.
 */
function multiEditDone(done: EditDone): string {
  const snippet = editSnippet(done.text, done.changes);
  const counts = summary(done.edits, done.replacements);
  return snippet === ''
    ? `The file ${done.shown} has been updated${counts}. It is now empty.`
    : `The file ${done.shown} has been updated${counts}. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${snippet}`;
}

/** '' for one edit making one replacement, else the counts. */
function summary(editCount: number, replacements: number): string {
  if (editCount === 1) return replacements === 1 ? '' : ` (${replacements} replacements)`;
  return ` (${editCount} edits, ${replacements} replacement${replacements === 1 ? '' : 's'})`;
}
