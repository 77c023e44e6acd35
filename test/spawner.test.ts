/**
 * The worker's command helper (`src/worker/spawner.ts`): short commands start from a small
 * process of their own, not from the worker, whose forks cost it more the larger it grows. They
 * behave as `execFile`'s do (output, exit code, timeout, a file that is not there), the helper
 * comes back after it dies, never keeps the worker alive, and goes when the worker does.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildSystemPrompt } from '../src/activities/system-prompt';
import { FileContentStore } from '../src/activities/store/content-store';
import { runCommand, setSpawnerIdleMs, spawnPiped, spawnerPid, stopSpawner } from '../src/worker/spawner';
import { tempDir } from './support/harness';
import { TS_NODE_ARGS } from './support/ts-run';

const shEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** Whether `pid` runs: a zombie (exited, not yet reaped by its new parent) does not. */
function alive(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The pids whose parent is `parent`. */
function childrenOf(parent: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === String(parent);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

describe('the worker command helper', () => {
  afterAll(() => stopSpawner());

  test('a command starts from the helper, with only the environment it is given', async () => {
    const { stdout } = await runCommand('sh', ['-c', 'echo "$PPID $FOO ${ANTHROPIC_API_KEY:-none}"'], {
      env: { ...shEnv, FOO: 'bar' },
    });
    const [parent, foo, key] = stdout.trim().split(' ');
    expect(spawnerPid()).toBeDefined();
    expect(Number(parent)).toBe(spawnerPid());
    expect(Number(parent)).not.toBe(process.pid);
    expect(foo).toBe('bar');
    expect(key).toBe('none');
    // The helper itself holds nothing of the worker's environment but PATH.
    const environ = fs.readFileSync(`/proc/${spawnerPid()}/environ`, 'utf8').split('\0').filter(Boolean);
    const names = environ.map((entry) => entry.split('=')[0]).filter((name) => !name!.startsWith('NODE_CHANNEL_'));
    // And, run from TypeScript sources as here, where the tests' preload keeps compiled files (a
    // path): a built worker's helper gets PATH alone.
    expect(names).toEqual(['PATH', ...(process.env.DURABLE_AGENT_TS_CACHE ? ['DURABLE_AGENT_TS_CACHE'] : [])]);
  });

  test('a failing command rejects as execFile does: exit code, output, and the cwd it ran in', async () => {
    const cwd = tempDir('spawner-cwd');
    const error = await runCommand('sh', ['-c', 'pwd; echo oops >&2; exit 3'], { cwd, env: shEnv }).catch(
      (e: unknown) => e as { code?: number; stdout: string; stderr: string },
    );
    expect(error).toMatchObject({ code: 3, stdout: `${fs.realpathSync(cwd)}\n`, stderr: 'oops\n' });
  });

  test('a timeout kills the command; a missing program is ENOENT', async () => {
    const started = Date.now();
    const timedOut = await runCommand('sleep', ['5'], { timeout: 200, env: shEnv }).catch(
      (e: unknown) => e as { killed?: boolean; signal?: string },
    );
    expect(timedOut).toMatchObject({ killed: true, signal: 'SIGTERM' });
    expect(Date.now() - started).toBeLessThan(4900);
    const missing = await runCommand('/no/such/program', [], { env: shEnv }).catch(
      (e: unknown) => e as { code?: string },
    );
    expect(missing).toMatchObject({ code: 'ENOENT' });
  });

  test('a helper that dies fails the command it ran, and the next command gets a new helper', async () => {
    await runCommand('true', [], { env: shEnv });
    const first = spawnerPid()!;
    const running = runCommand('sleep', ['5'], { env: shEnv });
    expect(await waitFor(() => childrenOf(first).length === 1, 10_000)).toBe(true);
    process.kill(first, 'SIGKILL');
    await expect(running).rejects.toThrow(/helper exited while the command ran/);
    const { stdout } = await runCommand('sh', ['-c', 'echo $PPID'], { env: shEnv });
    expect(Number(stdout.trim())).toBe(spawnerPid());
    expect(spawnerPid()).not.toBe(first);
  });

  test("a helper SIGKILLed just after it started a process: the worker still learns the process's pid before calling it lost", async () => {
    await runCommand('true', [], { env: shEnv });
    const first = spawnerPid()!;
    const dir = tempDir('late-spawn');
    const started = path.join(dir, 'started');
    const run = spawnPiped('sh', ['-c', `touch "${started}"; exec sleep 1000`], dir, shEnv, { detached: true });
    const lost = new Promise<number | undefined>((resolve) => run.once('lost', () => resolve(run.pid)));
    // Hold this (the worker's) event loop while the helper starts the process and tells of it, and
    // while the helper dies: the "spawn" message and the helper's end then wait to be read together.
    const hold = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    for (const until = Date.now() + 10_000; !fs.existsSync(started) && Date.now() < until;) hold(10);
    hold(100);
    process.kill(first, 'SIGKILL');
    hold(200);
    const pid = await lost;
    try {
      // Without the pid, whoever hears of the loss cannot stop the process group, which outlives the helper.
      expect(pid).toBeDefined();
      expect(alive(pid!)).toBe(true);
    } finally {
      // Whatever the worker knew, nothing of this test runs on: its sleep is found by its folder.
      for (const each of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
        const inDir = (() => {
          try {
            return fs.readlinkSync(`/proc/${each}/cwd`) === fs.realpathSync(dir);
          } catch {
            return false;
          }
        })();
        if (inDir) process.kill(-Number(each), 'SIGKILL');
      }
    }
  });

  test('the helper keeps no process alive, and goes (with its commands) when its worker is SIGKILLed', async () => {
    const script = `
      const { runCommand, spawnerPid } = require(${JSON.stringify(path.join(__dirname, '..', 'src', 'worker', 'spawner.ts'))});
      const env = { PATH: process.env.PATH };
      runCommand('true', [], { env }).then(() => {
        console.log('helper ' + spawnerPid());
        if (process.argv[1] === 'hold') {
          runCommand('sleep', ['30'], { env }).catch(() => undefined);
          setTimeout(() => console.log('sleeping'), 300);
        }
      });`;
    const run = (mode: string) => {
      const child = spawn(process.execPath, [...TS_NODE_ARGS, '-e', script, mode], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      return { child, output: () => out, exited };
    };

    // Nothing left to do: the process exits by itself, and its helper with it.
    const done = run('done');
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise((resolve) => (timer = setTimeout(() => resolve('hung'), 20_000)));
    await expect(Promise.race([done.exited, hung]).finally(() => clearTimeout(timer))).resolves.toBe(0);
    const donePid = Number(/helper (\d+)/.exec(done.output())?.[1]);
    expect(donePid).toBeGreaterThan(0);
    await expect(waitFor(() => !alive(donePid), 5000)).resolves.toBe(true);

    // SIGKILLed with a command running: the helper and its sleep go too.
    const held = run('hold');
    expect(await waitFor(() => held.output().includes('sleeping'), 20_000)).toBe(true);
    const heldPid = Number(/helper (\d+)/.exec(held.output())?.[1]);
    expect(await waitFor(() => childrenOf(heldPid).length === 1, 10_000)).toBe(true);
    const sleeps = childrenOf(heldPid);
    held.child.kill('SIGKILL');
    await held.exited;
    await expect(waitFor(() => !alive(heldPid) && !alive(sleeps[0]!), 5000)).resolves.toBe(true);
  }, 60_000);

  test("a command that ignores its timeout's SIGTERM is killed 5 s later", async () => {
    const marker = '13.579';
    try {
      const started = Date.now();
      const stuck = await runCommand('sh', ['-c', `trap "" TERM; sleep ${marker}`], { timeout: 200, env: shEnv }).catch(
        (e: unknown) => e as { signal?: string },
      );
      expect(stuck).toMatchObject({ signal: 'SIGKILL' });
      expect(Date.now() - started).toBeLessThan(9000);
    } finally {
      spawnSync('pkill', ['-f', `sleep ${marker}`]);
    }
  }, 30_000);

  test('a helper that stops answering fails its command alone; later commands go to a new helper', async () => {
    await runCommand('true', [], { env: shEnv });
    const frozen = spawnerPid()!;
    process.kill(frozen, 'SIGSTOP');
    try {
      await expect(runCommand('true', [], { timeout: 200, env: shEnv })).rejects.toThrow(
        /gave no answer for true within 10200 ms/,
      );
      const { stdout } = await runCommand('sh', ['-c', 'echo $PPID'], { env: shEnv });
      expect(Number(stdout.trim())).toBe(spawnerPid());
      expect(spawnerPid()).not.toBe(frozen);
    } finally {
      process.kill(frozen, 'SIGCONT');
    }
    // It had nothing else to do, so its channel was closed: it goes once it runs again.
    await expect(waitFor(() => !alive(frozen), 5000)).resolves.toBe(true);
  }, 30_000);

  test('an idle helper is stopped, and the next command starts another', async () => {
    setSpawnerIdleMs(300);
    try {
      await runCommand('true', [], { env: shEnv });
      const idle = spawnerPid()!;
      await expect(waitFor(() => !alive(idle), 5000)).resolves.toBe(true);
      expect(spawnerPid()).toBeUndefined();
      const { stdout } = await runCommand('sh', ['-c', 'echo $PPID'], { env: shEnv });
      expect(Number(stdout.trim())).toBe(spawnerPid());
      expect(spawnerPid()).not.toBe(idle);
    } finally {
      setSpawnerIdleMs(60_000);
    }
  });

  test("the system prompt's git runs from the helper, not the worker", async () => {
    // A git that records its parent, then hands over to the real one.
    const bin = tempDir('fake-git');
    const log = path.join(bin, 'parents');
    const realGit = (await runCommand('sh', ['-c', 'command -v git'], { env: shEnv })).stdout.trim();
    fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho $PPID >> ${log}\nexec ${realGit} "$@"\n`, { mode: 0o755 });
    const workspace = tempDir('spawner-repo');
    const toolEnv = { PATH: `${bin}:${shEnv.PATH}`, HOME: tempDir('git-home') };
    await runCommand('git', ['init', '-q', '-b', 'main'], { cwd: workspace, env: toolEnv });
    fs.writeFileSync(log, '');
    const store = new FileContentStore(tempDir('store'));
    const { ref } = await buildSystemPrompt(
      { store, clock: () => new Date('2026-12-01T00:00:00Z'), toolEnv },
      { workspace, model: 'claude-sonnet-5-5' },
    );
    expect(await store.get<string>(ref)).toContain('Git branch: main');
    const parents = fs.readFileSync(log, 'utf8').trim().split('\n').map(Number);
    expect(parents).toHaveLength(2);
    for (const parent of parents) {
      expect(parent).not.toBe(process.pid);
      expect(parent).toBe(spawnerPid());
    }
  });
});
