import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { countField, flagField, pathField, patternField } from './schema-parts';
import { lazySchema } from '../lazy-schema';

/** Lines or entries returned when head_limit is not given. */
export const GREP_DEFAULT_HEAD_LIMIT = 250;

const contentOnly = 'Requires output_mode: "content", ignored otherwise.';

export const grepInputSchema = lazySchema(() =>
  z.strictObject({
    pattern: patternField('The regular expression pattern to search for in file contents (ripgrep syntax)'),
    path: pathField(
      'File or directory to search in (rg PATH), absolute or relative to the workspace root. Defaults to the workspace root',
    ).optional(),
    glob: patternField('Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob').optional(),
    type: patternField(
      'File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than glob for standard file types.',
      100,
    ).optional(),
    output_mode: z
      .enum(['content', 'files_with_matches', 'count'])
      .describe(
        'Output mode: "content" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), "files_with_matches" shows file paths (supports head_limit), "count" shows match counts (supports head_limit). Defaults to "files_with_matches".',
      )
      .optional(),
    '-A': countField(`Number of lines to show after each match (rg -A). ${contentOnly}`, 10_000).optional(),
    '-B': countField(`Number of lines to show before each match (rg -B). ${contentOnly}`, 10_000).optional(),
    '-C': countField('Alias for context.', 10_000).optional(),
    context: countField(
      `Number of lines to show before and after each match (rg -C). ${contentOnly} Takes precedence over -C.`,
      10_000,
    ).optional(),
    '-n': flagField(`Show line numbers in output (rg -n). ${contentOnly} Defaults to true.`).optional(),
    '-i': flagField('Case insensitive search (rg -i)').optional(),
    '-o': flagField(
      `Print only the matched (non-empty) parts of each matching line, one match per output line (rg -o / --only-matching). ${contentOnly} Defaults to false.`,
    ).optional(),
    head_limit: countField(
      `Limit output to first N lines/entries, equivalent to "| head -N". Works across all output modes. Defaults to ${GREP_DEFAULT_HEAD_LIMIT}; pass 0 for unlimited.`,
    ).optional(),
    offset: countField(
      'Skip first N lines/entries before applying head_limit, equivalent to "| tail -n +N | head -N". Defaults to 0.',
    ).optional(),
    multiline: flagField(
      'Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false.',
    ).optional(),
  }),
);

export type GrepInput = z.infer<typeof grepInputSchema>;

/** Grep: content search with ripgrep. */
export const grepTool: ToolDefinition<GrepInput> = {
  name: 'Grep',
  description: `A powerful search tool built on ripgrep

Usage:
- ALWAYS use Grep for search tasks. NEVER invoke \`grep\` or \`rg\` as a Bash command
- Supports full regex syntax (e.g., "log.*Error", "function\\s+\\w+")
- Filter files with glob parameter (e.g., "*.js", "**/*.tsx") or type parameter (e.g., "js", "py", "rust")
- Output modes: "content" shows matching lines, "files_with_matches" shows only file paths (default), "count" shows match counts
- Pattern syntax: uses ripgrep (not grep) - literal braces need escaping (use \`interface\\{\\}\` to find \`interface{}\` in Go code)
- Multiline matching: by default patterns match within single lines only. For cross-line patterns like \`struct \\{[\\s\\S]*?field\`, use \`multiline: true\`
- Files ignored by .gitignore are not searched; paths are shown relative to the workspace root`,
  inputSchema: grepInputSchema,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
};
