import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedSession } from '../src/model-server';
import { GroupRegistry } from '../src/activities/store/group-registry';
import { DEFAULT_SESSION_TIMEOUTS } from '../src/shared/session';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
  waitFor,
  type WorkerProcess,
} from './support/harness';
import { isAlive, resultText, textReply, toolResultFor, toolUse, terminalOf } from './support/jobs';

/** One Bash call, then the answer. */
function bashSession(name: string, command: string): ScriptedSession {
  return {
    name,
    replies: [{ content: [toolUse('toolu_bash', 'Bash', { command })] }, textReply('done')],
  };
}

/** The group the worker has on record for its running command. */
async function recordedGroup(home: string): Promise<number> {
  return waitFor(
    async () => {
      const [found] = await new GroupRegistry(path.join(home, 'store')).list();
      return found?.record.pgid;
    },
    60_000,
    'the command to start',
  );
}

describe('a worker SIGKILLed while Bash runs, a new worker started at once (production timeouts)', () => {
  let env: TestWorkflowEnvironment;
  const workers: WorkerProcess[] = [];
  const servers: ScriptedModelServer[] = [];

  beforeAll(async () => {
    env = await startTemporal();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.kill('SIGKILL')));
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  afterAll(async () => {
    await env?.teardown();
  });

  /** The job on a worker of its own, with the sandbox on (the default): the command runs under bwrap. */
  async function start(name: string, session: ScriptedSession) {
    const server = await ScriptedModelServer.start(session);
    servers.push(server);
    const home = tempDir('adopt-home');
    const workspace = makeWorkspace({});
    const taskQueue = uniqueTaskQueue(name);
    const spawn = async () => {
      const worker = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });
      workers.push(worker);
      return worker;
    };
    const first = await spawn();
    const handle = await env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: `${name}-${Date.now()}`,
      args: [sessionInput(workspace, { timeouts: DEFAULT_SESSION_TIMEOUTS })],
    });
    return { server, home, workspace, first, spawn, handle };
  }

  test('the retry adopts the running command at once: one run, its real output, no 30 s wait', async () => {
    const command = 'echo begin; sleep 5; echo once >> effects.log; echo end';
    const job = await start('adopt-bash', bashSession('adopt-bash', command));
    const pgid = await recordedGroup(job.home);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await job.first.kill('SIGKILL');
    const killedAt = Date.now();
    // Its worker is gone; the command runs on.
    expect(isAlive(pgid)).toBe(true);
    const second = await job.spawn();
    const readyAt = Date.now();

    const terminal = await terminalOf(job.handle);
    const took = Date.now() - readyAt;
    process.stdout.write(
      `SIGKILL during Bash -> job completed ${Date.now() - killedAt} ms later (new worker up after ${readyAt - killedAt} ms)\n`,
    );
    expect(terminal).toMatchObject({ reason: 'completed', finalText: 'done' });
    // What the uninterrupted command answers; before adoption: "interrupted ... may have partly run".
    expect(resultText(JSON.parse(toolResultFor(job.server, 'toolu_bash')))).toBe('begin\nend');
    expect(fs.readFileSync(path.join(job.workspace, 'effects.log'), 'utf8')).toBe('once\n');
    // The sandbox's stand-ins for the missing .git, .vscode, ... that the dead worker made are gone.
    expect(fs.readdirSync(job.workspace)).toEqual(['effects.log']);
    expect(second.logs()).toContain('runTool of');
    // The rest of the command (about 4 s) and one model turn: well before the 30 s tool heartbeat
    // timeout a retry would otherwise wait for.
    expect(took).toBeLessThan(DEFAULT_SESSION_TIMEOUTS.toolHeartbeatMs / 2);
    expect(isAlive(pgid)).toBe(false);
  }, 180_000);

  test('a read-only command its dead worker left running is killed by the next worker, and its retry runs it again', async () => {
    const job = await start('orphan-bash', bashSession('orphan-bash', 'sleep 20; echo slept'));
    const pgid = await recordedGroup(job.home);
    await job.first.kill('SIGKILL');
    const second = await job.spawn();
    const readyAt = Date.now();
    await waitFor(async () => (isAlive(pgid) ? undefined : true), 20_000, 'the orphaned group to be killed');
    // Killed by the new worker's first look, not ended by itself 20 s after it started (some 17 s
    // from here).
    expect(Date.now() - readyAt).toBeLessThan(10_000);
    // The worker logs the kill once the group's sandbox stand-ins are released too, a moment after
    // the group is gone: wait for the line rather than race it.
    await waitFor(
      async () => (second.logs().includes(`killed process group ${pgid}`) ? true : undefined),
      5_000,
      'the worker to log the kill',
    );
    // Nor is anything left of its sandbox's stand-ins.
    expect(fs.readdirSync(job.workspace)).toEqual([]);
    const terminal = await terminalOf(job.handle);
    expect(terminal).toMatchObject({ reason: 'completed', finalText: 'done' });
    expect(resultText(JSON.parse(toolResultFor(job.server, 'toolu_bash')))).toBe('slept');
  }, 180_000);
});
