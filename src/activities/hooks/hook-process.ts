import { spawn } from 'node:child_process';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { HookRun } from '../../shared/hooks';
import type { JobSandbox } from '../../shared/sandbox';
import type { PreparedCommand, SandboxEngine } from '../sandbox/engine';
import { abortError } from '../tools/abort-error';
import { killProcessGroup, waitForProcessGroupExit } from '../tools/process-group';

/**
 * Characters of stdout and of stderr kept from one hook. Enough for any JSON reply a hook has a
 * reason to print; what leaves the activity is cut further (`HOOK_TEXT_CHARS`).
 */
export const HOOK_CAPTURE_CHARS = 100_000;
/** After the hook exits, how long a background job it left holding the pipes may keep us waiting. */
const PIPE_GRACE_MS = 500;
/** setTimeout fires at once for a longer delay (it holds a 32-bit signed count of ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One hook command to run: where, under which policy, with what on stdin. */
export interface HookProcessRequest {
  command: string;
  timeoutSec: number;
  workspace: string;
  sessionKey: string;
  policy: JobSandbox;
  /** The environment before the sandbox adds to it: Bash's, plus `CLAUDE_PROJECT_DIR`. */
  env: NodeJS.ProcessEnv;
  stdin: string;
  engine: SandboxEngine;
  signal: AbortSignal;
}

/** How it ended; `refused` when the sandbox would not start it (nothing ran). */
export type HookProcessResult = (HookRun & { ms: number }) | { refused: string };

/**
 * Run one hook as Bash runs a command: prepared by the worker's sandbox engine (`bash -c` inside
 * bubblewrap, or unconfined when the job opted out), as its own process group, killed whole on
 * timeout or cancellation. Unlike Bash, stdin carries the event's JSON and stdout and stderr are
 * kept apart, since they mean different things. Rejects with an AbortError when cancelled, once
 * every process of the hook is gone, and with the engine's Error when the sandbox could not be
 * prepared (nothing was started then).
 */
export async function runHookProcess(request: HookProcessRequest): Promise<HookProcessResult> {
  if (request.signal.aborted) throw abortError('The hook was cancelled');
  const prepared = await request.engine.prepare({
    command: request.command,
    workspace: request.workspace,
    sessionKey: request.sessionKey,
    policy: request.policy,
    env: request.env,
  });
  if ('refused' in prepared) return prepared;
  try {
    const stdin = await stdinFile(request.stdin);
    try {
      return await spawnHook(request, prepared, stdin.fd);
    } finally {
      await stdin.close();
    }
  } finally {
    await prepared.release?.();
  }
}

/**
 * The event's JSON as an open, already unlinked file, to be the hook's stdin. Not a pipe: Node's
 * pipes are socket pairs, and bash takes a socket on stdin for a remote login and sources
 * ~/.bashrc, which would run the user's start-up file (and whatever it exports) in every hook.
 */
async function stdinFile(text: string) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-hook-'));
  try {
    const file = path.join(dir, 'stdin.json');
    await writeFile(file, text, { mode: 0o600 });
    return await open(file, 'r');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function spawnHook(
  request: HookProcessRequest,
  prepared: PreparedCommand,
  stdinFd: number,
): Promise<HookRun & { ms: number }> {
  const started = Date.now();
  const base = { command: request.command, timeoutSec: request.timeoutSec, sandboxed: prepared.sandboxed };
  return new Promise((resolve, reject) => {
    // detached: the hook leads a new process group, so one kill reaches everything it started.
    const child = spawn(prepared.file, prepared.args, {
      cwd: request.workspace,
      env: prepared.env,
      detached: true,
      stdio: [stdinFd, 'pipe', 'pipe'],
    });
    const pid = child.pid;
    const captured = { stdout: '', stderr: '' };
    let timedOut = false;
    let aborted = false;
    let exited = false;
    let settled = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let graceTimer: NodeJS.Timeout | undefined;

    for (const name of ['stdout', 'stderr'] as const) {
      const decoder = new StringDecoder('utf8');
      // The head and the tail: a test runner prints its summary of failures last.
      const keep = (text: string) => {
        captured[name] += text;
        if (captured[name].length > HOOK_CAPTURE_CHARS * 2) {
          const half = HOOK_CAPTURE_CHARS / 2;
          captured[name] = `${captured[name].slice(0, half)}${captured[name].slice(-half)}`;
        }
      };
      child[name]?.on('data', (chunk: Buffer) => keep(decoder.write(chunk)));
      child[name]?.on('end', () => keep(decoder.end()));
    }
    const killGroup = () => {
      if (pid !== undefined) killProcessGroup(pid);
    };
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    request.signal.addEventListener('abort', onAbort, { once: true });
    const timeout = setTimeout(
      () => {
        timedOut = true;
        killGroup();
      },
      Math.min(request.timeoutSec * 1000, MAX_TIMER_MS),
    );

    const cleanUp = () => {
      settled = true;
      clearTimeout(timeout);
      clearTimeout(graceTimer);
      request.signal.removeEventListener('abort', onAbort);
    };
    const finish = () => {
      if (settled) return;
      cleanUp();
      child.stdout?.destroy();
      child.stderr?.destroy();
      const done = aborted
        ? () => reject(abortError('The hook was cancelled'))
        : () =>
            resolve({
              ...base,
              exitCode,
              signal: exitSignal,
              timedOut,
              stdout: captured.stdout,
              stderr: captured.stderr,
              ms: Date.now() - started,
            });
      // After a kill, answer only once nothing the hook started is still running.
      if ((aborted || timedOut) && pid !== undefined) void waitForProcessGroupExit(pid).then(done, done);
      else done();
    };

    child.on('error', (error) => {
      if (settled || pid !== undefined) return;
      cleanUp();
      if (aborted) reject(abortError('The hook was cancelled'));
      else {
        resolve({
          ...base,
          exitCode: null,
          timedOut: false,
          stdout: '',
          stderr: '',
          spawnError: error.message,
          ms: Date.now() - started,
        });
      }
    });
    child.on('exit', (code, signal) => {
      exited = true;
      exitCode = code;
      exitSignal = signal;
      graceTimer = setTimeout(finish, PIPE_GRACE_MS);
    });
    child.on('close', () => {
      if (exited) finish();
    });
  });
}
