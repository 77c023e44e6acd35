import { StringDecoder } from 'node:string_decoder';
import type { HookRun } from '../../shared/hooks';
import type { JobSandbox } from '../../shared/sandbox';
import type { PreparedCommand, SandboxEngine } from '../sandbox/engine';
import { abortError } from '../tools/abort-error';
import { killProcessGroup, waitForProcessGroupExit } from '../tools/process-group';
import { spawnPiped } from '../../worker/spawner';

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
    return await spawnHook(request, prepared);
  } finally {
    await prepared.release?.();
  }
}

/**
 * Start the hook from the worker's command helper (`spawnPiped`: a start from the worker forks the
 * worker, whose size grows with its jobs), stdin a file holding the event's JSON (`stdin-file.ts`),
 * stdout and stderr piped back apart.
 */
function spawnHook(request: HookProcessRequest, prepared: PreparedCommand): Promise<HookRun & { ms: number }> {
  const started = Date.now();
  const base = { command: request.command, timeoutSec: request.timeoutSec, sandboxed: prepared.sandboxed };
  return new Promise((resolve, reject) => {
    // detached: the hook leads a new process group, so one kill reaches everything it started.
    const child = spawnPiped(prepared.file, prepared.args, request.workspace, prepared.env, {
      detached: true,
      stdinText: request.stdin,
    });
    let pid: number | undefined;
    const captured = { stdout: '', stderr: '' };
    let timedOut = false;
    let aborted = false;
    let exited = false;
    let settled = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let graceTimer: NodeJS.Timeout | undefined;

    const ends: Array<() => void> = [];
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
      child[name].on('data', (chunk: Buffer) => keep(decoder.write(chunk)));
      ends.push(() => keep(decoder.end()));
    }
    const killGroup = () => {
      if (pid !== undefined) killProcessGroup(pid);
    };
    // After a kill the end is known from the group itself, whether or not its pipes say so.
    const endAfterKill = () => {
      if (pid !== undefined) void waitForProcessGroupExit(pid).then(finish);
    };
    // Before its start is known, the kill goes out through the helper, and the start (or its
    // failure, or the helper's end) finishes the answer.
    const stop = () => {
      child.kill();
      killGroup();
      endAfterKill();
    };
    const onAbort = () => {
      aborted = true;
      stop();
    };
    request.signal.addEventListener('abort', onAbort, { once: true });
    const timeout = setTimeout(
      () => {
        timedOut = true;
        stop();
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
      for (const end of ends) end();
      child.release();
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

    child.on('spawn', (spawned: number) => {
      pid = spawned;
      if (settled || aborted || timedOut) {
        killGroup();
        endAfterKill();
      }
    });
    child.on('error', (error: Error & { refused?: boolean }) => {
      if (settled || pid !== undefined) return;
      cleanUp();
      if (aborted) reject(abortError('The hook was cancelled'));
      // No process was made (an argument spawn refuses, no stdin file): the hook did not run.
      else if (error.refused) reject(error);
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
    // The helper died with the hook's pipes: what the hook says is lost, so it is stopped and
    // reported as not run, as a worker's death would leave it.
    child.on('lost', () => {
      if (settled) return;
      cleanUp();
      killGroup();
      const answer = () =>
        reject(
          aborted
            ? abortError('The hook was cancelled')
            : new Error("the worker's command helper exited while the hook ran"),
        );
      if (pid !== undefined) void waitForProcessGroupExit(pid).then(answer, answer);
      else answer();
    });
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
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
