/**
 * `durable-agent batch` on the embedded default (the server and worker `run` and `batch` start in
 * the background), as its user meets it: the CLI in a process of its own, production timeouts.
 * Apart from `batch-cli.test.ts`, which shares one dev server among its tests, so the two run side
 * by side.
 */
import fs from 'node:fs';
import path from 'node:path';
import { formatUsd } from '../src/shared/pricing';
import { effectLines, scriptedBatch } from './support/batch';
import { killEmbeddedWorker, runCli, startCli } from './support/cli';
import { makeWorkspace, tempDir, waitFor } from './support/harness';
import { Client, Connection } from '@temporalio/client';
import { pendingActivities } from '../src/client/live-follower';

/** True once the embedded server holds a heartbeat of the job's model call saying what the API billed. */
async function billedHeartbeatSeen(home: string, jobId: string): Promise<true | undefined> {
  const { port } = JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8')) as { port: number };
  const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
  try {
    const description = await new Client({ connection }).workflow.getHandle(jobId).describe();
    const billed = pendingActivities(description).some(
      (activity) => activity.activityType === 'callModel' && (activity.details as { billed?: unknown })?.billed,
    );
    return billed ? true : undefined;
  } finally {
    await connection.close();
  }
}

jest.setTimeout(300_000);

describe('durable-agent batch on the embedded default', () => {
  test('on the embedded default, a background worker killed mid-batch is started again by the follower; every task once', async () => {
    const workspace = makeWorkspace({});
    const small = await scriptedBatch(workspace, 3, { prefix: 'embedded-restart', toolSeconds: 2 });
    const embeddedHome = tempDir('batch-embedded');
    const file = path.join(tempDir('embedded-tasks'), 'overnight.jsonl');
    fs.writeFileSync(
      file,
      small.tasks.map((task) => JSON.stringify({ id: task.id, prompt: task.input.prompt, workspace })).join('\n') +
        '\n',
    );
    const embedded: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_HOME: embeddedHome,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: small.router.url,
    };
    delete embedded.TEMPORAL_ADDRESS;
    delete embedded.DURABLE_AGENT_TASK_QUEUE;
    const follower = startCli(
      ['batch', file, '--concurrency', '1', '--permission-mode', 'bypassPermissions'],
      embedded,
    );
    try {
      await waitFor(
        async () => (effectLines(small.effects).length >= 1 ? true : undefined),
        120_000,
        'the first tool call',
      ).catch((error: Error) => {
        throw new Error(`${error.message}\nCLI: ${follower.output()}`);
      });
      killEmbeddedWorker(embeddedHome);
      const result = await follower.done;
      expect(result.stderr).toContain('the background worker had stopped: started it again (pid ');
      expect(result.stderr).toContain('a worker answers batch overnight again');
      expect(result.code).toBe(0);
      expect(effectLines(small.effects)).toEqual(['t1 0', 't2 0', 't3 0']);

      // Issue 26: job commands given the batch's id said odd things (a worker "within 15 s",
      // "Cannot read properties of undefined"); each now points to the batch command.
      for (const [command, instead] of [
        [['status', 'overnight'], 'durable-agent batch status overnight'],
        [['tail', 'overnight'], 'durable-agent batch status overnight'],
        [['result', 'overnight', '--json'], 'durable-agent batch status overnight'],
        [['export', 'overnight'], 'durable-agent batch export overnight'],
        [['send', 'overnight', 'more'], 'send the message to one of its jobs'],
      ] as const) {
        const answer = await runCli([...command], embedded);
        expect(answer.code).toBe(1);
        expect(answer.stderr).toContain(`overnight is a batch, not a job: `);
        expect(answer.stderr).toContain(instead);
        expect(answer.stderr).not.toMatch(/Cannot read|\n\s+at /);
      }
    } finally {
      follower.child.kill('SIGKILL');
      await runCli(['stop'], embedded);
      await small.close();
    }
  });

  test('a call a killed worker cut off is paid again: the task table marks that task and says how much', async () => {
    // Issue 26: a task whose call a crash cut off cost more than its twins, and the table gave no
    // reason. Each reply streams for about 3 s and costs $0.20; the worker dies in the middle of one.
    const workspace = makeWorkspace({});
    const slow = await scriptedBatch(workspace, 2, { prefix: 'embedded-paid', dollars: true, chunkDelayMs: 150 });
    const home = tempDir('batch-paid-again');
    const file = path.join(tempDir('paid-tasks'), 'paid.jsonl');
    fs.writeFileSync(
      file,
      slow.tasks.map((task) => JSON.stringify({ id: task.id, prompt: task.input.prompt, workspace })).join('\n') + '\n',
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: slow.router.url,
    };
    delete env.TEMPORAL_ADDRESS;
    delete env.DURABLE_AGENT_TASK_QUEUE;
    const follower = startCli(['batch', file, '--concurrency', '1', '--permission-mode', 'bypassPermissions'], env);
    try {
      // The first task's first call, well into its stream: killed once the server holds the
      // heartbeat that says what the API billed (on a loaded machine that can take a while).
      await waitFor(async () => (slow.router.calls.length > 0 ? true : undefined), 120_000, 'the first model call');
      await waitFor(() => billedHeartbeatSeen(home, 'paid/t1'), 60_000, "the call's billed heartbeat");
      killEmbeddedWorker(home);
      const result = await follower.done;
      expect(result.code).toBe(0);

      const json = await runCli(['batch', 'status', 'paid', '--output-format', 'json'], env);
      const parsed = JSON.parse(json.stdout) as {
        paidAgainUsd?: number;
        costUsd: number;
        task_rows: Array<{ task: string; costUsd: number; paidAgainUsd?: number }>;
      };
      const [first, second] = parsed.task_rows;
      expect(first?.paidAgainUsd).toBeGreaterThan(0);
      expect(second?.paidAgainUsd).toBeUndefined();
      expect(first!.costUsd).toBeCloseTo(second!.costUsd + first!.paidAgainUsd!, 6);
      expect(parsed.paidAgainUsd).toBeCloseTo(first!.paidAgainUsd!, 6);

      const text = await runCli(['batch', 'status', 'paid'], env);
      expect(text.stdout).toContain(`${formatUsd(first!.costUsd)}*`);
      // The table alone on stdout (scripts read it); its footnote on stderr.
      expect(text.stdout.trim().split('\n')).toHaveLength(3);
      expect(text.stderr).toContain(
        `* includes calls a crash cut off, made again and billed twice: t1 ${formatUsd(first!.paidAgainUsd!)}`,
      );
      expect(text.stderr).toContain(
        `of which ${formatUsd(parsed.paidAgainUsd!)} paid again for calls a crash cut off (made again, billed twice)`,
      );
    } finally {
      follower.child.kill('SIGKILL');
      await runCli(['stop'], env);
      await slow.close();
    }
  });

  test('on the embedded default without model credentials a batch is refused at once, not left waiting all night', async () => {
    const noKey: NodeJS.ProcessEnv = { ...process.env, DURABLE_AGENT_HOME: tempDir('batch-no-key') };
    for (const name of ['TEMPORAL_ADDRESS', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN']) delete noKey[name];
    const tasksFile = path.join(tempDir('no-key-tasks'), 'nightly.jsonl');
    fs.writeFileSync(tasksFile, JSON.stringify({ id: 't1', prompt: 'Fix it', workspace: makeWorkspace({}) }) + '\n');
    const result = await runCli(['batch', tasksFile], noKey);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) is not set');
    expect(result.stderr).toContain('the embedded worker this batch starts cannot call the model');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    // Refused before anything started: no embedded server was brought up for it.
    expect(fs.existsSync(path.join(noKey.DURABLE_AGENT_HOME!, 'embedded-server.json'))).toBe(false);
  });
});
