/**
 * Model calls run on their own task queue (`<taskQueue>@model`) with their own slots and rate,
 * on a real dev server with the production `createWorker`: a streaming reply never holds a tool
 * slot, the rate setting reaches the server, older jobs replay, and bad limits stop the worker
 * with one clear line.
 */
import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { WorkflowHandle } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { ScriptedSession } from '../src/model-server';
import { hostTaskQueue, modelTaskQueue } from '../src/shared/task-queues';
import type { Terminal } from '../src/shared/terminal';
import { AgentWorker } from '../src/worker/agent-worker';
import { createWorker, defaultHostId } from '../src/worker/create-worker';
import type { WorkerOptions } from '../src/worker/create-worker';
import { workerLimitsFromEnv } from '../src/worker/worker-limits';
import { MODEL_TASK_QUEUE_PATCH } from '../src/workflows/activity-proxies';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';
import { readCall, textReply, terminalOf } from './support/jobs';

const EventType = temporal.api.enums.v1.EventType;

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

/** Every job of a test asks the same script of one server: its turns are the same for each job. */
function readThenAnswer(name: string, chunkDelayMs = 0): ScriptedSession {
  return {
    name,
    replies: [{ content: [readCall('toolu_read', 'a.txt')] }, textReply('a.txt says hello.')],
    // Only the first reply streams slowly: that is the one whose overlap is measured.
    slowTurns: { 0: chunkDelayMs },
  };
}

/** A fresh in-process worker on its own task queue, its model calls going to `server`. */
async function workerFor(
  name: string,
  server: ScriptedModelServer,
  limits: Pick<WorkerOptions, 'toolConcurrency' | 'modelConcurrency' | 'modelRatePerSecond' | 'modelHeartbeatMs'>,
): Promise<{ worker: AgentWorker; taskQueue: string }> {
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createWorker({
    connection: env.nativeConnection,
    taskQueue,
    ...limits,
    activities: {
      anthropic: () => new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 }),
      storeDir: tempDir('store'),
      streamIdleMs: 10_000,
    },
  });
  return { worker, taskQueue };
}

/**
 * Start `jobs` jobs at once on a fresh worker with `limits` and wait for their Terminals; returns
 * when each request reached the model server (ms since epoch, in arrival order) and the handles.
 */
async function runJobs(
  name: string,
  jobs: number,
  session: ScriptedSession,
  limits: Pick<WorkerOptions, 'toolConcurrency' | 'modelConcurrency' | 'modelRatePerSecond'>,
): Promise<{ arrivals: Array<{ at: number; turn: number }>; handles: WorkflowHandle[]; server: ScriptedModelServer }> {
  const server = await ScriptedModelServer.start(session);
  const { worker, taskQueue } = await workerFor(name, server, limits);
  const arrivals: Array<{ at: number; turn: number }> = [];
  const watch = setInterval(() => {
    while (arrivals.length < server.requests.length) {
      arrivals.push({ at: Date.now(), turn: server.requests[arrivals.length]!.turn });
    }
  }, 5);
  try {
    const workspace = makeWorkspace({ 'a.txt': 'hello\n' });
    return await worker.runUntil(async () => {
      const handles = await Promise.all(
        Array.from({ length: jobs }, (_, i) =>
          env.client.workflow.start('agentSession', {
            taskQueue,
            workflowId: `${name}-${process.pid}-${Date.now()}-${i}`,
            args: [sessionInput(workspace)],
          }),
        ),
      );
      for (const handle of handles) expect(((await handle.result()) as Terminal).reason).toBe('completed');
      return { arrivals: [...arrivals], handles, server };
    });
  } finally {
    clearInterval(watch);
    await server.close();
  }
}

/** The task queue of each activity the job scheduled, by activity type, in order. */
async function scheduledQueues(handle: WorkflowHandle): Promise<Array<[string, string]>> {
  const history = await handle.fetchHistory();
  return (history.events ?? [])
    .filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    .map((event) => {
      const attributes = event.activityTaskScheduledEventAttributes;
      return [attributes?.activityType?.name ?? '?', attributes?.taskQueue?.name ?? '?'];
    });
}

/** The patch ids a history's markers record. */
function patchMarkers(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? [])
    .filter((event) => event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED)
    .map((event) => {
      const data = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
      return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id : '';
    });
}

