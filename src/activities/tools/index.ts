import type { ToolDefinition, ToolOutcome } from '../../shared/tool-definition';
import { bashTool, withTimeoutClamped } from '../../shared/tools/bash';
import { editTool } from '../../shared/tools/edit';
import { globTool } from '../../shared/tools/glob';
import { grepTool } from '../../shared/tools/grep';
import { getToolDefinition } from '../../shared/tools/index';
import { formatInputValidationError } from '../../shared/tools/input-validation-error';
import { noSuchToolError } from '../../shared/tools/tool-use-error';
import { multiEditTool } from '../../shared/tools/multi-edit';
import { readTool, type ReadInput } from '../../shared/tools/read';
import type { GrepInput } from '../../shared/tools/grep';
import { writeTool } from '../../shared/tools/write';
import { abortError, isAbortError } from './abort-error';
import { runBash } from './bash';
import { runEdit } from './edit';
import { toolError } from './fs-errors';
import { runGlob } from './glob';
import { runGrep } from './grep';
import { storedResultFallback, storeLargeResult } from './large-result';
import { runMultiEdit } from './multi-edit';
import { runRead } from './read';
import { FileChangeNotRecordedError } from './replace-file';
import type { ToolContext } from './tool-context';
import { runWrite } from './write';

export type { ToolContext } from './tool-context';
export { resolveWorkspacePath, type WorkspacePath, type WorkspacePathResult } from './workspace-path';
export { buildToolEnv, defaultBashEnv, isSecretEnvName, toolEnvNames } from './bash-env';
export { isAbortError } from './abort-error';
export { LARGE_RESULT_CHARS, LARGE_RESULT_PREVIEW_CHARS } from './large-result';
export { TOOL_RESULTS_DIR, WORKSPACE_DATA_DIR } from './workspace-data';

type Runner = (input: unknown, ctx: ToolContext) => Promise<ToolOutcome>;

/** Pairs a definition with its implementation so the input type is checked at compile time. */
function implement<Input>(
  definition: ToolDefinition<Input>,
  run: (input: Input, ctx: ToolContext) => Promise<ToolOutcome>,
): [string, Runner] {
  return [definition.name, (input, ctx) => run(input as Input, ctx)];
}

const RUNNERS: ReadonlyMap<string, Runner> = new Map([
  implement(readTool, runRead),
  implement(writeTool, runWrite),
  implement(editTool, runEdit),
  implement(multiEditTool, runMultiEdit),
  implement(globTool, runGlob),
  implement(grepTool, runGrep),
  implement(bashTool, runBash),
]);

/**
 * Validate and run one tool call. A bad input, an unknown tool or a failing tool becomes an
 * `isError` outcome the model can act on; the only rejection is an Error named 'AbortError',
 * raised when `ctx.signal` fires (after the tool's processes are gone). A successful result longer
 * than LARGE_RESULT_CHARS is stored under `.durable-agent/tool-results/` and replaced by a preview.
 */
export async function executeTool(name: string, rawInput: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  if (ctx.signal.aborted) throw abortError();
  const definition = getToolDefinition(name);
  const run = RUNNERS.get(name);
  if (definition && !run) {
    return toolError(
      `${name} is answered by the job itself (its list lives in the workflow State); it has no standalone run.`,
    );
  }
  if (!definition || !run) return toolError(noSuchToolError(name));
  const input = name === bashTool.name ? withTimeoutClamped(rawInput) : rawInput;
  const parsed = definition.inputSchema.safeParse(input);
  if (!parsed.success) return toolError(formatInputValidationError(name, parsed.error));
  try {
    const fromDataHome = await withStoredResultFallback(name, parsed.data, ctx);
    if (fromDataHome) return fromDataHome;
    const outcome = await run(parsed.data, ctx);
    // Read is bounded by its own token cap and pages itself, as in Claude Code: storing its result
    // would only send the model to another file to Read.
    if (name === readTool.name) return outcome;
    return await storeLargeResult(name, outcome, ctx.workspace, ctx.dataHome);
  } catch (error) {
    if (isAbortError(error) || ctx.signal.aborted) throw abortError();
    if (error instanceof FileChangeNotRecordedError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    return toolError(`${name} failed: ${message}`);
  }
}

/**
 * A Read or Grep of a saved large result whose workspace copy is gone (a read-only workspace never
 * had one; `git clean -fdx` removes it) runs against the data folder's copy, which has the
 * workspace's layout: same path in, same paths out. Undefined when the workspace is to be used.
 */
async function withStoredResultFallback(
  name: string,
  input: unknown,
  ctx: ToolContext,
): Promise<ToolOutcome | undefined> {
  if (name === readTool.name) {
    const read = input as ReadInput;
    const found = await storedResultFallback(ctx.workspace, ctx.dataHome, read.file_path);
    if (!found) return undefined;
    // The file state would name the data folder's copy, which no Write or Edit may touch.
    const { fileStates: _unused, ...outcome } = await runRead(
      { ...read, file_path: found.relative },
      { ...ctx, workspace: found.root },
    );
    return outcome;
  }
  if (name === grepTool.name) {
    const grep = input as GrepInput;
    if (grep.path === undefined) return undefined;
    const found = await storedResultFallback(ctx.workspace, ctx.dataHome, grep.path);
    if (!found) return undefined;
    return await runGrep({ ...grep, path: found.relative }, { ...ctx, workspace: found.root });
  }
  return undefined;
}
