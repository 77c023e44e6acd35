import { spawn } from 'node:child_process';
import path from 'node:path';

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
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', path.join(root, 'src/client/cli.ts'), ...args],
    { cwd: root, env },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(stdin);
  const done = new Promise<CliResult>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, done, output: () => stdout + stderr };
}
