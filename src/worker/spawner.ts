import { execFile, fork, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Short commands (the system prompt's git, a batch task's clone) started by a small helper
 * process instead of the worker itself. Every start forks the process that starts it, and a fork
 * copies that process's page tables: the worker, which grows with the jobs it holds, paid 12 ms of
 * CPU per start at 650 MiB, against 1.5 ms for a 44 MiB process (measured on the project's
 * machine). In a profile of 100 scripted sessions the system prompt's two git starts were 15% of
 * the worker's main-thread time. The helper (`spawner-helper.ts`) is forked once, on first use,
 * and restarted when it dies; when it cannot start at all, commands start from the worker as
 * before. A Bash command's group leader starts there too (`startLeader`): it talks to the worker
 * only through files and two small pipes, which the helper relays. Grep and hooks, whose output
 * streams through pipes, still start from the worker.
 */

/** What `runCommand` takes: `execFile`'s options that make sense across a process boundary. */
export interface CommandOptions {
  cwd?: string;
  /** The command's whole environment; the worker's own when left out. */
  env?: NodeJS.ProcessEnv;
  timeout?: number;
  maxBuffer?: number;
}

export interface SpawnerRequest {
  id: number;
  file: string;
  args: string[];
  options: CommandOptions & { env: NodeJS.ProcessEnv };
}

/** What the helper is asked about a group leader (`startLeader`). */
export type LeaderRequest =
  | { leader: 'start'; id: number; file: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv }
  | { leader: 'go'; id: number }
  | { leader: 'release'; id: number };

/** What the helper tells of a group leader it started. */
export type LeaderEvent =
  | { leader: 'started'; id: number; pid: number }
  | { leader: 'error'; id: number; message: string; code?: string }
  | { leader: 'notice'; id: number; data: string }
  | { leader: 'exit'; id: number };

/** The helper's first message: it is listening, and has run nothing yet. */
export const SPAWNER_READY = 'ready';

export interface SpawnerReply {
  id: number;
  stdout: string;
  stderr: string;
  error?: { message: string; code?: string | number; signal?: NodeJS.Signals; killed: boolean };
}

/** A failed command, shaped like `execFile`'s error: `code` (exit code or errno name), `stdout`, `stderr`. */
export type CommandError = Error & {
  code?: string | number;
  signal?: NodeJS.Signals;
  killed?: boolean;
  stdout: string;
  stderr: string;
};

/** How long past its own timeout a command's answer may take before the helper counts as stuck. */
const HELPER_GRACE_MS = 10_000;
/** A command without a timeout of its own still gets an answer within this (plus the grace). */
const DEFAULT_WAIT_MS = 10 * 60_000;
/** A helper with nothing to do for this long is stopped; the next command starts another. */
let helperIdleMs = 60_000;

interface Pending {
  resolve: (value: { stdout: string; stderr: string }) => void;
  reject: (error: CommandError) => void;
  timer: NodeJS.Timeout;
  /** The helper the request went to. */
  helper: ChildProcess;
  /** Run the command from the worker instead (when the helper never ran it). */
  direct: () => void;
}

let helper: ChildProcess | undefined;
let helperUnavailable = false;
/** Helpers that said they were ready; one that dies before that ran nothing. */
const readyHelpers = new WeakSet<ChildProcess>();
/** Helpers that take no new commands (one of theirs never came back); closed once they are idle. */
const retiredHelpers = new WeakSet<ChildProcess>();
/** Helpers that died before they were ready: after a few, commands start from the worker. */
let earlyDeaths = 0;
const MAX_EARLY_DEATHS = 3;
let nextId = 1;
const pending = new Map<number, Pending>();
let idleTimer: NodeJS.Timeout | undefined;

/** The helper's entry point beside this file: compiled JS, or TypeScript under ts-node in tests. */
function helperCommand(): { file: string; execArgv: string[] } | undefined {
  const ext = path.extname(__filename);
  const file = path.join(__dirname, `spawner-helper${ext}`);
  if (!fs.existsSync(file)) return undefined;
  if (ext !== '.ts') return { file, execArgv: [] };
  try {
    return { file, execArgv: ['-r', require.resolve('ts-node/register/transpile-only')] };
  } catch {
    return undefined;
  }
}

/** Benches compare against starting everything from the worker. */
let helperOff = false;

function startHelper(): ChildProcess | undefined {
  if (helperOff) return undefined;
  if (helper?.connected) return helper;
  if (helperUnavailable) return undefined;
  const command = helperCommand();
  if (!command) {
    helperUnavailable = true;
    return undefined;
  }
  let child: ChildProcess;
  try {
    // No environment of the worker's: each request brings the command's own.
    child = fork(command.file, [], {
      execArgv: command.execArgv,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
  } catch {
    helperUnavailable = true;
    return undefined;
  }
  child.on('message', (message: SpawnerReply | LeaderEvent | typeof SPAWNER_READY) => {
    if (message === SPAWNER_READY) readyHelpers.add(child);
    else if ('leader' in message) leaders.get(message.id)?.fromHelper(message);
    else settle(message);
  });
  child.on('error', () => undefined);
  child.once('exit', () => {
    if (helper === child) helper = undefined;
    const ranNothing = !readyHelpers.has(child);
    if (ranNothing && ++earlyDeaths >= MAX_EARLY_DEATHS) helperUnavailable = true;
    for (const [id, entry] of pending) {
      if (entry.helper !== child) continue;
      pending.delete(id);
      clearTimeout(entry.timer);
      // A helper that never got going ran none of them: run them here. One that did may have
      // run them, as a worker that dies may have: fail them, the next request starts a new helper.
      if (ranNothing) entry.direct();
      else entry.reject(commandError("the worker's command helper exited while the command ran", '', ''));
    }
    for (const leader of leaders.values()) {
      if (leader.helper === child) leader.helperGone(ranNothing);
    }
    refHelper();
  });
  helper = child;
  return child;
}

/**
 * Keep the worker alive for the helper only while a command is under way, and stop a helper that
 * has been idle for a while (closing its channel ends it), so none lingers after its worker, or a
 * test that loaded this module, is done with it.
 */
function refHelper(): void {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  const child = helper;
  if (!child) return;
  const channel = child.channel as { ref?: () => void; unref?: () => void } | undefined;
  if (pending.size > 0 || leaders.size > 0) {
    child.ref();
    channel?.ref?.();
    return;
  }
  child.unref();
  channel?.unref?.();
  idleTimer = setTimeout(() => {
    if (pending.size > 0 || leaders.size > 0 || helper !== child) return;
    helper = undefined;
    if (child.connected) child.disconnect();
  }, helperIdleMs);
  idleTimer.unref();
}

/** Take a request or a leader off the books; a retired helper with nothing left is closed. */
function forget(id: number, entry?: Pending): void {
  const child = entry?.helper ?? leaders.get(id)?.helper;
  pending.delete(id);
  leaders.delete(id);
  if (entry) clearTimeout(entry.timer);
  if (!child) return refHelper();
  if (
    retiredHelpers.has(child) &&
    ![...pending.values(), ...leaders.values()].some((other) => other.helper === child)
  ) {
    if (child.connected) child.disconnect();
  }
  refHelper();
}

function settle(message: SpawnerReply): void {
  const entry = pending.get(message.id);
  if (!entry) return;
  forget(message.id, entry);
  if (!message.error) return entry.resolve({ stdout: message.stdout, stderr: message.stderr });
  const error = commandError(message.error.message, message.stdout, message.stderr);
  if (message.error.code !== undefined) error.code = message.error.code;
  if (message.error.signal) error.signal = message.error.signal;
  error.killed = message.error.killed;
  entry.reject(error);
}

function commandError(message: string, stdout: string, stderr: string): CommandError {
  return Object.assign(new Error(message), { stdout, stderr });
}

/**
 * Run `file` with `args` and collect its output, as `promisify(execFile)` does (utf8), but
 * started by the helper process. Rejects with a `CommandError` when the command fails, times
 * out, or cannot start.
 */
export function runCommand(
  file: string,
  args: string[],
  options: CommandOptions = {},
): Promise<{ stdout: string; stderr: string }> {
  const env = options.env ?? process.env;
  const child = startHelper();
  if (!child) return runDirect(file, args, { ...options, env });
  return new Promise((resolve, reject) => {
    const id = nextId++;
    const wait = (options.timeout && options.timeout > 0 ? options.timeout : DEFAULT_WAIT_MS) + HELPER_GRACE_MS;
    const direct = () => void runDirect(file, args, { ...options, env }).then(resolve, reject);
    const timer = setTimeout(() => {
      const entry = pending.get(id);
      if (!entry) return;
      // The helper kills a command at its timeout; one that still has not answered is stuck. New
      // commands go to a new helper, and this one is closed once its other commands are done.
      if (helper === child) helper = undefined;
      retiredHelpers.add(child);
      forget(id, entry);
      reject(commandError(`the worker's command helper gave no answer for ${file} within ${wait} ms`, '', ''));
    }, wait);
    const entry: Pending = { resolve, reject, timer, helper: child, direct };
    pending.set(id, entry);
    refHelper();
    const request: SpawnerRequest = { id, file, args, options: { ...options, env } };
    // When the request does not reach the helper, the command has not run: run it here.
    const notSent = () => {
      if (pending.get(id) !== entry) return;
      forget(id, entry);
      direct();
    };
    try {
      child.send(request, (error) => {
        if (error) notSent();
      });
    } catch {
      notSent();
    }
  });
}

function runDirect(
  file: string,
  args: string[],
  options: CommandOptions & { env: NodeJS.ProcessEnv },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...options, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (!error) return resolve({ stdout, stderr });
      reject(Object.assign(error, { stdout, stderr }) as CommandError);
    });
  });
}

