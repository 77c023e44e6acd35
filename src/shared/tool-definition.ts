import type { z } from 'zod';
import type { FileStateUpdate } from './file-state';
import type { ToolResultContentBlock } from './messages';

/**
 * What the workflow and the model need to know about a tool: its name, its input schema, and
 * whether a given input may run beside other tools. Pure data and pure functions only, so the
 * workflow bundle can import it; the code that runs a tool lives in `src/activities/tools`.
 */
export interface ToolDefinition<Input = unknown> {
  readonly name: string;
  /** Shown to the model. */
  readonly description: string;
  readonly inputSchema: z.ZodType<Input>;
  /** True when this input may run in parallel with other concurrency-safe calls. */
  isConcurrencySafe(input: Input): boolean;
  /** True when this input changes nothing outside the process (used for crash-retry safety). */
  isReadOnly(input: Input): boolean;
}

/** The outcome of one tool call, as the model will see it. A tool failure is data, not a throw. */
export interface ToolOutcome {
  /** The result as text; when `blocks` is set, a short description of them (for logs and previews). */
  content: string;
  isError: boolean;
  /** Set when the result is more than text (an image, a PDF, a notebook with plots): sent instead of `content`. */
  blocks?: ToolResultContentBlock[];
  /**
   * The whole output `content` abbreviates (Bash output over its inline limit): stored in the
   * workspace's data folder by `storeLargeResult`, which then puts a preview and its path in
   * `content`. Never sent to the model or journaled as it is.
   */
  fullOutput?: string;
  /**
   * What the call changed in the session's knowledge of files (Read, Write, Edit, MultiEdit); the
   * workflow merges these into its state so the next Write or Edit can check them.
   */
  fileStates?: FileStateUpdate[];
}

/**
 * Input fields the tools did not take before they took Claude Code's whole input set; a call
 * with one failed validation then.
 */
const FIELDS_ADDED_LATER: Readonly<Record<string, readonly string[]>> = {
  Read: ['pages', 'allow_large'],
  Grep: ['-o', 'context'],
  Bash: ['run_in_background', 'dangerouslyDisableSandbox'],
};

/**
 * True when `input` would have failed validation before numbers and flags written as strings
 * were taken and Claude Code's other fields accepted: a field the parse changed ("3" to 3), or
 * a field added since. Workflows started before that change classify such a call as they did.
 */
function failedBeforeCoercion(name: string, input: unknown, parsed: unknown): boolean {
  if (typeof input !== 'object' || input === null || typeof parsed !== 'object' || parsed === null) return false;
  const raw = input as Record<string, unknown>;
  const added = FIELDS_ADDED_LATER[name] ?? [];
  return Object.keys(raw).some((key) => {
    const value = raw[key];
    if (added.includes(key)) return true;
    const after = (parsed as Record<string, unknown>)[key];
    return (typeof value !== 'object' || value === null) && value !== after;
  });
}

/**
 * Classify a raw tool_use input the way the seed's StreamingToolExecutor does: parse it, ask the
 * tool, and treat a parse failure or a throwing predicate as "not concurrency-safe". With
 * `legacyInputs`, an input that validated only since strings are coerced counts as a failure, as
 * it did when a replayed workflow first ran.
 */
export function classifyToolUse(
  definition: ToolDefinition | undefined,
  input: unknown,
  options: { legacyInputs?: boolean } = {},
): { concurrencySafe: boolean; readOnly: boolean } {
  if (!definition) return { concurrencySafe: false, readOnly: false };
  const parsed = definition.inputSchema.safeParse(input);
  if (!parsed.success) return { concurrencySafe: false, readOnly: false };
  if (options.legacyInputs && failedBeforeCoercion(definition.name, input, parsed.data)) {
    return { concurrencySafe: false, readOnly: false };
  }
  try {
    return {
      concurrencySafe: Boolean(definition.isConcurrencySafe(parsed.data)),
      readOnly: Boolean(definition.isReadOnly(parsed.data)),
    };
  } catch {
    return { concurrencySafe: false, readOnly: false };
  }
}
