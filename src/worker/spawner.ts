import { execFile, fork, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stdinFile } from './stdin-file';

/**
 * Short commands (the system prompt's git, a batch task's clone) started by a small helper
 * process instead of the worker itself. Every start forks the process that starts it, and a fork
 * copies that process's page tables: the worker, which grows with the jobs it holds, paid 12 ms of
 * CPU per start at 650 MiB, against 1.5 ms for a 44 MiB process (measured on the project's
 * machine). In a profile of 100 scripted sessions the system prompt's two git starts were 15% of
 * the worker's main-thread time. The helper (`spawner-helper.ts`) is forked once, on first use,
 * and restarted when it dies; when it cannot start at all, commands start from the worker as
 * before. A Bash command's group leader starts there too (`startLeader`): it talks to the worker
 * only through files and two small pipes, which the helper relays. So do ripgrep (Grep, Glob) and
 * hooks (`spawnPiped`), whose output the helper relays.
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

/** What the helper is asked about a process whose output streams back (`spawnPiped`). */
export type PipedRequest =
  | ({
      piped: 'start';
      id: number;
      file: string;
      args: string[];
      cwd: string;
      env: NodeJS.ProcessEnv;
      /** Stdout past this many bytes is not wanted: the helper stops the process once it has sent them. */
      maxStdoutBytes?: number;
    } & PipedStartOptions)
  | { piped: 'kill'; id: number }
  | { piped: 'release'; id: number };

/** How a piped process starts beyond its command. */
export interface PipedStartOptions {
  /** Leading a process group of its own (its pid is the group's id), for a kill of all it starts. */
  detached?: boolean;
  /** Its stdin: a file holding this text (see `stdin-file.ts`); none when left out. */
  stdinText?: string;
  /** Where that file is made: the worker's temp folder (the helper has no TMPDIR of its own). */
  tmpdir?: string;
  /** An open descriptor of the worker's, handed to the process as its fd 3 (started from the worker). */
  passFd?: number;
}

