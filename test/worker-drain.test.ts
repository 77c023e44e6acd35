/**
 * SIGTERM drains a worker: it takes no new work, lets the running Bash finish (its tool_result is
 * the real output, not "interrupted"), exits 0, and another worker finishes the job. Real worker
 * processes, a real Temporal dev server, production timeouts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { stopEmbedded } from '../src/client/embedded';
import { DEFAULT_SHUTDOWN_GRACE_MS, shutdownGraceFromEnv } from '../src/worker/shutdown-grace';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './support/harness';
import type { WorkerProcess } from './support/harness';
import { liveProcesses, textReply, toolResultFor, toolUse, waitForSnapshot, terminalOf } from './support/jobs';

/** The identity each event of the history was handled by, for events that name one. */
function identities(events: Array<Record<string, unknown>>, attribute: string): string[] {
  return events
    .map((event) => (event[attribute] as { identity?: string } | undefined)?.identity)
    .filter((identity): identity is string => typeof identity === 'string');
}

/** Write to the command's FIFO; fails (ENXIO) rather than blocks when nothing reads it any more. */
function openGate(fifo: string): void {
  let fd: number;
  try {
    fd = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    throw new Error(`the command no longer waits on its gate: ${(error as Error).message}`, { cause: error });
  }
  try {
    fs.writeSync(fd, 'gate open\n');
  } finally {
    fs.closeSync(fd);
  }
}

