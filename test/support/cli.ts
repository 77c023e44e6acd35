import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { TS_NODE_ARGS } from './ts-run';

const root = path.join(__dirname, '..', '..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The CLI as a user (or a pipeline) runs it: a process of its own, no TTY anywhere, `stdin` written
 * and closed at once, so a run never waits for piped input that is not coming.
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv, stdin = ''): Promise<CliResult> {
  return startCli(args, env, stdin).done;
}

/** The CLI started in its own process, for a test that kills it part-way (`child.kill('SIGKILL')`). */
export function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin = '',
): { child: import('node:child_process').ChildProcess; done: Promise<CliResult>; output(): string } {
  const child = spawn(process.execPath, [...TS_NODE_ARGS, path.join(root, 'src/client/cli.ts'), ...args], {
    cwd: root,
    env,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(stdin);
  const done = exitedWithOutput(child).then((code) => ({ code, stdout, stderr }));
  return { child, done, output: () => stdout + stderr };
}

/**
 * The exit code once `child` has exited and its output has been read. 'exit' can come before the
 * last of stdout and stderr is read (seen under load: a one-line error read as ""); 'close' waits
 * for every holder of the pipes, a detached grandchild included, so the pipes get 2 s at most.
 */
export function exitedWithOutput(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      const streams = [child.stdout, child.stderr].filter((stream) => stream !== null);
      const read = streams.map(
        (stream) =>
          new Promise<void>((done) => {
            if (stream.readableEnded || stream.destroyed) return done();
            stream.once('end', done);
            stream.once('close', done);
          }),
      );
      const cap = setTimeout(() => resolve(code), 2_000);
      void Promise.all(read).then(() => {
        clearTimeout(cap);
        resolve(code);
      });
    });
  });
}

/** The pids whose parent is `pid` (from /proc). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

/**
 * SIGKILL the embedded default's worker together with the supervisor that would start it again:
 * no worker answers until a command starts one. Returns the supervisor's pid.
 */
export function killEmbeddedWorker(home: string): number {
  const { pid } = JSON.parse(fs.readFileSync(path.join(home, 'embedded-worker.json'), 'utf8')) as { pid: number };
  const workers = childrenOf(pid);
  process.kill(pid, 'SIGKILL');
  for (const worker of workers) process.kill(worker, 'SIGKILL');
  return pid;
}
