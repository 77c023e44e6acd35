import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';

/**
 * Saved histories of representative jobs (`npm run record-histories`) replayed against today's
 * workflow code: a change that would break a running job fails here (DESIGN.md invariant 1).
 */
/**
 * The workflow id to replay a history under. A batch derives its jobs' ids from its own, and a job
 * its agents' ids, so their histories replay under the id they were recorded with
 * (`record-histories.ts`); another job's id is in no command, so any id does.
 */
function recordedId(file: string): string {
  const name = path.basename(file, '.json');
  if (name.startsWith('batch-budget-job')) return 'history-batch-budget/t1';
  if (name.startsWith('batch-budget') || name.startsWith('batch-rerun')) return 'history-batch-budget';
  if (name === 'agent-subagent' || name === 'agent-definitions') return `history-${name}`;
  return `replay-${file}`;
}

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
      recordedId(file),
    );
  });
});