/**
 * A Bash command's group leader (`command-run.ts`), started detached in a process group of its
 * own, with a pipe to its stdin (for "go") and one from its fd 3 (its exit status); its output
 * goes to files. Events: `started` (pid), `error` (it could not start), `notice` (text from fd 3),
 * `exit` (it exited), `lost` (the helper that started it died: the leader runs on, and only its
 * files tell when it ends).
 */
export interface Leader extends EventEmitter {
  /** Send "go" on its stdin, and close that. */
  go(): void;
  /** Stop listening: its pipes are closed, and it keeps nothing of the worker's alive. */
  release(): void;
}

/** Leaders started by a helper whose exit is not yet known. */
const leaders = new Map<number, HelperLeader>();

class HelperLeader extends EventEmitter implements Leader {
  private started = false;
  private done = false;

  constructor(
    readonly id: number,
    readonly helper: ChildProcess,
    /** Start it from the worker instead (the helper never got the request). */
    private readonly direct: () => void,
  ) {
    super();
  }

  fromHelper(event: LeaderEvent): void {
    if (this.done) return;
    switch (event.leader) {
      case 'started':
        this.started = true;
        this.emit('started', event.pid);
        return;
      case 'notice':
        this.emit('notice', event.data);
        return;
      case 'error':
        this.end();
        this.emit('error', Object.assign(new Error(event.message), event.code ? { code: event.code } : {}));
        return;
      case 'exit':
        this.end();
        this.emit('exit');
    }
  }

