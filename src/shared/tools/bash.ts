import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { isReadOnlyBashCommand } from '../shell';
import { flagField, integerField, integerFromText, patternField, textField } from './schema-parts';
import { lazySchema } from '../lazy-schema';

export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Output beyond this many characters is saved to a file and previewed (cut, with a notice, for a failed command). */
export const BASH_MAX_OUTPUT_CHARS = 30_000;

export const bashInputSchema = lazySchema(() =>
  z.strictObject({
    command: patternField('The command to execute', 1_000_000),
    timeout: integerField(
      `Optional timeout in milliseconds (max ${BASH_MAX_TIMEOUT_MS})`,
      1,
      BASH_MAX_TIMEOUT_MS,
    ).optional(),
    description: textField(
      'Clear, concise description of what this command does in 5-10 words, in active voice. Examples: "List files in current directory", "Install package dependencies"',
      1000,
    ).optional(),
    // The job runs a call with run_in_background true in the background (tool-gate.ts) and hands
    // the tool the call without it; only jobs started before background commands send it here.
    run_in_background: flagField(
      'Set to true to run this command in the background. You get its ID and the file its output goes to at once, and are notified when it ends; TaskStop stops it.',
    )
      .refine((value) => value !== true, {
        message: `background commands are not supported by this job (it was started by an older version): run the command in the foreground, with a timeout of up to ${BASH_MAX_TIMEOUT_MS} ms`,
      })
      .optional(),
    dangerouslyDisableSandbox: flagField(
      "Must be false or omitted: whether commands run in a sandbox is the job's setting, not the command's.",
    )
      .refine((value) => value !== true, {
        message:
          "the sandbox cannot be turned off by a command: it is the job's setting. Run the command as it is, or tell the user it needs to run without the sandbox",
      })
      .optional(),
  }),
);

export type BashInput = z.infer<typeof bashInputSchema>;

/**
 * A Bash input with a timeout above BASH_MAX_TIMEOUT_MS lowered to it, as Claude Code does, so the
 * call runs instead of failing validation. Applied where the call runs, before the schema: the
 * workflow classifies the input as given (a call with such a timeout runs alone), as it did when
 * any recorded history ran.
 */
export function withTimeoutClamped(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || !('timeout' in input)) return input;
  const timeout = integerFromText(input.timeout);
  if (typeof timeout !== 'number' || !(timeout > BASH_MAX_TIMEOUT_MS)) return input;
  return { ...input, timeout: BASH_MAX_TIMEOUT_MS };
}

/** Bash: run a shell command in the workspace. */
export const bashTool: ToolDefinition<BashInput> = {
  name: 'Bash',
  description: `Executes a given bash command with an optional timeout and returns its combined stdout and stderr.

Usage:
- The command runs with \`bash -c\` in the workspace root; each call starts a fresh shell, so \`cd\` and exported variables do not carry over to the next call. Use absolute paths or chain commands with &&
- Always quote file paths that contain spaces with double quotes
- You can specify an optional timeout in milliseconds (up to ${BASH_MAX_TIMEOUT_MS}ms / ${BASH_MAX_TIMEOUT_MS / 60_000} minutes; a longer one is lowered to that). If not specified, commands time out after ${BASH_DEFAULT_TIMEOUT_MS}ms (${BASH_DEFAULT_TIMEOUT_MS / 60_000} minutes); on timeout the command and every process it started are killed
- If the output exceeds ${BASH_MAX_OUTPUT_CHARS} characters, the whole output is saved to a file under .durable-agent/tool-results/ and you get a 2KB preview and the file's path: read it with Read (offset and limit) or search it with Grep. A failed command's output is cut at ${BASH_MAX_OUTPUT_CHARS} characters instead
- A non-zero exit code is reported as an error together with the output
- Avoid using Bash for find, grep, cat, head, tail, sed, awk or echo when a dedicated tool fits: use Glob to find files, Grep to search contents, Read to read files, Edit to edit files and Write to write files
- Interactive commands are not supported (stdin is closed)`,
  inputSchema: bashInputSchema,
  isConcurrencySafe: (input) => isReadOnlyBashCommand(input.command),
  isReadOnly: (input) => isReadOnlyBashCommand(input.command),
};
