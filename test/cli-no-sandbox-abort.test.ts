/**
 * Issue 25: in a `--no-sandbox` job, `setsid sleep &` and a daemon's double fork survived an abort
 * and `stop`: the kill reached the command's process group, which they had left. Every process a
 * command starts carries the command's mark in its environment, and the kill finds them by it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { textReply, toolUse } from './support/jobs';
import { runCli as cli } from './support/cli';

/** Starts a daemon two ways, writes their pids, then waits as a long build would. */
const COMMAND =
  "setsid sleep 3000 & echo $! > a.pid; ( setsid sh -c 'sleep 3001 & echo $! > b.pid; wait' & ); sleep 3002";

const session: ScriptedSession = {
  name: 'cli-no-sandbox-abort',
  replies: [
    { content: [toolUse('d1', 'Bash', { command: COMMAND, timeout: 600_000 })] },
    { content: [toolUse('d2', 'Bash', { command: COMMAND, timeout: 600_000 })] },
    textReply('Done.'),
  ],
};

function running(pid: number): boolean {
  try {
    const state = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function daemons(workspace: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of ['a.pid', 'b.pid']) {
    const file = path.join(workspace, name);
    for (let i = 0; i < 600 && !(fs.existsSync(file) && fs.readFileSync(file, 'utf8').endsWith('\n')); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    pids.push(Number(fs.readFileSync(file, 'utf8')));
  }
  return pids;
}

async function gone(pids: number[]): Promise<boolean> {
  for (let i = 0; i < 100 && pids.some(running); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return !pids.some(running);
}

describe('a --no-sandbox job leaves no daemon behind', () => {
  const home = tempDir('home');
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;
  const started: number[] = [];

  beforeAll(async () => {
    server = await ScriptedModelServer.start({ ...session, chunkDelayMs: 0 });
    env = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: server.url,
      // `stop` lets running tools finish for this long (11 minutes by default), then cancels them.
      DURABLE_AGENT_SHUTDOWN_GRACE: '1s',
    };
    delete env.TEMPORAL_ADDRESS;
  });

  afterAll(async () => {
    await cli(['stop'], env);
    await server?.close();
    // Only if a test failed: what it started must not outlive it.
    for (const pid of started) if (running(pid)) process.kill(pid, 'SIGKILL');
  });

  const start = async (jobId: string): Promise<{ workspace: string; pids: number[] }> => {
    const workspace = makeWorkspace({ 'README.md': 'a project\n' });
    const run = await cli(
      ['run', 'Build it', '--cwd', workspace, '--job-id', jobId, '--no-sandbox', '--allowedTools', 'Bash', '--detach'],
      env,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.code).toBe(0);
    const pids = await daemons(workspace);
    started.push(...pids);
    expect(pids.every(running)).toBe(true);
    return { workspace, pids };
  };

  test('abort kills them', async () => {
    const { pids } = await start('no-sandbox-abort');
    expect((await cli(['abort', 'no-sandbox-abort', '--reason', 'enough'], env)).code).toBe(0);
    expect(await gone(pids)).toBe(true);
  }, 120_000);

  test('stop kills them', async () => {
    const { pids } = await start('no-sandbox-stop');
    const stop = await cli(['stop'], env);
    expect(stop.code).toBe(0);
    expect(await gone(pids)).toBe(true);
  }, 120_000);
});
