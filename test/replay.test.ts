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
  // Older generations stay in their own folders: a job started on an old version must still replay.
  const files = (fs.readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.json')).sort();

  test('there are histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(12);
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