  helperGone(ranNothing: boolean): void {
    if (this.done) return;
    this.end();
    if (this.started) this.emit('lost');
    else if (ranNothing) this.direct();
    else this.emit('error', new Error("the worker's command helper exited while the command started"));
  }

  go(): void {
    this.send({ leader: 'go', id: this.id });
  }

  release(): void {
    if (this.done) return;
    this.end();
    this.send({ leader: 'release', id: this.id });
  }

  send(request: LeaderRequest, onFailure?: () => void): void {
    try {
      if (!this.helper.connected) throw new Error('closed');
      this.helper.send(request, (error) => {
        if (error) onFailure?.();
      });
    } catch {
      onFailure?.();
    }
  }

  private end(): void {
    this.done = true;
    if (leaders.get(this.id) === this) forget(this.id);
  }
}

/** A leader the worker started itself (no helper, or one that never got going). */
class DirectLeader extends EventEmitter implements Leader {
  private child: ChildProcess | undefined;

  start(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): void {
    const child = spawn(file, args, { cwd, env, detached: true, stdio: ['pipe', 'ignore', 'ignore', 'pipe'] });
    this.child = child;
    child.on('error', (error) => {
      if (child.pid === undefined) this.emit('error', error);
    });
    if (child.pid === undefined) return;
    const pid = child.pid;
    child.stdio[3]?.on('data', (chunk: Buffer) => this.emit('notice', chunk.toString('latin1')));
    child.stdio[3]?.on('error', () => {});
    child.stdin?.on('error', () => {});
    child.on('exit', () => this.emit('exit'));
    process.nextTick(() => this.emit('started', pid));
  }

  go(): void {
    this.child?.stdin?.end('go\n');
  }

  release(): void {
    this.child?.stdio[3]?.destroy();
    // The leader may wait on for a background job that holds the capture pipe: it must not keep
    // this process (a one-shot `durable-agent tool`) alive.
    this.child?.unref();
  }
}

/**
 * Start a Bash command's group leader (see {@link Leader}): from the helper when there is one, so
 * the worker's own memory is not what the start copies, else from the worker.
 */
export function startLeader(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Leader {
  const direct = () => {
    const leader = new DirectLeader();
    leader.start(file, args, cwd, env);
    return leader;
  };
  const child = startHelper();
  if (!child) return direct();
  const id = nextId++;
  const leader: HelperLeader = new HelperLeader(id, child, () => {
    // Events of the leader started here go out under the helper's leader, which callers hold.
    const instead = direct();
    for (const event of ['started', 'error', 'notice', 'exit', 'lost']) {
      instead.on(event, (...values: unknown[]) => leader.emit(event, ...values));
    }
    leader.go = () => instead.go();
    leader.release = () => instead.release();
  });
  leaders.set(id, leader);
  refHelper();
  leader.send({ leader: 'start', id, file, args, cwd, env }, () => {
    if (leaders.get(id) !== leader) return;
    leader.helperGone(true);
  });
  return leader;
}

/** The helper's pid, while one runs (tests). */
export function spawnerPid(): number | undefined {
  return helper?.connected ? helper.pid : undefined;
}

/** How long an idle helper is kept (tests). */
export function setSpawnerIdleMs(ms: number): void {
  helperIdleMs = ms;
}

/** Start commands from the worker itself (`false`) or from the helper again (benches). */
export function useSpawnerHelper(use: boolean): void {
  helperOff = !use;
}

/** Stop the helper (tests; a worker's exit stops it too, as its channel closes). */
export function stopSpawner(): void {
  helper?.kill('SIGKILL');
  helper = undefined;
}
