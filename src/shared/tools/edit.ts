import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { flagField, pathField, textField } from './schema-parts';
import { lazySchema } from '../lazy-schema';

export const editInputSchema = lazySchema(() =>
  z.strictObject({
    file_path: pathField('The path to the file to modify: absolute, or relative to the workspace root'),
    old_string: textField('The text to replace'),
    new_string: textField('The text to replace it with (must be different from old_string)'),
    replace_all: flagField('Replace all occurrences of old_string (default false)').optional(),
  }),
);

export type EditInput = z.infer<typeof editInputSchema>;

/** Edit: exact string replacement in one file. */
export const editTool: ToolDefinition<EditInput> = {
  name: 'Edit',
  description: `Performs exact string replacements in files.

Usage:
- You must use the Read tool at least once on the file before editing it: the edit FAILS if the file was not read, or if it changed on disk since it was last read or written (then Read it again)
- When editing text from Read tool output, preserve the exact indentation (tabs/spaces) as it appears AFTER the line number prefix. The line number prefix format is: spaces + line number + tab. Everything after that tab is the actual file content to match. Never include any part of the line number prefix in old_string or new_string
- Files with Windows (CRLF) line endings keep them; write old_string and new_string with plain newlines
- The edit will FAIL if old_string is not found in the file
- A successful edit leaves the file's state current in your context: there is no need to Read the file back to check the edit, or before editing it again
- The edit will FAIL if old_string is not unique in the file. Either provide a larger string with more surrounding context to make it unique or use replace_all to change every instance of old_string
- Use replace_all for replacing and renaming strings across the file, for instance renaming a variable
- An empty old_string creates a file that does not exist yet, with new_string as its content (no Read needed); for any other old_string the file must exist
- ALWAYS prefer editing existing files in the codebase. NEVER write new files unless explicitly required`,
  inputSchema: editInputSchema,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
};
