import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { executeTool, type ToolContext } from '../../../src/activities/tools/index';
import type { ReadFileStates } from '../../../src/shared/file-state';
import type { ToolOutcome } from '../../../src/shared/tool-definition';
import { fileStateKeysFor } from '../../../src/shared/tools/index';

/** A fresh, realpath'd temporary directory. */
export async function tempWorkspace(prefix: string): Promise<string> {
  return realpath(await mkdtemp(path.join(tmpdir(), prefix)));
}

/** A context with no file knowledge, for tools that do not need any. */
export function plainContext(workspace: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspace,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    readState: {},
    readDenyRules: [],
    ...overrides,
  };
}

/** The outcome without its file-state updates, for tests that pin only what the model sees. */
export function seen(outcome: ToolOutcome): { content: string; isError: boolean } {
  return { content: outcome.content, isError: outcome.isError };
}

/**
 * Runs tools the way the workflow does: it keeps the session's ReadFileStates, hands each call
 * only the keys `fileStateKeysFor` names, and merges the updates the call returns.
 */
export class ToolSession {
  readonly readState: ReadFileStates = {};

  constructor(
    readonly workspace: string,
    private readonly overrides: Partial<ToolContext> = {},
  ) {}

  async run(name: string, input: unknown): Promise<ToolOutcome> {
    const known: ReadFileStates = {};
    for (const key of fileStateKeysFor(name, input, this.workspace)) {
      const state = this.readState[key];
      if (state) known[key] = state;
    }
    const outcome = await executeTool(
      name,
      input,
      plainContext(this.workspace, { ...this.overrides, readState: known }),
    );
    for (const update of outcome.fileStates ?? []) {
      if (update.state) this.readState[update.key] = update.state;
      else delete this.readState[update.key];
    }
    return outcome;
  }

  /** Run and keep only what the model sees. */
  async seen(name: string, input: unknown): Promise<{ content: string; isError: boolean }> {
    return seen(await this.run(name, input));
  }
}
