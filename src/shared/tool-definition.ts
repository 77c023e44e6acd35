import type { z } from 'zod';
import type { FileStateUpdate } from './file-state';

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
  content: string;
  isError: boolean;
  /**
   * What the call changed in the session's knowledge of files (Read, Write, Edit, MultiEdit); the
   * workflow merges these into its state so the next Write or Edit can check them.
   */
  fileStates?: FileStateUpdate[];
}

/**
 * Classify a raw tool_use input the way the seed's StreamingToolExecutor does: parse it, ask the
 * tool, and treat a parse failure or a throwing predicate as "not concurrency-safe".
 */
export function classifyToolUse(
  definition: ToolDefinition | undefined,
  input: unknown,
): { concurrencySafe: boolean; readOnly: boolean } {
  if (!definition) return { concurrencySafe: false, readOnly: false };
  const parsed = definition.inputSchema.safeParse(input);
  if (!parsed.success) return { concurrencySafe: false, readOnly: false };
  try {
    return {
      concurrencySafe: Boolean(definition.isConcurrencySafe(parsed.data)),
      readOnly: Boolean(definition.isReadOnly(parsed.data)),
    };
  } catch {
    return { concurrencySafe: false, readOnly: false };
  }
}
