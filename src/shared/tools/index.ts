import type { ToolDefinition } from '../tool-definition';
import { bashTool } from './bash';
import { editTool } from './edit';
import { globTool } from './glob';
import { grepTool } from './grep';
import { readTool } from './read';
import { writeTool } from './write';

export { bashTool, type BashInput } from './bash';
export { editTool, type EditInput } from './edit';
export { globTool, type GlobInput } from './glob';
export { grepTool, type GrepInput } from './grep';
export { readTool, type ReadInput } from './read';
export { writeTool, type WriteInput } from './write';
export { isReadOnlyBashCommand } from './bash-classify';
export { formatInputValidationError, parseErrorOptions } from './input-validation-error';

/** Every tool the model is offered, in the order it sees them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each entry has its own input type
export const TOOL_DEFINITIONS: readonly ToolDefinition<any>[] = [
  bashTool,
  globTool,
  grepTool,
  readTool,
  editTool,
  writeTool,
];

const BY_NAME: ReadonlyMap<string, ToolDefinition> = new Map(
  TOOL_DEFINITIONS.map((definition) => [definition.name, definition as ToolDefinition]),
);

/** The definition of the tool called `name` (case-sensitive, as the model must send it). */
export function getToolDefinition(name: string): ToolDefinition | undefined {
  return BY_NAME.get(name);
}