/** What the helper tells of such a process: its output (base64), a failure to start, its end. */
export type PipedEvent =
  | { piped: 'spawn'; id: number; pid: number }
  | { piped: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { piped: 'data'; id: number; stream: 'stdout' | 'stderr'; data: string }
  | { piped: 'error'; id: number; message: string; code?: string; refused?: boolean }
  | { piped: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

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
/** How soon after a kill the helper must report a piped process's end. */
const KILL_ANSWER_MS = 2_000;
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

/**
 * The helper's entry point beside this file: compiled JS, or TypeScript run from source, with the
 * preload named by `DURABLE_AGENT_TS_REGISTER` (the tests' cached one) or else ts-node's.
 */
function helperCommand(): { file: string; execArgv: string[]; env: Record<string, string> } | undefined {
  const ext = path.extname(__filename);
  const file = path.join(__dirname, `spawner-helper${ext}`);
  if (!fs.existsSync(file)) return undefined;
  if (ext !== '.ts') return { file, execArgv: [], env: {} };
  try {
    const register = process.env.DURABLE_AGENT_TS_REGISTER || 'ts-node/register/transpile-only';
    // The tests' preload finds its compiled files through this folder (a path, no secret).
    const cache = process.env.DURABLE_AGENT_TS_CACHE;
    return { file, execArgv: ['-r', require.resolve(register)], env: cache ? { DURABLE_AGENT_TS_CACHE: cache } : {} };
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
    // No environment of the worker's (but where tests keep compiled TypeScript): each request
    // brings the command's own.
    child = fork(command.file, [], {
      execArgv: command.execArgv,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...command.env },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
  } catch {
    helperUnavailable = true;
    return undefined;
  }
  child.on('message', (message: SpawnerReply | LeaderEvent | PipedEvent | typeof SPAWNER_READY) => {
    if (message === SPAWNER_READY) readyHelpers.add(child);
    else if ('leader' in message) leaders.get(message.id)?.fromHelper(message);
    else if ('piped' in message) pipedRuns.get(message.id)?.fromHelper(message);
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
    helperGoneFor(child);
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
  if (pending.size > 0 || leaders.size > 0 || pipedRuns.size > 0) {
    child.ref();
    channel?.ref?.();
    return;
  }
  child.unref();
  channel?.unref?.();
  idleTimer = setTimeout(() => {
    if (pending.size > 0 || leaders.size > 0 || pipedRuns.size > 0 || helper !== child) return;
    helper = undefined;
    if (child.connected) child.disconnect();
  }, helperIdleMs);
  idleTimer.unref();
}

/**
 * A helper that stopped answering takes no new work. Its leaders run on and are watched through
 * their files; its piped processes start again from the worker; once its requests are answered or
 * given up, it is closed.
 */
function retire(child: ChildProcess): void {
  if (helper === child) helper = undefined;
  retiredHelpers.add(child);
  // Its searches start again from the worker: the ones it runs are not wanted any more.
  for (const run of pipedRuns.values()) if (run.helper === child) sendKill(child, run.id);
  helperGoneFor(child);
  // Only the current helper is kept referenced: a retired one must not keep its worker alive.
  child.unref();
  (child.channel as { unref?: () => void } | undefined)?.unref?.();
  if (![...pending.values()].some((other) => other.helper === child) && child.connected) child.disconnect();
}

function helperGoneFor(child: ChildProcess): void {
  for (const leader of [...leaders.values()]) {
    if (leader.helper === child) leader.helperGone();
  }
  for (const run of [...pipedRuns.values()]) {
    if (run.helper === child) run.helperGone();
  }
}

/** Take a request or a leader off the books; a retired helper with nothing left is closed. */
function forget(id: number, entry?: Pending): void {
  const child = entry?.helper ?? leaders.get(id)?.helper ?? pipedRuns.get(id)?.helper;
  pending.delete(id);
  leaders.delete(id);
  pipedRuns.delete(id);
  if (entry) clearTimeout(entry.timer);
  if (!child) return refHelper();
  if (
    retiredHelpers.has(child) &&
    ![...pending.values(), ...leaders.values(), ...pipedRuns.values()].some((other) => other.helper === child)
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
      forget(id, entry);
      retire(child);
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

  get isStarted(): boolean {
    return this.started;
  }

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

  /**
   * The helper died or was given up on. A leader it reported started runs on (`lost`); one it did
   * not can have run nothing, as it waits for a "go" only a `started` leads to: it starts here.
   */
  helperGone(): void {
    if (this.done) return;
    this.end();
    if (this.started) this.emit('lost');
    else this.direct();
  }

  go(): void {
    sendTo(this.helper, { leader: 'go', id: this.id } satisfies LeaderRequest);
  }

  release(): void {
    if (this.done) return;
    this.end();
    sendTo(this.helper, { leader: 'release', id: this.id } satisfies LeaderRequest);
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
    let child: ChildProcess;
    try {
      child = spawn(file, args, { cwd, env, detached: true, stdio: ['pipe', 'ignore', 'ignore', 'pipe'] });
    } catch (error) {
      // Arguments spawn refuses outright (a NUL byte, a command line past the kernel's limit).
      process.nextTick(() => this.emit('error', error));
      return;
    }
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
    this.child?.stdin?.destroy();
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
  sendTo(child, { leader: 'start', id, file, args, cwd, env }, () => {
    if (leaders.get(id) === leader) leader.helperGone();
  });
  // A helper that does not say within the grace whether the leader started is stuck: given up.
  const noAnswer = setTimeout(() => {
    if (leaders.get(id) === leader && !leader.isStarted) retire(child);
  }, HELPER_GRACE_MS);
  noAnswer.unref();
  leader.once('started', () => clearTimeout(noAnswer));
  return leader;
}

/**
 * A process whose stdout and stderr stream back through pipes (ripgrep for Grep and Glob, hooks),
 * as `spawn` with `stdio: [stdin, 'pipe', 'pipe']` gives it: `stdout` and `stderr` emit `data`
 * (Buffers); the process emits `spawn` (pid) once it runs, `error` when it cannot start (marked
 * `refused` when no process was made at all: see `refusedStart`), `exit`
 * (code, signal) when it exits and `close` (code, signal) once its pipes are closed too; `kill`
 * stops it. `lost`: the helper running it died, its pipes with it; what the process did is safe
 * to do again only for a command that changes nothing.
 */
export interface PipedProcess extends EventEmitter {
  readonly stdout: EventEmitter;
  readonly stderr: EventEmitter;
  /** Once `spawn` has been emitted. */
  readonly pid: number | undefined;
  kill(): void;
  /** No more of it is wanted: its pipes are closed (a background job it left may hold them). */
  release(): void;
}

/** Piped processes a helper runs, until their end is known. */
const pipedRuns = new Map<number, HelperPiped>();

class HelperPiped extends EventEmitter implements PipedProcess {
  readonly stdout = new EventEmitter();
  readonly stderr = new EventEmitter();
  pid: number | undefined;
  private done = false;
  private killed = false;
  /** When the helper last said anything of this process. */
  private lastHeard = Date.now();

  constructor(
    readonly id: number,
    readonly helper: ChildProcess,
  ) {
    super();
  }

  fromHelper(event: PipedEvent): void {
    if (this.done) return;
    this.lastHeard = Date.now();
    if (event.piped === 'data') {
      this[event.stream].emit('data', Buffer.from(event.data, 'base64'));
      return;
    }
    if (event.piped === 'spawn') {
      this.pid = event.pid;
      this.emit('spawn', event.pid);
      return;
    }
    if (event.piped === 'exit') {
      this.emit('exit', event.code, event.signal);
      return;
    }
    this.end();
    if (event.piped === 'error') {
      this.emit(
        'error',
        Object.assign(
          new Error(event.message),
          event.code ? { code: event.code } : {},
          event.refused ? { refused: true } : {},
        ),
      );
    } else this.emit('close', event.code, event.signal);
  }

  helperGone(): void {
    if (this.done) return;
    this.end();
    this.emit('lost');
  }

  release(): void {
    if (this.done) return;
    this.end();
    // A helper that is going takes the pipes with it: nothing to release then.
    sendTo(this.helper, { piped: 'release', id: this.id });
  }

  kill(): void {
    if (this.done || this.killed) return;
    this.killed = true;
    sendKill(this.helper, this.id);
    // A helper that says nothing of it for a while after a kill (output still on its way counts)
    // is stuck: given up.
    this.lastHeard = Date.now();
    const check = () => {
      if (this.done) return;
      const quiet = Date.now() - this.lastHeard;
      if (quiet >= KILL_ANSWER_MS) retire(this.helper);
      else setTimeout(check, KILL_ANSWER_MS - quiet).unref();
    };
    setTimeout(check, KILL_ANSWER_MS).unref();
  }

  private end(): void {
    this.done = true;
    if (pipedRuns.get(this.id) === this) forget(this.id);
  }
}

function sendKill(child: ChildProcess, id: number): void {
  // A helper that is going ends the process too.
  sendTo(child, { piped: 'kill', id } satisfies PipedRequest);
}

/**
 * Send `message` to a helper; `notSent` when it did not get there (the channel closed, or the
 * send failed), so the caller can do without the helper.
 */
function sendTo(child: ChildProcess, message: LeaderRequest | PipedRequest, notSent?: () => void): void {
  try {
    if (!child.connected) throw new Error('closed');
    child.send(message, (error) => {
      if (error) notSent?.();
    });
  } catch {
    if (notSent) process.nextTick(notSent);
  }
}

/** SIGKILL to the process group `pgid` leads; gone already is fine. */
export function killGroupOf(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // No such group any more.
  }
}

/** A piped process the worker started itself (no helper). */
class DirectPiped extends EventEmitter implements PipedProcess {
  readonly stdout = new EventEmitter();
  readonly stderr = new EventEmitter();
  pid: number | undefined;
  private child: ChildProcess | undefined;
  private killed = false;
  private readonly detached: boolean;

  constructor(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, options: PipedStartOptions) {
    super();
    this.detached = options.detached ?? false;
    startPiped(
      file,
      args,
      cwd,
      env,
      options,
      (child) => {
        this.child = child;
        this.pid = child.pid;
        child.stdout?.on('data', (chunk: Buffer) => this.stdout.emit('data', chunk));
        child.stderr?.on('data', (chunk: Buffer) => this.stderr.emit('data', chunk));
        child.on('error', (error) => this.emit('error', error));
        child.on('exit', (code, signal) => this.emit('exit', code, signal));
        child.on('close', (code, signal) => this.emit('close', code, signal));
        const pid = child.pid;
        if (pid === undefined) return;
        // The caller's listeners are attached once this constructor has returned.
        process.nextTick(() => {
          this.emit('spawn', pid);
          if (this.killed) this.kill();
        });
      },
      (error: unknown) => process.nextTick(() => this.emit('error', refusedStart(error))),
    );
  }

  release(): void {
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
  }

  kill(): void {
    this.killed = true;
    const child = this.child;
    if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    if (this.detached) killGroupOf(child.pid);
    else child.kill('SIGKILL');
  }
}

/**
 * Spawn a piped process (here or in the helper) and hand it to `attach` at once, in the same tick,
 * before Node can report its end or a failure to start; its stdin file is made first when it has
 * one, and closed once the process holds it. `failed`: spawn refused the arguments outright, or
 * the stdin file could not be made (called in the same tick when there is no stdin file).
 */
export function startPiped(
  file: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  options: PipedStartOptions,
  attach: (child: ChildProcess) => void,
  failed: (error: unknown) => void,
): void {
  const go = (stdin?: FileHandle) => {
    let child: ChildProcess;
    try {
      child = spawn(file, args, {
        cwd,
        env,
        detached: options.detached ?? false,
        stdio: [stdin?.fd ?? 'ignore', 'pipe', 'pipe', ...(options.passFd === undefined ? [] : [options.passFd])],
      });
    } catch (error) {
      void stdin?.close().catch(() => undefined);
      failed(error);
      return;
    }
    attach(child);
    void stdin?.close().catch(() => undefined);
  };
  if (options.stdinText === undefined) go();
  else stdinFile(options.stdinText, options.tmpdir).then(go, failed);
}

/**
 * A start that failed before any process existed (spawn refused the arguments, the stdin file
 * could not be made), marked `refused`: unlike a program that is not there, which Node reports
 * from a process that failed to exec.
 */
export function refusedStart(error: unknown): Error & { refused: true } {
  return Object.assign(error instanceof Error ? error : new Error(String(error)), { refused: true as const });
}

/**
 * Start `file args` with its output piped back (see {@link PipedProcess}): from the helper when
 * there is one (and `fromHelper` is not false), else from the worker.
 */
export function spawnPiped(
  file: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  options: { fromHelper?: boolean; maxStdoutBytes?: number } & PipedStartOptions = {},
): PipedProcess {
  const { fromHelper = true, maxStdoutBytes, ...start } = options;
  if (start.stdinText !== undefined) start.tmpdir ??= os.tmpdir();
  // The helper is another process: a descriptor of the worker's can only go from the worker.
  const child = fromHelper && start.passFd === undefined ? startHelper() : undefined;
  if (!child) return new DirectPiped(file, args, cwd, env, start);
  const id = nextId++;
  const run = new HelperPiped(id, child);
  pipedRuns.set(id, run);
  refHelper();
  const request: PipedRequest = {
    piped: 'start',
    id,
    file,
    args,
    cwd,
    env,
    ...(maxStdoutBytes !== undefined ? { maxStdoutBytes } : {}),
    ...start,
  };
  sendTo(child, request, () => {
    if (pipedRuns.get(id) === run) run.helperGone();
  });
  // A helper that does not say within the grace whether the process started is stuck: given up.
  const noAnswer = setTimeout(() => {
    if (pipedRuns.get(id) === run && run.pid === undefined) retire(child);
  }, HELPER_GRACE_MS);
  noAnswer.unref();
  run.once('spawn', () => clearTimeout(noAnswer));
  return run;
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
