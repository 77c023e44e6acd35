/**
 * Issue 26: on the embedded default a worker killed mid-call was never started again: a foreground
 * `run` waited forever ("is `durable-agent worker` running?"), a `--detach`ed job until someone
 * typed a command. The background worker is now supervised: a dead one is back within seconds,
 * and the call it was making is retried, with nobody typing anything.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import { ScriptedModelServer, tempDir } from './support/harness';
import { textReply } from './support/jobs';
import { childrenOf, runCli as cli, startCli } from './support/cli';

const session: ScriptedSession = { name: 'supervised-worker', replies: [textReply('Done.')] };

/** The process running the worker's main module, among the embedded record's process and its children. */
function workerProcess(home: string): number {
  const { pid } = JSON.parse(fs.readFileSync(path.join(home, 'embedded-worker.json'), 'utf8')) as { pid: number };
  for (const candidate of [pid, ...childrenOf(pid)]) {
    const cmdline = fs.readFileSync(`/proc/${candidate}/cmdline`, 'utf8');
    if (/worker[/\\]main\.[jt]s/.test(cmdline)) return candidate;
  }
  throw new Error(`no worker process under pid ${pid}`);
}

describe('the embedded worker is supervised', () => {
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    // The first model call hangs: the worker is killed in the middle of it.
    server = await ScriptedModelServer.start({
      ...session,
      chunkDelayMs: 0,
      faults: [{ turn: 0, attempt: 1, kind: 'hang' }],
    });
    env = {
      ...process.env,
      DURABLE_AGENT_HOME: tempDir('home'),
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: server.url,
    };
    delete env.TEMPORAL_ADDRESS;
  });

  afterEach(async () => {
    await cli(['stop'], env);
    await server?.close();
  });

  /** Kill the worker in the middle of the first call; seconds until the call is made again. */
  async function killAndTime(): Promise<number> {
    await server.waitForRequest(0, 1, 60_000);
    const killedAt = Date.now();
    process.kill(workerProcess(env.DURABLE_AGENT_HOME as string), 'SIGKILL');
    await server.waitForRequest(0, 2, 60_000);
    return (Date.now() - killedAt) / 1000;
  }

  test('a --detach-ed job goes on with nobody typing', async () => {
    const workspace = tempDir('ws');
    const started = await cli(['run', 'Say done', '--cwd', workspace, '--job-id', 'sup-detach', '--detach'], env);
    expect(started.code).toBe(0);
    const seconds = await killAndTime();
    console.log(`--detach: the model call came again ${seconds.toFixed(1)} s after the worker's SIGKILL`);
    expect(seconds).toBeLessThan(20);
    const log = fs.readFileSync(path.join(env.DURABLE_AGENT_HOME as string, 'logs', 'worker.log'), 'utf8');
    expect(log).toMatch(/durable-agent supervisor: the worker \(pid \d+\) was killed by SIGKILL; starting it again/);
  }, 120_000);

  test('a foreground run follows its job to the end', async () => {
    const workspace = tempDir('ws');
    const run = startCli(
      ['run', 'Say done', '--cwd', workspace, '--job-id', 'sup-run', '--output-format', 'json'],
      env,
    );
    try {
      const seconds = await killAndTime();
      console.log(`foreground run: the model call came again ${seconds.toFixed(1)} s after the worker's SIGKILL`);
      expect(seconds).toBeLessThan(20);
      const result = await run.done;
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ subtype: 'success', result: 'Done.' });
      expect(result.stderr).not.toContain('is `durable-agent worker` running?');
    } finally {
      run.child.kill('SIGKILL');
    }
  }, 120_000);
});
