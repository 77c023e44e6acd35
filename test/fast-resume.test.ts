import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedSession } from '../src/model-server';
import { DEFAULT_SESSION_TIMEOUTS } from '../src/shared/session';
import { inflightDir } from '../src/worker/inflight';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';
import { terminalOf } from './support/jobs';

const ANSWER = 'The answer streams slowly enough to be cut off by a crash. '.repeat(30);

/** One slow reply: long enough (about 30 chunks of 64 characters, 250 ms apart: 8 s) that the worker is killed while it streams. */
const session: ScriptedSession = {
  name: 'fast-resume',
  slowTurns: { 0: 250 },
  replies: [{ content: [{ type: 'text', text: ANSWER }] }],
};

describe('a worker SIGKILLed during a model call, with production timeouts', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  test('the next worker on the host hands the call back at once: its retry does not wait for the 60 s heartbeat timeout', async () => {
    const server = await ScriptedModelServer.start(session);
    const home = tempDir('home');
    const taskQueue = uniqueTaskQueue('fast-resume');
    const first = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });
    let second: Awaited<ReturnType<typeof spawnWorkerProcess>> | undefined;
    try {
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `fast-resume-${Date.now()}`,
        args: [sessionInput(makeWorkspace({}), { timeouts: DEFAULT_SESSION_TIMEOUTS })],
      });
      await server.waitForRequest(0, 1, 60_000);
      // The first worker has the call on record while it streams.
      const records = fs
        .readdirSync(inflightDir(home))
        .map((name) => fs.readFileSync(path.join(inflightDir(home), name), 'utf8'));
      expect(records.join('\n')).toContain('"activityType":"callModel"');

      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await first.kill('SIGKILL');
      const killedAt = Date.now();
      second = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });
      const readyAt = Date.now();
      const retry = await server.waitForRequest(0, 2, 90_000);
      const retriedAt = Date.now();
      const sinceKill = retriedAt - killedAt;
      const sinceReady = retriedAt - readyAt;
      process.stdout.write(
        `SIGKILL -> retry's first request: ${sinceKill} ms (worker start ${readyAt - killedAt} ms, then ${sinceReady} ms)\n`,
      );
      expect(retry).toBeDefined();
      expect(second.logs()).toContain('died with its worker; its retry starts now');
      // Without the hand-back the retry waits for the heartbeat timeout: 60 s after the last heartbeat.
      expect(sinceKill).toBeLessThan(DEFAULT_SESSION_TIMEOUTS.modelHeartbeatMs / 2);
      expect(sinceReady).toBeLessThan(10_000);
      const terminal = await terminalOf(handle);
      expect(terminal).toMatchObject({ reason: 'completed', finalText: ANSWER });
      // The cut-off attempt was billed for its whole prompt and what had streamed: the Terminal
      // says so, and counts it in the bill.
      const prompt = terminal.usage.input_tokens;
      expect(terminal.paidAgain).toMatchObject({ attempts: 1, inputTokens: prompt });
      expect(terminal.paidAgain!.outputTokens).toBeGreaterThan(0);
      expect(terminal.paidAgain!.outputTokens).toBeLessThan(ANSWER.length / 4);
      const model = Object.values(terminal.modelUsage ?? {})[0];
      expect(model?.inputTokens).toBe(2 * prompt);
      expect(terminal.paidAgain!.costUSD).toBeGreaterThan(0);
    } finally {
      await first.kill('SIGKILL');
      await second?.kill('SIGTERM');
      await server.close();
    }
  }, 240_000);
});