describe('model calls on their own task queue', () => {
  test('a new job schedules its model calls on <taskQueue>@model, its tools and set-up on its host queue', async () => {
    const { handles } = await runJobs('model-queue', 1, readThenAnswer('model-queue'), {});
    const handle = handles[0]!;
    const taskQueue = (await handle.describe()).taskQueue;
    expect(modelTaskQueue(taskQueue)).toBe(`${taskQueue}@model`);
    const queues = await scheduledQueues(handle);
    const byType = (type: string) => queues.filter(([name]) => name === type).map(([, queue]) => queue);
    expect(byType('callModel')).toEqual([`${taskQueue}@model`, `${taskQueue}@model`]);
    // Tools and workspace reads go to the queue of the host that holds the workspace; the claim
    // that finds it, to the job's own queue.
    const host = hostTaskQueue(taskQueue, defaultHostId());
    expect(byType('claimWorkspace')).toEqual([taskQueue]);
    expect(byType('runTool')).toEqual([host]);
    expect(byType('loadSettings')).toEqual([host]);
    expect(byType('buildSystemPrompt')).toEqual([host]);
    expect(patchMarkers(await handle.fetchHistory())).toContain(MODEL_TASK_QUEUE_PATCH);
  });

  test('a job recorded before the patch replays, its model calls on the job queue as they were', async () => {
    const file = path.join(__dirname, 'histories', 'before-model-task-queue', 'check-login.json');
    const history = historyFromJSON(JSON.parse(fs.readFileSync(file, 'utf8')));
    expect(patchMarkers(history)).not.toContain(MODEL_TASK_QUEUE_PATCH);
    const scheduled = (history.events ?? []).filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
    );
    expect(scheduled.length).toBeGreaterThan(0);
    for (const event of scheduled) {
      expect(event.activityTaskScheduledEventAttributes?.taskQueue?.name).not.toContain('@model');
    }
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.DURABLE_AGENT_WORKFLOW_BUNDLE as string } },
      history,
      'replay-before-model-task-queue',
    );
  });

  test('with one tool slot, two jobs stream their model calls at the same time', async () => {
    // Each first reply streams for about 3 s (8 frames, 400 ms apart). Had the model calls needed
    // the single tool slot, the second job's request would come only after the first reply ended.
    const { arrivals } = await runJobs('one-tool-slot', 2, readThenAnswer('one-tool-slot', 400), {
      toolConcurrency: 1,
    });
    const firstReplies = arrivals.filter((arrival) => arrival.turn === 0);
    expect(firstReplies).toHaveLength(2);
    expect(firstReplies[1]!.at - firstReplies[0]!.at).toBeLessThan(1_500);
    expect(arrivals).toHaveLength(4);
  });

  test('DURABLE_AGENT_MODEL_RATE reaches the server: 1 model call a second across the queue', async () => {
    // Unlimited, five jobs' first requests come together. At 1 a second they are spread out: over
    // 4 s, or 3 s when the server's token bucket lets the first two through together. The server
    // does not hold the rate to the millisecond (CI once saw four jobs spread over 1.13 s instead
    // of 2 s), so the test asks for 2 s: twice what the unlimited jobs may take, and a spread that
    // only a limit can make.
    const unlimited = await runJobs('rate-unlimited', 5, readThenAnswer('rate-unlimited'), {});
    const spread = (arrivals: Array<{ at: number; turn: number }>) => {
      const first = arrivals.filter((arrival) => arrival.turn === 0).map((arrival) => arrival.at);
      return Math.max(...first) - Math.min(...first);
    };
    expect(spread(unlimited.arrivals)).toBeLessThan(1_000);
    const limited = await runJobs('rate-limited', 5, readThenAnswer('rate-limited'), {
      ...workerLimitsFromEnv({ DURABLE_AGENT_MODEL_RATE: '1' }),
    });
    expect(spread(limited.arrivals)).toBeGreaterThanOrEqual(2_000);
  });

  test("DURABLE_AGENT_MODEL_HEARTBEAT holds a streaming reply's heartbeats back for that long", async () => {
    // The first reply streams for about 4 s (8 frames, 500 ms apart). How often a heartbeat
    // reached the server shows in the call's pending info: a new lastHeartbeatTime each time.
    const beats = async (name: string, limits: Pick<WorkerOptions, 'modelHeartbeatMs'>): Promise<number> => {
      const server = await ScriptedModelServer.start(readThenAnswer(name, 500));
      const { worker, taskQueue } = await workerFor(name, server, limits);
      const seen = new Set<string>();
      try {
        return await worker.runUntil(async () => {
          const handle = await env.client.workflow.start('agentSession', {
            taskQueue,
            workflowId: `${name}-${process.pid}-${Date.now()}`,
            args: [sessionInput(makeWorkspace({ 'a.txt': 'hello\n' }))],
          });
          const result = terminalOf(handle);
          let done = false;
          void result.finally(() => (done = true));
          while (!done && server.requests.length < 2) {
            const pending = (await handle.describe()).raw.pendingActivities ?? [];
            for (const activity of pending) {
              const at = activity.lastHeartbeatTime;
              if (activity.activityType?.name === 'callModel' && at) seen.add(`${at.seconds}.${at.nanos}`);
            }
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          expect((await result).reason).toBe('completed');
          return seen.size;
        });
      } finally {
        await server.close();
      }
    };
    expect(await beats('heartbeat-default', {})).toBeGreaterThanOrEqual(4);
    // Held back for 10 s: the first heartbeat goes at once, and at most one more (the one pending
    // when the reply ends) within a 4 s stream.
    expect(
      await beats('heartbeat-held', workerLimitsFromEnv({ DURABLE_AGENT_MODEL_HEARTBEAT: '10s' })),
    ).toBeLessThanOrEqual(2);
  });

  test('bad worker limits stop the real worker with one clear line naming the variable', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [
        { DURABLE_AGENT_MODEL_CONCURRENCY: 'lots' },
        'DURABLE_AGENT_MODEL_CONCURRENCY="lots" is not allowed: use a whole number from 1 to 10000 (unset: 200).',
      ],
      [
        { DURABLE_AGENT_TOOL_CONCURRENCY: '0' },
        'DURABLE_AGENT_TOOL_CONCURRENCY="0" is not allowed: use a whole number from 1 to 10000 (unset: 32).',
      ],
      [
        { DURABLE_AGENT_MODEL_RATE: '-2' },
        'DURABLE_AGENT_MODEL_RATE="-2" is not allowed: use a number of model calls per second greater than 0',
      ],
    ];
    for (const [extraEnv, line] of cases) {
      const error = await spawnWorkerProcess({
        address: env.address,
        taskQueue: uniqueTaskQueue('bad-limits'),
        modelUrl: 'http://127.0.0.1:9',
        home: tempDir('home'),
        extraEnv,
      }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toContain('exited with 1');
      expect(error?.message).toContain(line);
      expect(error?.message).not.toMatch(/\n\s+at /);
    }
  });

  test('worker limits from the environment: defaults, whole slot counts, a positive rate', () => {
    expect(workerLimitsFromEnv({})).toEqual({ toolConcurrency: 32, modelConcurrency: 200, workflowTuning: {} });
    expect(
      workerLimitsFromEnv({
        DURABLE_AGENT_TOOL_CONCURRENCY: ' 8 ',
        DURABLE_AGENT_MODEL_CONCURRENCY: '500',
        DURABLE_AGENT_MODEL_RATE: '0.5',
        DURABLE_AGENT_MAX_CACHED_WORKFLOWS: '0',
      }),
    ).toEqual({
      toolConcurrency: 8,
      modelConcurrency: 500,
      modelRatePerSecond: 0.5,
      workflowTuning: { maxCachedWorkflows: 0 },
    });
    for (const bad of ['1.5', '-1', '10001', 'x']) {
      expect(() => workerLimitsFromEnv({ DURABLE_AGENT_MODEL_CONCURRENCY: bad })).toThrow(
        'DURABLE_AGENT_MODEL_CONCURRENCY=',
      );
    }
    for (const bad of ['0', 'fast', '1/s']) {
      expect(() => workerLimitsFromEnv({ DURABLE_AGENT_MODEL_RATE: bad })).toThrow('DURABLE_AGENT_MODEL_RATE=');
    }
    expect(workerLimitsFromEnv({ DURABLE_AGENT_MODEL_HEARTBEAT: '5s' }).modelHeartbeatMs).toBe(5_000);
    expect(workerLimitsFromEnv({ DURABLE_AGENT_MODEL_HEARTBEAT: '2000ms' }).modelHeartbeatMs).toBe(2_000);
    for (const bad of ['5', '100ms', '31s', '1.5s', '1m']) {
      expect(() => workerLimitsFromEnv({ DURABLE_AGENT_MODEL_HEARTBEAT: bad })).toThrow(
        `DURABLE_AGENT_MODEL_HEARTBEAT=${JSON.stringify(bad)} is not allowed: use a duration from 500ms to 30s`,
      );
    }
  });

  test('when one of the two workers fails, the other is shut down and run() rejects with the failure', async () => {
    // Stand-ins with Worker's state machine: run() until shutdown(), or until told to fail.
    const fake = () => {
      let state: 'INITIALIZED' | 'RUNNING' | 'STOPPED' | 'FAILED' = 'INITIALIZED';
      let settle: ((error?: Error) => void) | undefined;
      return {
        getState: () => state,
        run: () => {
          state = 'RUNNING';
          return new Promise<void>((resolve, reject) => {
            settle = (error) => {
              state = error ? 'FAILED' : 'STOPPED';
              if (error) reject(error);
              else resolve();
            };
          });
        },
        shutdown: () => settle?.(),
        fail: (error: Error) => settle?.(error),
      };
    };
    const main = fake();
    const model = fake();
    const worker = new AgentWorker(main as unknown as Worker, model as unknown as Worker);
    const running = worker.run();
    expect(worker.getState()).toBe('RUNNING');
    model.fail(new Error('model queue poller died'));
    await expect(running).rejects.toThrow('model queue poller died');
    expect(main.getState()).toBe('STOPPED');
    expect(worker.getState()).toBe('FAILED');
  });
});
