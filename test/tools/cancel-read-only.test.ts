import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { ABANDON_READ_ONLY_AFTER_MS, runTool, type RunToolDeps } from '../../src/activities/run-tool';
import { SandboxEngine } from '../../src/activities/sandbox/engine';
import { FileContentStore } from '../../src/activities/store/content-store';
import type { RunToolInput } from '../../src/shared/activity-types';
import type { ToolOutcome } from '../../src/shared/tool-definition';
import { makeWorkspace, tempDir } from '../support/harness';

/** A tool that never looks at its abort signal, and answers after 4 s. */
const deaf = (): Promise<ToolOutcome> =>
  new Promise((resolve) => setTimeout(() => resolve({ content: 'late', isError: false }), 4_000));

function attempt(name: string, input: unknown) {
  const storeDir = tempDir('cancel-store');
  const deps: RunToolDeps = {
    store: new FileContentStore(storeDir),
    dataDir: storeDir,
    toolEnv: { PATH: process.env.PATH },
    sandbox: new SandboxEngine({ workerPrivatePaths: [storeDir] }),
    execute: deaf,
  };
  const toolInput: RunToolInput = {
    sessionKey: 'job-1/run-1',
    workspace: makeWorkspace({ 'a.txt': 'a\n' }),
    toolUse: { type: 'tool_use', id: 'toolu_deaf', name, input },
    readState: {},
    sandbox: { enabled: false, source: '--no-sandbox' },
  };
  const env = new MockActivityEnvironment(
    { activityType: 'runTool', activityId: 'tool-toolu_deaf', heartbeatTimeoutMs: 30_000 },
    { logger: new DefaultLogger('ERROR') },
  );
  const running = env.run((value: RunToolInput) => runTool(deps, value), toolInput);
  return { env, running };
}

describe('a cancelled tool that does not notice the cancellation', () => {
  test('a read-only one is given up on within a second: an abort does not wait for it', async () => {
    const { env, running } = attempt('Read', { file_path: 'a.txt' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const cancelledAt = Date.now();
    env.cancel();
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
    const took = Date.now() - cancelledAt;
    expect(took).toBeGreaterThanOrEqual(ABANDON_READ_ONLY_AFTER_MS - 50);
    expect(took).toBeLessThan(ABANDON_READ_ONLY_AFTER_MS + 1_000);
    // The abandoned tool finishes unheard; wait for it so nothing of this test outlives it.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  });

  test('a side-effecting one is waited for: the abort answers only once it has stopped', async () => {
    const { env, running } = attempt('Write', { file_path: 'b.txt', content: 'b\n' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    env.cancel();
    const outcome = await Promise.race([
      running.then(
        () => 'settled',
        () => 'settled',
      ),
      new Promise((resolve) => setTimeout(() => resolve('still running'), 3_000)),
    ]);
    expect(outcome).toBe('still running');
    // It did its work: that is what the job must be told, not that it was cancelled.
    await expect(running).resolves.toMatchObject({ isError: false, preview: 'late' });
  });
});
