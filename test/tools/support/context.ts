import type { ToolContext } from '../../../src/activities/tools/index';

/** A tool context for direct `executeTool` calls: no abort, no heartbeat, a fresh session. */
export function toolContext(workspace: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspace,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    readState: {},
    readDenyRules: [],
    ...overrides,
  };
}
