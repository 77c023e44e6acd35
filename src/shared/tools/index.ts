import { fileStateKey } from '../file-state';
import type { ToolDefinition } from '../tool-definition';
import { bashTool } from './bash';
import { editTool } from './edit';
import { globTool } from './glob';
import { grepTool } from './grep';
import { multiEditTool } from './multi-edit';
import { readTool } from './read';
import { scheduleWakeupTool } from './schedule-wakeup';
import { taskStopTool } from './task-stop';
import { agentTool } from './agent';
import { cronCreateTool, cronDeleteTool, cronListTool } from './cron';
import { MAX_PATH_CHARS } from './schema-parts';
import { todoWriteTool } from './todo-write';
import { writeTool } from './write';

export { bashTool, type BashInput } from './bash';
export { editTool, type EditInput } from './edit';
export { globTool, type GlobInput } from './glob';
export { grepTool, type GrepInput } from './grep';
export { multiEditTool, type MultiEditInput } from './multi-edit';
export { readTool, type ReadInput } from './read';
export { writeTool, type WriteInput } from './write';
export { todoWriteTool, type TodoItem, type TodoWriteInput, TODO_WRITE_RESULT } from './todo-write';
export { scheduleWakeupTool, type ScheduleWakeupInput, type Wakeup } from './schedule-wakeup';
export { taskStopTool, type TaskStopInput } from './task-stop';
export { agentTool, type AgentInput } from './agent';
export { cronCreateTool, cronDeleteTool, cronListTool, type ScheduledPrompt } from './cron';
export { isReadOnlyBashCommand } from '../shell';
export { formatInputValidationError } from './input-validation-error';
export { noSuchToolError, toolUseError } from './tool-use-error';

/** Every tool the model is offered, in the order it sees them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each entry has its own input type
export const TOOL_DEFINITIONS: readonly ToolDefinition<any>[] = [
  bashTool,
  globTool,
  grepTool,
  readTool,
  editTool,
  multiEditTool,
  writeTool,
  // Answered by the workflow from its State; no activity runs them.
  todoWriteTool,
  scheduleWakeupTool,
  taskStopTool,
  agentTool,
  cronCreateTool,
  cronListTool,
  cronDeleteTool,
];

const BY_NAME: ReadonlyMap<string, ToolDefinition> = new Map(
  TOOL_DEFINITIONS.map((definition) => [definition.name, definition as ToolDefinition]),
);

/** The definition of the tool called `name` (case-sensitive, as the model must send it). */
export function getToolDefinition(name: string): ToolDefinition | undefined {
  return BY_NAME.get(name);
}

/** Tools that check the session's read state before changing a file. */
const READ_STATE_TOOLS: ReadonlySet<string> = new Set([writeTool.name, editTool.name, multiEditTool.name]);

/**
 * The `ReadFileStates` keys a call needs in its `ToolContext.readState`: the `file_path` of Write,
 * Edit and MultiEdit, none for the other tools. Pure and total, so the workflow can call it on the
 * raw tool_use input: a malformed input yields [] (the call will fail validation anyway).
 */
export function fileStateKeysFor(toolName: string, input: unknown, workspace: string): string[] {
  if (!READ_STATE_TOOLS.has(toolName)) return [];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return [];
  try {
    const filePath = (input as { file_path?: unknown }).file_path;
    if (typeof filePath !== 'string' || filePath === '' || filePath.length > MAX_PATH_CHARS) return [];
    if (filePath.includes('\0')) return [];
    return [fileStateKey(workspace, filePath)];
  } catch {
    // An exotic input (a throwing getter) cannot come from JSON; it is still not worth a crash.
    return [];
  }
}
