/**
 * `durable-agent tail` as a user runs it: the real CLI in its own process, against a job on a
 * local Temporal server whose worker (the production `createWorker`, heartbeat throttle included)
 * streams replies from the scripted model server through the real SDK.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScheduledFault, ScriptedReply, ScriptedSession } from '../src/model-server';
import { approvalSignal } from '../src/workflows/definitions';
import type { SessionInput } from '../src/shared/session';
import {
  ScriptedModelServer,
  TEST_TIMEOUTS,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './support/harness';
import { TS_NODE_ARGS } from './support/ts-run';

const root = path.join(__dirname, '..');

/** A reply of `count` 64-character segments, each marked «sNN», one per streamed delta. */
function segmentedText(count: number): string {
  return Array.from({ length: count }, (_, i) => `«s${String(i).padStart(2, '0')}» `.padEnd(63, 'x') + ' ').join('');
}

const marker = (i: number) => `«s${String(i).padStart(2, '0')}»`;

/** A running `durable-agent tail`, its output stamped as it arrives. */
interface TailProcess {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** When each marker first appeared on stdout (ms since the epoch). */
  seen: Map<string, number>;
  exited: Promise<number | null>;
}

function tail(id: string, env: NodeJS.ProcessEnv, markers: string[] = []): TailProcess {
  const child = spawn(process.execPath, [...TS_NODE_ARGS, path.join(root, 'src/client/cli.ts'), 'tail', id], {
    cwd: root,
    env,
  });
  let stdout = '';
  let stderr = '';
  const seen = new Map<string, number>();
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const now = Date.now();
    for (const m of markers) if (!seen.has(m) && stdout.includes(m)) seen.set(m, now);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, seen, exited };
}

const occurrences = (text: string, what: string) => text.split(what).length - 1;

const GATE_ID = 'toolu_gate';
/** A first turn that parks for approval (the job runs in default mode when gated). */
const GATE: ScriptedReply = {
  content: [{ type: 'tool_use', id: GATE_ID, name: 'Write', input: { file_path: 'gate.txt', content: 'go\n' } }],
};

/** Resolve once `tail` printed `what` on stdout. */
const printed = (live: TailProcess, what: string) =>
  waitFor(async () => (live.stdout().includes(what) ? true : undefined), 60_000, `tail to print ${what}`);

