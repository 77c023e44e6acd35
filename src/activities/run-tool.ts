import { Context } from '@temporalio/activity';
import type { RunToolInput, ToolRunResult } from '../shared/activity-types';
import type { ToolResultBlock } from '../shared/messages';
import { jobSandboxOrDefault } from '../shared/sandbox';
import { classifyToolUse } from '../shared/tool-definition';
import type { ToolOutcome } from '../shared/tool-definition';
import { getToolDefinition } from '../shared/tools';
import { isInputFieldRef, isStoredInputField } from '../shared/tool-input-refs';
import type { SandboxEngine } from './sandbox/engine';
import type { FileContentStore } from './store/content-store';
import { ToolJournal } from './tool-journal';
import { executeTool } from './tools';

export interface RunToolDeps {
  store: FileContentStore;
  /** The environment Bash starts from: an allowlist of the worker's variables, no credentials. */
  toolEnv: NodeJS.ProcessEnv;
  /** The worker's sandbox; each call runs under its job's policy (the default when the input has none). */
  sandbox: SandboxEngine;
  /**
   * Test hook: SIGKILL this worker right after the journal records this tool_use_id as completed,
   * before Temporal hears of it — the window the journal exists for.
   */
  crashAfterJournal?: string;
}

const PREVIEW_CHARS = 300;

/**
 * Phase 4, one call: run the tool the model asked for, exactly once. A retry whose earlier attempt
 * finished returns the recorded result; one whose earlier attempt died mid-run does not run a
 * side-effecting call again but tells the model what happened.
 */
export async function runTool(deps: RunToolDeps, input: RunToolInput): Promise<ToolRunResult> {
  const ctx = Context.current();
  const { sessionKey } = input;
  const journal = new ToolJournal(input.workspace, sessionKey);
  const recorded = await journal.read(input.toolUse.id);
  if (recorded?.status === 'completed') {
    // The content store may be another worker's; the journal carries the block itself.
    await deps.store.put(recorded.block);
    return recorded.result;
  }
  // Only a call that still has to run needs the fields the model call kept by reference.
  const toolUse = {
    ...input.toolUse,
    input: await withInputRefsResolved(deps.store, input.toolUse.input, input.toolUse.id),
  };

  let outcome: ToolOutcome;
  let sandboxed: boolean | undefined;
  const { readOnly } = classifyToolUse(getToolDefinition(toolUse.name), toolUse.input);
  if (recorded?.status === 'started' && !readOnly) {
    outcome = {
      isError: true,
      content:
        `The ${toolUse.name} call was interrupted by a worker failure (started ${recorded.startedAt}) and may have ` +
        'partly run. It was not run again automatically: check its effects before retrying it.',
    };
  } else {
    await journal.write({
      status: 'started',
      toolUseId: toolUse.id,
      name: toolUse.name,
      startedAt: new Date().toISOString(),
    });
    try {
      outcome = await executeTool(toolUse.name, toolUse.input, {
        workspace: input.workspace,
        signal: ctx.cancellationSignal,
        heartbeat: (details?: unknown) => ctx.heartbeat(details),
        env: deps.toolEnv,
        sandbox: { engine: deps.sandbox, policy: jobSandboxOrDefault(input.sandbox) },
        sessionKey,
        onCommandStart: (facts) => {
          sandboxed = facts.sandboxed;
        },
        readState: input.readState ?? {},
        readDenyRules: input.readDenyRules ?? [],
      });
    } catch (error) {
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? error;
      throw error;
    }
  }

  const block: ToolResultBlock = {
    type: 'tool_result',
    tool_use_id: toolUse.id,
    // The API rejects empty text; an empty result still has to say so.
    content: outcome.content === '' ? '(no output)' : outcome.content,
    ...(outcome.isError ? { is_error: true } : {}),
  };
  const result: ToolRunResult = {
    toolUseId: toolUse.id,
    isError: outcome.isError,
    ref: await deps.store.put(block),
    preview: block.content.length > PREVIEW_CHARS ? `${block.content.slice(0, PREVIEW_CHARS)}…` : block.content,
    chars: block.content.length,
    ...(outcome.fileStates?.length ? { fileStates: outcome.fileStates } : {}),
    ...(sandboxed !== undefined ? { sandboxed } : {}),
  };
  await journal.write({ status: 'completed', toolUseId: toolUse.id, name: toolUse.name, result, block });
  if (deps.crashAfterJournal === toolUse.id) process.kill(process.pid, 'SIGKILL');
  return result;
}

/**
 * The tool input as the model wrote it: fields the model call stored by reference put back. Only
 * what the model call stored for this very call and field is taken: an object the model itself
 * wrote in that shape (naming some other content in the shared store) stays as it is, and the
 * tool's own input check refuses it.
 */
export async function withInputRefsResolved(
  store: FileContentStore,
  toolInput: unknown,
  toolUseId: string,
): Promise<unknown> {
  if (typeof toolInput !== 'object' || toolInput === null || Array.isArray(toolInput)) return toolInput;
  const entries = Object.entries(toolInput);
  if (!entries.some(([, value]) => isInputFieldRef(value))) return toolInput;
  const resolved: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    resolved[key] = value;
    if (!isInputFieldRef(value)) continue;
    const stored = await store.get<unknown>(value.$contentRef).catch(() => undefined);
    if (isStoredInputField(stored) && stored.toolUseId === toolUseId && stored.field === key)
      resolved[key] = stored.value;
  }
  return resolved;
}