describe('worker shutdown drains running tools', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  test('SIGTERM mid-Bash: the call completes with its real output, the worker exits 0, a second worker finishes', async () => {
    // The command waits for the test to open its gate, so it is still running when SIGTERM comes;
    // it writes a file, so a retry would not run it again but answer "interrupted".
    const gate = `drain-gate-${process.pid}.fifo`;
    const command = `cat ${gate}; touch drained.txt; echo drained-output-7f3a`;
    const server = await ScriptedModelServer.start({
      name: 'worker-drain',
      replies: [
        { content: [{ type: 'text', text: 'Running it.' }, toolUse('toolu_drain', 'Bash', { command })] },
        textReply('The command printed its output.'),
      ],
    });
    const taskQueue = uniqueTaskQueue('drain');
    const home = tempDir('home');
    const workspace = makeWorkspace({});
    execFileSync('mkfifo', [path.join(workspace, gate)]);
    let first: WorkerProcess | undefined;
    let second: WorkerProcess | undefined;
    try {
      // The production grace time (the harness shortens it for other tests' clean-up).
      first = await spawnWorkerProcess({
        address: env.address,
        taskQueue,
        modelUrl: server.url,
        home,
        extraEnv: { DURABLE_AGENT_SHUTDOWN_GRACE: '11m' },
      });
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `drain-${Date.now()}`,
        // Production timeouts: a 30 s tool heartbeat timeout, 60 s for model calls.
        args: [sessionInput(workspace, { timeouts: undefined })],
      });
      await waitForSnapshot(handle, (s) => s.runningTools.some((t) => t.toolUseId === 'toolu_drain'), 'Bash to start');
      await waitFor(async () => liveProcesses(gate)[0], 10_000, 'the command to run');
      // The second worker is up before the first is told to stop: a retry would start on it at once.
      second = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });

      first.child.kill('SIGTERM');
      const exited = first.kill('SIGTERM').then(() => Date.now());
      await waitFor(async () => /SIGTERM: taking no new work/.test(first!.logs()) || undefined, 10_000, 'the drain');
      // Long enough for a cancelled attempt to fail and its retry to start on the second worker.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(first.child.exitCode).toBeNull();
      const gateAt = Date.now();
      openGate(path.join(workspace, gate));
      const exitedAt = await exited;
      expect({ code: first.child.exitCode, signal: first.child.signalCode }).toEqual({ code: 0, signal: null });
      // It exited once the command had finished, not before.
      expect(exitedAt).toBeGreaterThanOrEqual(gateAt);
      expect(first.logs()).toMatch(/SIGTERM: taking no new work; 1 running activity may finish within 11m/);
      expect(first.logs()).toContain('durable-agent worker stopped');

      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.finalText).toBe('The command printed its output.');
      expect(server.requests).toHaveLength(2);
      const result = toolResultFor(server, 'toolu_drain');
      expect(result).toContain('gate open');
      expect(result).toContain('drained-output-7f3a');
      expect(result).not.toContain('interrupted');
      expect(result).not.toContain('"is_error":true');
      expect(fs.existsSync(path.join(workspace, 'drained.txt'))).toBe(true);

      // The tool ran once, on the first worker; everything after it on the second.
      const events = (await handle.fetchHistory()).events as unknown as Array<Record<string, unknown>>;
      const toolScheduled = events.findIndex(
        (e) =>
          (e.activityTaskScheduledEventAttributes as { activityId?: string } | undefined)?.activityId ===
          'tool-toolu_drain',
      );
      const after = events.slice(toolScheduled + 1);
      const toolStarted = after.find((e) => e.activityTaskStartedEventAttributes);
      expect(toolStarted?.activityTaskStartedEventAttributes).toMatchObject({
        attempt: 1,
        identity: expect.stringMatching(new RegExp(`:${first.child.pid}$`)),
      });
      const later = [
        ...identities(after.slice(after.indexOf(toolStarted!) + 1), 'activityTaskStartedEventAttributes'),
        ...identities(after, 'workflowTaskStartedEventAttributes'),
      ];
      expect(later.length).toBeGreaterThan(1);
      expect(later.filter((id) => !id.endsWith(`:${second!.child.pid}`))).toEqual([]);
    } finally {
      // Whatever the test saw, nothing it started outlives it: not a worker, not a command.
      await first?.kill('SIGKILL');
      await second?.kill('SIGKILL');
      for (const pid of liveProcesses(gate)) process.kill(pid, 'SIGKILL');
      await server.close();
    }
  });

  test('a bad DURABLE_AGENT_SHUTDOWN_GRACE stops the worker with one clear line', async () => {
    const start = spawnWorkerProcess({
      address: env.address,
      taskQueue: uniqueTaskQueue('bad-grace'),
      modelUrl: 'http://127.0.0.1:9',
      home: tempDir('home'),
      extraEnv: { DURABLE_AGENT_SHUTDOWN_GRACE: 'soon' },
    });
    const error = await start.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain('exited with 1');
    expect(error?.message).toContain(
      'DURABLE_AGENT_SHUTDOWN_GRACE="soon" is not a duration: use a whole number followed by s, m or h',
    );
    expect(error?.message).not.toMatch(/\n\s+at /);
  });

  test('DURABLE_AGENT_SHUTDOWN_GRACE: the Bash maximum and a minute by default; s, m or h; anything else refused', () => {
    expect(DEFAULT_SHUTDOWN_GRACE_MS).toBe(11 * 60_000);
    expect(shutdownGraceFromEnv({})).toBe(DEFAULT_SHUTDOWN_GRACE_MS);
    expect(shutdownGraceFromEnv({ DURABLE_AGENT_SHUTDOWN_GRACE: '15m' })).toBe(15 * 60_000);
    expect(shutdownGraceFromEnv({ DURABLE_AGENT_SHUTDOWN_GRACE: ' 90s ' })).toBe(90_000);
    expect(shutdownGraceFromEnv({ DURABLE_AGENT_SHUTDOWN_GRACE: '1h' })).toBe(60 * 60_000);
    expect(shutdownGraceFromEnv({ DURABLE_AGENT_SHUTDOWN_GRACE: '0s' })).toBe(0);
    for (const bad of ['15', '-1m', '1.5m', '15 minutes', '2d', '25h']) {
      expect(() => shutdownGraceFromEnv({ DURABLE_AGENT_SHUTDOWN_GRACE: bad })).toThrow(
        `DURABLE_AGENT_SHUTDOWN_GRACE=${JSON.stringify(bad)} is not a duration`,
      );
    }
  });

  test('`stop` lets a draining worker finish instead of killing it after 10 s', async () => {
    const home = tempDir('home');
    // Stands in for a worker whose running tool needs 12 s more after SIGTERM.
    const child = spawn(
      process.execPath,
      [
        '-e',
        "process.on('SIGTERM', () => setTimeout(() => process.exit(0), 12000)); setInterval(() => {}, 1000); console.log('ready')",
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    // Its SIGTERM handler is in place once it says so (a loaded machine starts node slowly).
    const ready = new Promise((resolve) => child.stdout?.once('data', resolve));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      await ready;
      fs.writeFileSync(
        path.join(home, 'embedded-worker.json'),
        JSON.stringify({ pid: child.pid, startedAt: new Date().toISOString(), shutdownGraceMs: 60_000 }),
      );
      const waits: string[] = [];
      const startedAt = Date.now();
      const stopped = await stopEmbedded(home, (message) => waits.push(message));
      expect(Date.now() - startedAt).toBeGreaterThan(11_000);
      expect(stopped).toEqual([`worker (pid ${child.pid})`]);
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(waits).toHaveLength(1);
      expect(waits[0]).toContain(
        `waiting for the background worker (pid ${child.pid}) to let the model calls and tools it runs finish (at most 1m`,
      );
      expect(fs.existsSync(path.join(home, 'embedded-worker.json'))).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
