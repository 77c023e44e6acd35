/**
 * The tag Claude Code puts around a tool error found before the tool ran (a bad input, an unknown
 * tool, an Edit whose old_string is not in the file): models trained on Claude Code's transcripts
 * know it, so durable-agent tells them such errors the same way.
 */
export function toolUseError(message: string): string {
  return `<tool_use_error>${message}</tool_use_error>`;
}

/** The answer to a call of a tool the job does not offer (or that does not exist), as Claude Code words it. */
export function noSuchToolError(toolName: string): string {
  return toolUseError(`Error: No such tool available: ${toolName}`);
}
