import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { countField, flagField, integerField, pathField } from './schema-parts';
import { lazySchema } from '../lazy-schema';
import { parsePageRange, READ_MAX_PDF_PAGES, READ_MAX_PDF_PAGES_WHOLE } from './read-pages';

/** A text file larger than this (bytes) is refused unless offset, limit or allow_large is given. */
export const READ_MAX_FILE_BYTES = 256 * 1024;
/** Estimated tokens one Read shows at most; a longer file or range is shown a page at a time. */
export const READ_MAX_TOKENS = 25_000;
/** The same with allow_large: as much as still leaves most of a 200k-token window free. */
export const READ_ALLOW_LARGE_MAX_TOKENS = 100_000;

export const readInputSchema = lazySchema(() =>
  z.strictObject({
    file_path: pathField('The path to the file to read: absolute, or relative to the workspace root'),
    offset: countField(
      'The line number to start reading from (1-based). Only provide if the file is too large to read at once',
    ).optional(),
    limit: integerField(
      'The number of lines to read. Only provide if the file is too large to read at once',
      1,
      1_000_000_000,
    ).optional(),
    pages: z
      .string()
      .max(100)
      .refine((value) => parsePageRange(value) !== undefined, {
        message: `must be a page or a page range such as "3" or "1-5" (pages count from 1, at most ${READ_MAX_PDF_PAGES} pages per request)`,
      })
      .describe(
        `Page range for PDF files (e.g., "1-5", "3", "10-20"). Only applicable to PDF files. Maximum ${READ_MAX_PDF_PAGES} pages per request.`,
      )
      .optional(),
    allow_large: flagField(
      'Set to true to read a text file, or a line range of one, that is over the usual size limits, up to what still fits in your context. Only use this when you genuinely need all of it or the user asked for the whole file; otherwise read it in parts with offset and limit, or search it.',
    ).optional(),
  }),
);

export type ReadInput = z.infer<typeof readInputSchema>;

/** Read: show a text file with `cat -n` style line numbers. */
export const readTool: ToolDefinition<ReadInput> = {
  name: 'Read',
  description: `Reads a file from the local filesystem.

Usage:
- The file_path parameter may be absolute or relative to the workspace root; files outside the workspace cannot be read
- By default, it reads the whole file from the beginning. A file over ${READ_MAX_FILE_BYTES / 1024} KB must be read in parts with offset and limit (or with allow_large); a result over about ${READ_MAX_TOKENS.toLocaleString('en-US')} tokens is shown a page at a time, with the offset of the next page
- You can optionally specify a line offset and limit (especially handy for long files), but it's recommended to read the whole file by not providing these parameters
- Results are returned using cat -n format, with line numbers starting at 1
- This tool can read images (PNG, JPG, GIF, WebP): their contents are presented visually
- This tool can read PDF files (.pdf). For large PDFs (more than ${READ_MAX_PDF_PAGES_WHOLE} pages), you MUST provide the pages parameter to read specific page ranges (e.g., pages: "1-5"). Reading a large PDF without the pages parameter will fail. Maximum ${READ_MAX_PDF_PAGES} pages per request
- This tool can read Jupyter notebooks (.ipynb files) and returns all cells with their outputs
- Other binary files (archives, executables, media) are refused. It cannot read directories: use Bash with ls, or Glob, for that
- You can call multiple tools in a single response. It is always better to speculatively read multiple files as a batch that are potentially useful
- If you read a file that exists but has empty contents you will receive a warning in place of file contents`,
  inputSchema: readInputSchema,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
};
