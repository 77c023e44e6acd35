import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';

/**
 * Saved histories of representative jobs (`npm run record-histories`) replayed against today's
 * workflow code: a change that would break a running job fails here (DESIGN.md invariant 1).
 */
describe('replay of saved histories', () => {
  const dir = path.join(__dirname, 'histories');
  const files = fs.readdirSync(dir).filter((name) => name.endsWith('.json'));

  test('there are histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
  });

  test.each(files)('%s replays without nondeterminism', async (file) => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.DURABLE_AGENT_WORKFLOW_BUNDLE as string }, replayName: file },
      history,
      `replay-${file}`,
    );
  });
});
