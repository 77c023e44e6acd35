import { TOOL_HEARTBEAT_MS } from '../../src/activities/run-tool';
import { executeTool } from '../../src/activities/tools';
import type { ToolContext } from '../../src/activities/tools';
import { makeWorkspace, tempDir } from '../support/harness';
import { runToolAttempt } from '../support/tool-activity';

describe('when a tool call heartbeats', () => {
  test('a call that ends within the first interval sends no heartbeat', async () => {
    // Each heartbeat that reaches the server is a write there (a billable action on Temporal
    // Cloud); a quick Read gains nothing from one.
    const attempt = await runToolAttempt({
      storeDir: tempDir('beat-store'),
      workspace: makeWorkspace({ 'notes.txt': 'one\ntwo\n' }),
      id: 'toolu_quick',
      name: 'Read',
      input: { file_path: 'notes.txt' },
    });
    expect(attempt.block.is_error ?? false).toBe(false);
    expect(attempt.block.content).toContain('two');
    expect(attempt.heartbeats).toEqual([]);
  });

  test('a call that runs on heartbeats every interval, naming its tool', async () => {
    const slowGlob = async (name: string, input: unknown, ctx: ToolContext) => {
      await new Promise((resolve) => setTimeout(resolve, 2.5 * TOOL_HEARTBEAT_MS));
      return executeTool(name, input, ctx);
    };
    const attempt = await runToolAttempt({
      storeDir: tempDir('beat-store'),
      workspace: makeWorkspace({ 'a.txt': 'a\n' }),
      id: 'toolu_slow',
      name: 'Glob',
      input: { pattern: '*.txt' },
      deps: { execute: slowGlob },
    });
    expect(attempt.block.content).toContain('a.txt');
    expect(attempt.heartbeats.length).toBeGreaterThanOrEqual(2);
    for (const details of attempt.heartbeats) expect(details).toEqual({ tool: 'Glob' });
  });
});