describe('durable-agent tail', () => {
  let env: TestWorkflowEnvironment;
  let cliEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = await startTemporal();
    cliEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: 'default',
      DURABLE_AGENT_HOME: tempDir('home'),
    };
    delete cliEnv.NO_COLOR;
  });

  afterAll(async () => {
    await env?.teardown();
  });

  /**
   * One job on its own model server and worker; `sent` stamps when each marked text delta left the
   * server. A `gated` job first parks on a Write needing approval, so a test can start `tail`
   * (which takes seconds) and then let the job go on with `open()`.
   */
  async function withJob<T>(
    name: string,
    session: ScriptedSession,
    body: (job: {
      id: string;
      server: ScriptedModelServer;
      sent: Map<string, number>;
      open: () => Promise<void>;
    }) => Promise<T>,
    options: { gated?: boolean; input?: Partial<SessionInput> } = {},
  ): Promise<T> {
    const { gated = false, input = {} } = options;
    const sent = new Map<string, number>();
    const server = await ScriptedModelServer.start(session, {
      onStreamFrame: (frame) => {
        const found = /«s\d\d»/.exec(frame);
        if (found && frame.includes('text_delta') && !sent.has(found[0])) sent.set(found[0], Date.now());
      },
    });
    const taskQueue = uniqueTaskQueue(name);
    const { worker, done } = await startWorker(env, server, { taskQueue, storeDir: tempDir('store') });
    try {
      const id = `${name}-${process.pid}-${Date.now()}`;
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: id,
        args: [
          sessionInput(makeWorkspace({ 'a.txt': 'alpha\n' }), {
            ...(gated ? { permissions: { mode: 'default' } } : {}),
            ...input,
          }),
        ],
      });
      const open = () => handle.signal(approvalSignal, { toolUseId: GATE_ID, decision: 'allow' });
      return await body({ id, server, sent, open });
    } finally {
      worker.shutdown();
      await Promise.all([done, server.close()]);
    }
  }

  test('shows the reply as it streams, not when the call ends; tailing again replays it and the Terminal', async () => {
    const count = 60;
    const text = segmentedText(count);
    const markers = Array.from({ length: count }, (_, i) => marker(i));
    const session: ScriptedSession = { replies: [GATE, { content: [{ type: 'text', text }] }], chunkDelayMs: 150 };
    await withJob(
      'tail-stream',
      session,
      async (job) => {
        const live = tail(job.id, cliEnv, markers);
        await printed(live, 'Write needs approval');
        await job.open();
        const code = await live.exited;
        const out = live.stdout();
        expect(live.stderr()).toBe(`tailing job ${job.id}; Ctrl-C stops watching, not the job\n`);
        expect(code).toBe(0);
        expect(out).toContain('Terminal: completed after 2 turns');
        // Every delta shows exactly once: streamed text is not printed again when the call ends.
        for (const m of markers) expect(occurrences(out, m)).toBe(1);
        expect(out).toContain(text.trimEnd());

        // The deltas showed while the stream went on, each soon after it left the model server.
        const streamEnd = Math.max(...job.sent.values());
        const beforeEnd = markers.filter((m) => (live.seen.get(m) ?? Infinity) < streamEnd);
        expect(beforeEnd.length).toBeGreaterThan(count * 0.8);
        const delays = markers
          .map((m) => (live.seen.get(m) ?? Infinity) - (job.sent.get(m) ?? 0))
          .sort((a, b) => a - b);
        expect(delays[Math.floor(delays.length / 2)]).toBeLessThan(1_000);

        // Tailing a finished job prints what happened and the Terminal, and exits with its status.
        const again = tail(job.id, cliEnv);
        expect(await again.exited).toBe(0);
        const replay = again.stdout();
        expect(again.stderr()).toBe(`job ${job.id} has ended (COMPLETED); what it did:\n`);
        expect(replay).toContain('→ Write');
        expect(replay).toContain('── turn 2 ──');
        for (const m of markers) expect(occurrences(replay, m)).toBe(1);
        expect(replay).toContain('Terminal: completed after 2 turns');
      },
      { gated: true },
    );
  });

  test('each retry shows its cause and next attempt; a reply cut mid-stream restarts visibly', async () => {
    const text = segmentedText(24);
    const http = (attempt: number, status: number, errorType: string): ScheduledFault => ({
      turn: 1,
      attempt,
      kind: 'http',
      status,
      errorType,
      retryAfterSeconds: 2,
    });
    const session: ScriptedSession = {
      replies: [GATE, { content: [{ type: 'text', text }] }],
      chunkDelayMs: 150,
      faults: [
        // The whole text block streams, then the stream fails.
        {
          turn: 1,
          attempt: 1,
          kind: 'stream_error',
          afterBlocks: 1,
          errorType: 'api_error',
          message: 'Internal error',
        },
        http(2, 529, 'overloaded_error'),
        http(3, 500, 'api_error'),
        http(4, 529, 'overloaded_error'),
      ],
    };
    await withJob(
      'tail-retries',
      session,
      async (job) => {
        const live = tail(job.id, cliEnv);
        await printed(live, 'Write needs approval');
        await job.open();
        expect(await live.exited).toBe(0);
        const out = live.stdout();
        const retries = out.split('\n').filter((line) => line.startsWith('↻ '));
        expect(retries).toHaveLength(4);
        const pattern =
          /^↻ model call: attempt (\d) failed: (.+) — attempt (\d) of 6 (?:at|started at) \d\d:\d\d:\d\d( \(in \d+ s\))?$/;
        const parsed = retries.map((line) => pattern.exec(line));
        expect(retries.filter((line) => !pattern.test(line))).toEqual([]);
        expect(parsed.map((m) => [m?.[1], m?.[3]])).toEqual([
          ['1', '2'],
          ['2', '3'],
          ['3', '4'],
          ['4', '5'],
        ]);
        expect(parsed[0]?.[2]).toContain('api_error: Internal error');
        expect(parsed[1]?.[2]).toContain('529 overloaded_error');
        expect(parsed[2]?.[2]).toContain('500 api_error');
        expect(parsed[3]?.[2]).toContain('529 overloaded_error');
        // The first attempt's text was on screen; the fifth streams it again, after a marker.
        expect(occurrences(out, '(retry: the reply restarts)')).toBe(1);
        const restart = out.indexOf('(retry: the reply restarts)');
        expect(out.indexOf(marker(0))).toBeLessThan(restart);
        expect(out.indexOf(marker(0), restart)).toBeGreaterThan(restart);
        expect(out).toContain('Terminal: completed after 2 turns');
        expect(job.server.requests.filter((request) => request.turn === 1)).toHaveLength(5);
      },
      // The production backoff (2 s, doubling) for the stream error, so every retry is seen.
      { gated: true, input: { timeouts: { ...TEST_TIMEOUTS, modelRetryInitialMs: 2_000 } } },
    );
  });

  test('Ctrl-C stops watching, says the job keeps running, and leaves it running', async () => {
    const session: ScriptedSession = {
      replies: [
        { content: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'a.txt' } }] },
        { content: [{ type: 'text', text: 'never reached' }] },
      ],
      // Each attempt hangs until the stream idle timeout (5 s): the job keeps running meanwhile.
      faults: [1, 2, 3, 4].map((attempt) => ({ turn: 1, attempt, kind: 'hang' as const })),
    };
    await withJob('tail-sigint', session, async (job) => {
      const live = tail(job.id, cliEnv);
      await printed(live, '← Read');
      live.child.kill('SIGINT');
      const code = await live.exited;
      expect(live.stderr()).toBe(
        `tailing job ${job.id}; Ctrl-C stops watching, not the job\n` +
          `stopped tailing; job ${job.id} keeps running (durable-agent tail ${job.id} to watch again)\n`,
      );
      expect(code).toBe(130);
      const handle = env.client.workflow.getHandle(job.id);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await handle.terminate('test over');
    });
  });

  test('Ctrl-C while no worker answers exits 130, without a stack trace', async () => {
    // Issue 26: the query still waiting for a worker failed once the connection closed, uncaught.
    const id = `tail-no-worker-${process.pid}-${Date.now()}`;
    const handle = await env.client.workflow.start('agentSession', {
      taskQueue: uniqueTaskQueue('no-worker-here'),
      workflowId: id,
      args: [sessionInput(makeWorkspace({ 'a.txt': 'alpha\n' }))],
    });
    try {
      const live = tail(id, cliEnv);
      for (let i = 0; i < 600 && !live.stderr().includes('tailing job'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Long enough for the follower's query to be waiting for a worker.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      live.child.kill('SIGINT');
      const code = await live.exited;
      expect(live.stderr()).not.toMatch(/Error|\n\s+at /);
      expect(live.stderr()).toContain(`stopped tailing; job ${id} keeps running`);
      expect(code).toBe(130);
    } finally {
      await handle.terminate('test over');
    }
  });

  test('an unknown id says so and points to `durable-agent ls`, without a stack trace', async () => {
    const run = tail('no-such-job', cliEnv);
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain('no job "no-such-job"');
    expect(run.stderr()).toContain('durable-agent ls');
    expect(run.stderr()).not.toMatch(/\n\s+at /);
    expect(run.stdout()).toBe('');
  });
});
