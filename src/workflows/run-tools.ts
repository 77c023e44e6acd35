import { CancellationScope, isCancellation, patched } from '@temporalio/workflow';
import type { ToolUseBlock } from '../shared/messages';
import { classifyToolUse } from '../shared/tool-definition';
import { getToolDefinition } from '../shared/tools';
import type { ToolResultBlock } from '../shared/messages';
import type { ToolResultRef } from '../shared/transcript';

/** One tool_use's outcome, in the form the next model call needs. */
export type ToolResultEntry = ToolResultRef | ToolResultBlock;

export interface RunToolsOutcome {
  /** Results in the order the model asked for them. */
  results: ToolResultEntry[];
  /** True when an abort stopped at least one call. */
  aborted: boolean;
}

/** A finished call: its result as the transcript will hold it, and what the progress log shows. */
export interface FinishedCall {
  entry: ToolResultEntry;
  isError: boolean;
  preview: string;
  /** False when the call never ran (denied, or answered from the State): it cannot fail a chain. */
  ran: boolean;
}

export interface RunToolsHooks {
  runTool(toolUse: ToolUseBlock): Promise<FinishedCall>;
  onStart(toolUse: ToolUseBlock): void;
  onFinish(toolUse: ToolUseBlock, result: ToolResultEntry, preview: string): void;
  isAborted(): boolean;
}

type Tracked = {
  block: ToolUseBlock;
  concurrencySafe: boolean;
  status: 'queued' | 'executing' | 'done';
  result?: ToolResultEntry;
};

const BASH = 'Bash';

/**
 * Tool inputs take numbers and flags written as strings, and Claude Code's other fields (Read's
 * pages, Grep's -o): a call that failed validation before may now be concurrency-safe. Histories
 * from before keep the old classification, so their tools run in the order they ran.
 */
export const TOOL_INPUT_COERCION_PATCH = 'tool-input-coercion';

/**
 * The seed's StreamingToolExecutor as a workflow step: concurrency-safe calls run together, any
 * other call runs alone, results keep request order, and a failing Bash cancels its siblings
 * (Bash commands often depend on each other; one failed step makes the rest pointless).
 */
export async function runTools(toolUseBlocks: ToolUseBlock[], hooks: RunToolsHooks): Promise<RunToolsOutcome> {
  const legacyInputs = !patched(TOOL_INPUT_COERCION_PATCH);
  const tools: Tracked[] = toolUseBlocks.map((block) => ({
    block,
    concurrencySafe: classifyToolUse(getToolDefinition(block.name), block.input, { legacyInputs }).concurrencySafe,
    status: 'queued',
  }));
  const siblings = new CancellationScope();
  const executing = new Map<Tracked, Promise<void>>();
  let erroredBash: string | undefined;

  const canExecute = (tool: Tracked): boolean => {
    const running = tools.filter((t) => t.status === 'executing');
    return running.length === 0 || (tool.concurrencySafe && running.every((t) => t.concurrencySafe));
  };

  const finish = (tool: Tracked, result: ToolResultEntry, preview: string) => {
    tool.status = 'done';
    tool.result = result;
    hooks.onFinish(tool.block, result, preview);
  };

  const start = (tool: Tracked) => {
    tool.status = 'executing';
    hooks.onStart(tool.block);
    const run = siblings
      .run(() => hooks.runTool(tool.block))
      .then(
        (result) => {
          finish(tool, result.entry, result.preview);
          if (tool.block.name === BASH && result.ran && result.isError && erroredBash === undefined) {
            erroredBash = describe(tool.block);
            siblings.cancel();
          }
        },
        (error: unknown) => {
          if (!isCancellation(error)) throw error;
          const text = hooks.isAborted()
            ? 'Interrupted by user: the tool call was cancelled before it finished.'
            : `Cancelled: a parallel tool call ${erroredBash ?? 'Bash'} failed, so this call was stopped.`;
          finish(tool, syntheticError(tool.block.id, text), text);
        },
      )
      .finally(() => executing.delete(tool));
    executing.set(tool, run);
  };

  for (;;) {
    for (const tool of tools) {
      if (tool.status !== 'queued') continue;
      if (hooks.isAborted() || erroredBash !== undefined) break;
      if (!canExecute(tool)) break; // later calls wait: results must not overtake a writer
      start(tool);
    }
    if (executing.size === 0) break;
    await Promise.race(executing.values());
  }

  for (const tool of tools) {
    if (tool.status !== 'queued') continue;
    const text = hooks.isAborted()
      ? 'Interrupted by user: the tool call never started.'
      : `Cancelled: a parallel tool call ${erroredBash ?? 'Bash'} failed, so this call did not run.`;
    finish(tool, syntheticError(tool.block.id, text), text);
  }

  return {
    results: tools.map((tool) => tool.result as ToolResultEntry),
    aborted: hooks.isAborted(),
  };
}

/** A tool_result the workflow writes itself, for a call that never produced one. */
export function syntheticError(toolUseId: string, text: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: toolUseId, content: text, is_error: true };
}

function describe(block: ToolUseBlock): string {
  const input = block.input as { command?: unknown } | null;
  const command = typeof input?.command === 'string' ? input.command : '';
  return command ? `Bash(${command.length > 60 ? `${command.slice(0, 60)}…` : command})` : block.name;
}
