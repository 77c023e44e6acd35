import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { countField, pathField } from './schema-parts';
import { lazySchema } from '../lazy-schema';

/** Lines shown when no limit is given. */
export const READ_DEFAULT_LIMIT = 2000;
/** Longer lines are cut so one minified file cannot flood the context. */
export const READ_MAX_LINE_CHARS = 2000;

export const readInputSchema = lazySchema(() =>
  z.strictObject({
    file_path: pathField('The path to the file to read: absolute, or relative to the workspace root'),
    offset: countField(
      'The line number to start reading from (1-based). Only provide if the file is too large to read at once',
    ).optional(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(1_000_000_000)
      .describe('The number of lines to read. Only provide if the file is too large to read at once')
      .optional(),
  }),
);

export type ReadInput = z.infer<typeof readInputSchema>;

/** Read: show a text file with `cat -n` style line numbers. */
export const readTool: ToolDefinition<ReadInput> = {
  name: 'Read',
  description: `Reads a file from the local filesystem.

Usage:
- The file_path parameter may be absolute or relative to the workspace root; files outside the workspace cannot be read
- By default, it reads up to ${READ_DEFAULT_LIMIT} lines starting from the beginning of the file
- You can optionally specify a line offset and limit (especially handy for long files), but it's recommended to read the whole file by not providing these parameters
- Any lines longer than ${READ_MAX_LINE_CHARS} characters will be truncated
- Results are returned using cat -n format, with line numbers starting at 1
- This tool reads text files only; binary files are refused. It cannot read directories: use Bash with ls, or Glob, for that
- You can call multiple tools in a single response. It is always better to speculatively read multiple files as a batch that are potentially useful
- If you read a file that exists but has empty contents you will receive a warning in place of file contents`,
  inputSchema: readInputSchema,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
};
