import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { pathField, patternField } from './schema-parts';
import { lazySchema } from '../lazy-schema';

/** Files listed before the result is cut. */
export const GLOB_MAX_RESULTS = 100;

export const globInputSchema = lazySchema(() =>
  z.strictObject({
    pattern: patternField('The glob pattern to match files against, e.g. "**/*.ts" or "src/**/*.{js,jsx}"'),
    path: pathField(
      'The directory to search in, absolute or relative to the workspace root. Omit this field to search the workspace root; do not pass "undefined" or "null"',
    ).optional(),
  }),
);

export type GlobInput = z.infer<typeof globInputSchema>;

/** Glob: find files by name pattern (ripgrep's `--files --glob`). */
export const globTool: ToolDefinition<GlobInput> = {
  name: 'Glob',
  description: `- Fast file pattern matching tool that works with any codebase size
- Supports glob patterns like "**/*.js" or "src/**/*.ts"; a pattern without "/" (like "*.ts") matches file names at any depth
- Files ignored by .gitignore are not listed
- Returns matching file paths relative to the workspace root, sorted by modification time (oldest first), at most ${GLOB_MAX_RESULTS}; when more match, the oldest are kept
- Use this tool when you need to find files by name patterns
- You can call multiple tools in a single response. It is always better to speculatively perform multiple searches as a batch that are potentially useful`,
  inputSchema: globInputSchema,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
};
