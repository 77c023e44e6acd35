import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { flagField, pathField, textField } from './schema-parts';
import { builtSchema, lazySchema } from '../lazy-schema';

/** Most edits accepted in one MultiEdit call; more is a rewrite, better done with Write. */
export const MULTI_EDIT_MAX_EDITS = 1000;

const singleEdit = lazySchema(() =>
  z
    .strictObject({
      old_string: textField('The text to replace'),
      new_string: textField('The text to replace it with (must be different from old_string)'),
      replace_all: flagField('Replace all occurrences of old_string (default false)').optional(),
    })
    .describe('One exact string replacement'),
);

export const multiEditInputSchema = lazySchema(() =>
  z.strictObject({
    file_path: pathField('The path to the file to modify: absolute, or relative to the workspace root'),
    edits: z
      .array(builtSchema(singleEdit))
      .min(1, 'must contain at least one edit')
      .max(MULTI_EDIT_MAX_EDITS)
      .describe('Edits to apply in order, each to the result of the previous one'),
  }),
);

export type MultiEditInput = z.infer<typeof multiEditInputSchema>;

/** MultiEdit: several exact string replacements in one file, all or none. */
export const multiEditTool: ToolDefinition<MultiEditInput> = {
  name: 'MultiEdit',
  description: `Makes several edits to a single file in one operation. Prefer it over the Edit tool when you need several changes to the same file.

Usage:
- You must use the Read tool at least once on the file before editing it: the call FAILS if the file was not read, or if it changed on disk since it was last read or written (then Read it again)
- Each edit has the same rules and fields as the Edit tool: old_string (exact text to replace, including whitespace and indentation, without the Read line-number prefix), new_string, and optional replace_all
- Edits are applied in sequence, in the order given: each one works on the file as changed by the previous edits, so plan them so an earlier edit does not change the text a later one looks for
- The operation is atomic: if any edit fails (old_string not found, not unique without replace_all, or identical to new_string), none is applied and the file is left unchanged; the error names the failing edit
- Files with Windows (CRLF) line endings keep them; write old_string and new_string with plain newlines
- To create a file that does not exist yet, give it as the first edit with an empty old_string and the content as new_string; otherwise the file must exist
- The result shows a \`cat -n\` snippet of the edited regions`,
  inputSchema: multiEditInputSchema,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
};
