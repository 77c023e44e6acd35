import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { pathField, textField } from './schema-parts';
import { lazySchema } from '../lazy-schema';

export const writeInputSchema = lazySchema(() =>
  z.strictObject({
    file_path: pathField('The path to the file to write: absolute, or relative to the workspace root'),
    content: textField('The content to write to the file'),
  }),
);

export type WriteInput = z.infer<typeof writeInputSchema>;

/** Write: create or overwrite a whole file. */
export const writeTool: ToolDefinition<WriteInput> = {
  name: 'Write',
  description: `Writes a file to the local filesystem.

Usage:
- This tool will overwrite the existing file if there is one at the provided path
- Missing parent directories are created
- The file_path parameter may be absolute or relative to the workspace root; files outside the workspace cannot be written
- ALWAYS prefer editing existing files in the codebase with the Edit tool. NEVER write new files unless explicitly required
- If this is an existing file, you MUST use the Read tool first to read its contents: this tool FAILS on an existing file that was not read, or that changed on disk since it was last read or written
- Creating a new file needs no prior Read
- NEVER proactively create documentation files (*.md) or README files. Only create documentation files if explicitly requested by the User`,
  inputSchema: writeInputSchema,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
};
