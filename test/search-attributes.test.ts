import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startWithSearchAttributes } from '../src/client/job-attributes';
import { listJobs } from '../src/client/job-list';
import { JOB_SEARCH_ATTRIBUTES } from '../src/workflows/search-attributes';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './support/harness';
import { readCall, terminalOf } from './support/jobs';

const FILES = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.txt`, `file ${i}\n`]));

/** Eight Reads, then the answer: long enough to cross continue-as-new at 20 events. */
const session = {
  replies: [
    ...Object.keys(FILES).map((file, i) => ({ content: [readCall(`r${i}`, file)] })),
    { content: [{ type: 'text' as const, text: 'All read.' }] },
  ],
};

/** One job started as `run` starts it, on `env`, to its Terminal; returns its id and what the start printed. */
async function runJob(env: TestWorkflowEnvironment, name: string) {
  const server = await ScriptedModelServer.start({ name, ...session });
  const taskQueue = uniqueTaskQueue(name);
  const { worker, done } = await startWorker(env, server, { taskQueue, storeDir: tempDir('store') });
  const warnings: string[] = [];
  try {
    const input = sessionInput(makeWorkspace(FILES));
    const workflowId = `${name}-${process.pid}`;
    const handle = await startWithSearchAttributes(
      input,
      'default',
      (attributes) =>
        env.client.workflow.start('agentSession', { workflowId, taskQueue, args: [input], ...attributes }),
      (line) => warnings.push(line),
    );
    const terminal = await terminalOf(handle);
    return { workflowId, terminal, warnings, workspace: input.workspace };
  } finally {
    worker.shutdown();
    await Promise.all([done, server.close()]);
  }
}

describe('job search attributes', () => {
  test('a job started with them ends with its outcome, across continue-as-new, and ls finds it by it', async () => {
    const env = await startTemporal([
      '--dynamic-config-value',
      'limit.historyCount.suggestContinueAsNew=20',
      ...JOB_SEARCH_ATTRIBUTES.flatMap(({ key, cliType }) => ['--search-attribute', `${key.name}=${cliType}`]),
    ]);
    try {
      const job = await runJob(env, 'attributes');
      expect(job.warnings).toEqual([]);
      expect(job.terminal).toMatchObject({ reason: 'completed', turnCount: 9 });
      const latest = await env.client.workflow.getHandle(job.workflowId).describe();
      const runs: string[] = [];
      for await (const run of env.client.workflow.list({ query: `WorkflowId = '${job.workflowId}'` }))
        runs.push(run.status.name);
      expect(runs).toContain('CONTINUED_AS_NEW');
      const attributes = Object.fromEntries(latest.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]));
      expect(attributes).toMatchObject({
        DurableAgentOutcome: 'completed',
        DurableAgentTurns: 9,
        DurableAgentModel: 'claude-sonnet-5-5',
        DurableAgentWorkspace: job.workspace,
      });
      // Visibility lags a moment behind the close; the runs that continued as new are not listed.
      const lines = await waitFor(async () => {
        const found = await listJobs(env.client, 10, 'completed');
        return found.some((line) => line.startsWith(`${job.workflowId} `)) ? found : undefined;
      });
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(new RegExp(`^${job.workflowId}\\s+completed\\s+9\\s`));
    } finally {
      await env.teardown();
    }
  }, 180_000);

  test('on a namespace without them the job runs all the same, and ls says how to register them', async () => {
    const env = await startTemporal();
    try {
      const job = await runJob(env, 'no-attributes');
      expect(job.terminal).toMatchObject({ reason: 'completed', turnCount: 9 });
      expect(job.warnings).toHaveLength(1);
      expect(job.warnings[0]).toContain('namespace default has no durable-agent search attributes');
      expect(job.warnings[0]).toContain(
        'temporal operator search-attribute create --namespace default --name DurableAgentOutcome --type Keyword',
      );
      const lines = await waitFor(async () => {
        const found = await listJobs(env.client, 10);
        return found.some((line) => line.startsWith(`${job.workflowId} `)) ? found : undefined;
      });
      expect(lines.find((line) => line.startsWith(job.workflowId))).toMatch(/\s+completed\s+9\s/);
      await expect(listJobs(env.client, 10, 'completed')).rejects.toThrow(
        /namespace default has no durable-agent search attributes, so jobs cannot be filtered by outcome/,
      );
      // Filters on Temporal's own status need none.
      expect(await listJobs(env.client, 10, 'running')).toEqual(['no running jobs']);
    } finally {
      await env.teardown();
    }
  }, 180_000);
});
