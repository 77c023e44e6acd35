import { readFile, readlink, stat } from 'node:fs/promises';
import os from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { BASH_MAX_OUTPUT_CHARS } from '../../shared/tools/bash';
import { startLeader } from '../../worker/spawner';
import { abortError } from './abort-error';
import { randomBytes } from 'node:crypto';
import {
  COMMAND_MARK_ENV,
  groupIsRunning,
  killMarked,
  killProcessGroup,
  waitForProcessGroupExit,
} from './process-group';

/**
 * A command runs as a process group that writes its output, and then its exit status, to files,
 * never to pipes of the worker: it neither dies of SIGPIPE nor loses its result when the worker
 * dies, and the next attempt of the call finds both beside the journal entry. The group is led by
 * a small `sh` script (below), which waits for one line, "go", before it starts the command: the
 * worker sends it only once the journal records the group, so no command runs unrecorded.
 */

/**
 * Where one command's output goes: its first CAPTURE_BYTES (`output`), up to SAVED_BYTES more
 * (`more`, kept so a long output can be saved whole for the model), the count of bytes past both
 * (`rest`), and its exit status. A command started by a worker older than `more` has no such file.
 */
export interface CommandFiles {
  output: string;
  more: string;
  rest: string;
  exit: string;
}

export function commandFiles(prefix: string): CommandFiles {
  return { output: `${prefix}.out`, more: `${prefix}.more`, rest: `${prefix}.rest`, exit: `${prefix}.exit` };
}

/** The machine, boot and PID namespace a process group lives in: outside them it cannot be supervised. */
export interface HostIdentity {
  host: string;
  /** The kernel's id for this boot; a group recorded in another boot is gone. */
  bootId?: string;
  /** The PID namespace (`pid:[4026531836]`): containers sharing a kernel share a boot id, not this. */
  pidNamespace?: string;
}

/** A running command's group as the journal records it. */
export interface CommandGroup {
  pgid: number;
  /** The leader's start time (clock ticks since boot): a pid reused later has another. */
  leaderStart?: string;
  /** When the command was let start (ISO), and how long it may run. */
  startedAt: string;
  timeoutMs: number;
  /** The sandbox's stand-ins made for it: removed by whoever sees the group end if its worker cannot. */
  placeholders?: string[];
  /** The value of `COMMAND_MARK_ENV` its processes carry, for those that left the group. */
  mark?: string;
}

/** Kill a command: its group, then whatever carries its mark (a `setsid` child, a daemon). */
export async function killCommand(group: Pick<CommandGroup, 'pgid' | 'mark'>): Promise<void> {
  killProcessGroup(group.pgid);
  if (group.mark !== undefined) await killMarked(group.mark);
  await waitForProcessGroupExit(group.pgid);
}

/** How a finished (or stopped) command ended. */
export interface Finished {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The first BASH_MAX_OUTPUT_CHARS characters of the output. */
  output: string;
  totalChars: number;
  /** When the output is longer than `output`: as much of it as was kept (up to SAVED_BYTES more bytes). */
  kept?: string;
  timedOut: boolean;
}

/**
 * The group leader. Positional arguments: output file, rest file, exit file, capture cap, the file
 * for the output past the cap and how much of it to keep, then the command itself. The command's
 * stdout and stderr share one pipe, in arrival order as a terminal shows them, into a capture that
 * keeps the first CAPTURE_BYTES byte by byte, the next SAVED_BYTES in blocks, and counts the rest. fd 3 is a pipe to the worker that hears the exit status the moment the command
 * ends (its background jobs may keep the capture pipe open much longer); the command and the
 * capture never see it. Exit status 125 without "go": the worker died before the command started,
 * and then there is no output file either (the leader makes it before it starts the command).
 */
const LEADER_SCRIPT = [
  'IFS= read -r go || exit 125',
  '[ "$go" = go ] || exit 125',
  'exec </dev/null',
  'out=$1 rest=$2 ex=$3 cap=$4 more=$5 morecap=$6',
  // The output file exists from here on: without it, the command provably never started.
  ': >"$out" || exit 125',
  'shift 6',
  // The shell's own notes ("Terminated") are not the command's output: the command runs in a
  // subshell it replaces, and the shell that waits for it writes its own stderr nowhere.
  `{ (exec "$@" 2>&1 3>&-); c=$?; printf '%s\\n' "$c" >"$ex"; printf '%s\\n' "$c" >&3; } 2>/dev/null |`,
  // One byte per read, so what the command printed is on disk at once (head and dd with larger
  // blocks wait to fill them): a kill at the timeout keeps the output so far.
  // Past the first part, output is kept in blocks (fast): a command killed then loses at most a block.
  '{ dd bs=1 count="$cap" >"$out" 2>/dev/null; head -c "$morecap" >"$more"; wc -c >"$rest"; } 3>&-',
].join('\n');

/** Bytes of output kept on disk: enough for BASH_MAX_OUTPUT_CHARS characters of any UTF-8. */
const CAPTURE_BYTES = BASH_MAX_OUTPUT_CHARS * 4;
/** Bytes kept past CAPTURE_BYTES, so a long output can be saved for the model to Read; the rest is counted. */
export const SAVED_BYTES = 16 * 1024 * 1024;
/**
 * When the command has exited, what it printed last may still be in the capture pipe: the first
 * CAPTURE_BYTES are copied a byte at a time, about 4 ms a kilobyte on a quiet machine and several
 * times that on a busy one, so a full pipe takes from a quarter of a second to seconds to drain.
 * The output is complete once the capture has reached the end of the pipe (the `rest` file
 * appears). A background job the command started may hold the pipe open much longer: the wait
 * then ends when the output has not grown for PIPE_GRACE_MS, or has grown by more than a pipe
 * holds (what grows past that was printed after the command ended), or after PIPE_DRAIN_MAX_MS.
 */
export const PIPE_GRACE_MS = 500;
/** A pipe's default capacity on Linux (the leader leaves it as it is), and a block's slack. */
const PIPE_CAPACITY_BYTES = 64 * 1024 + 4096;
export const PIPE_DRAIN_MAX_MS = 30_000;
/** How often an adopted group (not a child of this process) is looked at. */
const ADOPT_POLL_MS = 100;

let identity: HostIdentity | undefined;

export async function thisHost(): Promise<HostIdentity> {
  if (identity) return identity;
  const bootId = await readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  );
  const pidNamespace = await readlink('/proc/self/ns/pid').catch(() => undefined);
  identity = {
    host: os.hostname(),
    ...(bootId ? { bootId } : {}),
    ...(pidNamespace ? { pidNamespace } : {}),
  };
  return identity;
}

/** True when a group recorded by `other` lives where this process can see and signal it. */
export function sameHost(mine: HostIdentity, other: HostIdentity): boolean {
  return mine.host === other.host && mine.bootId === other.bootId && mine.pidNamespace === other.pidNamespace;
}

/** The start time of process `pid` (field 22 of /proc/<pid>/stat), or undefined when it is gone. */
export async function processStart(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * True while any process of the recorded group runs. A leader alive under another start time is a
 * reused pid: Linux hands out no pid still in use as a group id, so the recorded group had ended.
 */
export async function groupAlive(group: CommandGroup): Promise<boolean> {
  const start = await processStart(group.pgid);
  if (start !== undefined && group.leaderStart !== undefined && start !== group.leaderStart) return false;
  return groupIsRunning(group.pgid);
}

export interface RunCommandOptions {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  files: CommandFiles;
  timeoutMs: number;
  placeholders?: string[];
  signal: AbortSignal;
  /** Told of the group before the command starts; the command starts once this resolves. */
  record?: (group: CommandGroup) => Promise<void>;
  /** Called with the bytes of output so far, while the command runs. */
  progress: (outputBytes: number) => void;
  progressMs: number;
  /**
   * Asked on an abort: false when another attempt now supervises the group (this one was cut off
   * from the server and superseded), which must not be killed from under it.
   */
  stillOwner?: () => Promise<boolean>;
}

/**
 * Run `file args` as its own process group, output to `files`, with a timeout; resolves once it
 * has ended, or rejects with an AbortError once an abort has stopped it. The leader starts from the
 * worker's command helper (`startLeader`), so its start does not copy the worker's memory.
 */
export function runCommand(options: RunCommandOptions): Promise<Finished | { spawnError: Error }> {
  const { files, signal } = options;
  if (signal.aborted) return Promise.reject(abortError());
  // Inherited by everything the command starts, even what leaves its group (see killMarked).
  const mark = randomBytes(16).toString('hex');
  return new Promise((resolve, reject) => {
    // detached: the leader heads a new process group, so one kill reaches everything it started.
    const leader = startLeader(
      '/bin/sh',
      [
        '-c',
        LEADER_SCRIPT,
        'durable-agent-bash',
        files.output,
        files.rest,
        files.exit,
        String(CAPTURE_BYTES),
        files.more,
        String(SAVED_BYTES),
      ].concat(options.file, options.args),
      options.cwd,
      { ...options.env, [COMMAND_MARK_ENV]: mark },
    );
    let pid: number | undefined;
    let group: CommandGroup | undefined;
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let exitStatus: number | undefined;
    let timeout: NodeJS.Timeout | undefined;
    let beat: NodeJS.Timeout | undefined;
    let sweeping: Promise<void> = Promise.resolve();
    const killGroup = () => {
      if (pid !== undefined) killProcessGroup(pid);
      sweeping = killMarked(mark);
    };
    const killedAndGone = (leaderPid: number) =>
      Promise.all([waitForProcessGroupExit(leaderPid), sweeping.catch(() => undefined)]);
    // After a kill the end is known from the group itself, whether or not the helper relays it.
    const endAfterKill = () => {
      if (pid === undefined) return;
      void killedAndGone(pid).then(async () => {
        if (settled) return;
        exitStatus ??= await readExitStatus(files.exit);
        finish();
      });
    };
    const onAbort = () => {
      aborted = true;
      // Not started yet: it waits for a "go" it will never get, and is killed if it turns up.
      if (pid === undefined) {
        stopWatching();
        reject(abortError('The Bash command was aborted'));
        return;
      }
      void (options.stillOwner ?? (() => Promise.resolve(true)))()
        .catch(() => true)
        .then((owner) => {
          if (!owner) return finish();
          killGroup();
          endAfterKill();
        });
    };
    const stopWatching = () => {
      settled = true;
      clearTimeout(timeout);
      clearInterval(beat);
      signal.removeEventListener('abort', onAbort);
      leader.release();
    };

    const finish = () => {
      if (settled) return;
      stopWatching();
      // After a kill, report only once nothing the command started is still running.
      const done = () => {
        if (aborted) reject(abortError('The Bash command was aborted'));
        else
          void readFinished(files, exitStatus, timedOut).then(resolve, (error: unknown) =>
            resolve({ spawnError: error instanceof Error ? error : new Error(String(error)) }),
          );
      };
      if ((aborted || timedOut) && pid !== undefined) void killedAndGone(pid).then(done, done);
      else done();
    };

    leader.on('error', (error: Error) => {
      if (settled) return;
      stopWatching();
      if (pid !== undefined) killGroup();
      if (aborted) reject(abortError('The Bash command was aborted'));
      else resolve({ spawnError: error });
    });

    let notices = '';
    leader.on('notice', (chunk: string) => {
      notices += chunk;
      const match = /^(\d+)\n/.exec(notices);
      if (match && exitStatus === undefined) {
        exitStatus = Number(match[1]);
        void waitForCaptureEnd(files, () => settled).then(finish);
      }
    });
    leader.on('exit', () => {
      // The leader waits for the capture: once it is gone, the output is complete.
      if (exitStatus === undefined) void readExitStatus(files.exit).then((status) => ((exitStatus = status), finish()));
      else finish();
    });
    // The helper that started the leader died; the leader did not. Its files tell the rest, as
    // they tell the next attempt after a worker's death. Without "go", it ran nothing.
    const notStarted = () => ({
      spawnError: new Error("the worker's command helper exited before the command started"),
    });
    leader.on('lost', () => {
      if (settled) return;
      // The kill went out already (or the group is another attempt's now): the group says how it ended.
      if (aborted || timedOut) return endAfterKill();
      stopWatching();
      if (!group || !commandLetStart) {
        killGroup();
        // The journal's record of the group is written before this attempt answers.
        void recording.then(() => resolve(notStarted()));
        return;
      }
      adoptCommand({
        group,
        files,
        signal,
        progress: options.progress,
        progressMs: options.progressMs,
        ...(options.stillOwner ? { stillOwner: options.stillOwner } : {}),
      }).then(async (ended) => {
        if (!('gone' in ended)) return resolve(ended);
        // "go" may not have reached the leader before the helper died.
        resolve((await commandStarted(files)) ? ended.gone : notStarted());
      }, reject);
    });

    let commandLetStart = false;
    let recording: Promise<unknown> = Promise.resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    leader.once('started', (started: number) => {
      pid = started;
      if (settled) return killGroup();
      recording = (async () => {
        group = {
          pgid: started,
          ...(await processStart(started).then((start) => (start ? { leaderStart: start } : {}))),
          startedAt: new Date().toISOString(),
          timeoutMs: options.timeoutMs,
          ...(options.placeholders?.length ? { placeholders: options.placeholders } : {}),
          mark,
        };
        // Lost or aborted meanwhile: the group is killed, and no record is wanted of it.
        if (settled) return;
        await options.record?.(group);
        if (settled || aborted) return;
        leader.go();
        commandLetStart = true;
        timeout = setTimeout(() => {
          timedOut = true;
          killGroup();
          endAfterKill();
        }, options.timeoutMs);
        beat = setInterval(() => void outputBytes(files).then(options.progress), options.progressMs);
      })().catch((error: unknown) => {
        // The journal could not record the group: the command must not start unrecorded.
        killGroup();
        if (settled) return;
        stopWatching();
        resolve({ spawnError: error instanceof Error ? error : new Error(String(error)) });
      });
    });
  });
}

/**
 * Supervise a group an earlier attempt started and can no longer watch (its worker died): wait for
 * it to end within its own timeout (counted from when it started), kill it past that or on an
 * abort. Resolves with how it ended, or `gone` when it ended without recording an exit status.
 */
export async function adoptCommand(options: {
  group: CommandGroup;
  files: CommandFiles;
  signal: AbortSignal;
  progress: (outputBytes: number) => void;
  progressMs: number;
  /** Asked on an abort, as `runCommand` asks it: false leaves the group to the attempt that now has it. */
  stillOwner?: () => Promise<boolean>;
}): Promise<Finished | { gone: Finished }> {
  const { group, files, signal } = options;
  const deadline = Date.parse(group.startedAt) + group.timeoutMs;
  let lastBeat = 0;
  for (;;) {
    const status = await readExitStatus(files.exit);
    if (status !== undefined) {
      await waitForCaptureEnd(files);
      return readFinished(files, status, false);
    }
    if (signal.aborted) {
      if (await (options.stillOwner ?? (() => Promise.resolve(true)))().catch(() => true)) await killCommand(group);
      throw abortError('The Bash command was aborted');
    }
    if (!(await groupAlive(group))) {
      // It may have written its status just before it ended.
      const late = await readExitStatus(files.exit);
      if (late !== undefined) return readFinished(files, late, false);
      return { gone: await readFinished(files, undefined, false) };
    }
    if (Date.now() >= deadline) {
      await killCommand(group);
      return readFinished(files, undefined, true);
    }
    if (Date.now() - lastBeat >= options.progressMs) {
      lastBeat = Date.now();
      options.progress(await outputBytes(files));
    }
    await new Promise((resolve) => setTimeout(resolve, ADOPT_POLL_MS));
  }
}

/** False when the leader never got as far as starting the command (no "go" reached it). */
export async function commandStarted(files: CommandFiles): Promise<boolean> {
  return stat(files.output).then(
    () => true,
    () => false,
  );
}

/** The exit status the leader recorded, or undefined before it did (or when the file is torn). */
export async function readExitStatus(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const match = /^(\d+)\n$/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** What the files say of a command that ended (or was stopped): its output and how it ended. */
export async function readFinished(
  files: CommandFiles,
  status: number | undefined,
  timedOut: boolean,
): Promise<Finished> {
  const bytes = await readFile(files.output).catch(() => Buffer.alloc(0));
  // Missing for a command a worker without it started.
  const more = await readFile(files.more).catch(() => Buffer.alloc(0));
  // A character cut in two by a cap is dropped, not shown as a replacement mark.
  const decoder = new StringDecoder('utf8');
  const text = decoder.write(more.length > 0 ? Buffer.concat([bytes, more]) : bytes);
  const rest = Number((await readFile(files.rest, 'utf8').catch(() => '0')).trim()) || 0;
  const { exitCode, signal } = splitStatus(status);
  return {
    exitCode,
    signal,
    output: text.slice(0, BASH_MAX_OUTPUT_CHARS),
    totalChars: text.length + rest,
    ...(text.length > BASH_MAX_OUTPUT_CHARS ? { kept: text } : {}),
    timedOut,
  };
}

/** A shell's `$?`: 128 + n for a command a signal killed (the shell's own convention). */
function splitStatus(status: number | undefined): { exitCode: number | null; signal: NodeJS.Signals | null } {
  if (status === undefined) return { exitCode: null, signal: null };
  if (status > 128) {
    const name = Object.entries(os.constants.signals).find(([, number]) => number === status - 128)?.[0];
    if (name) return { exitCode: null, signal: name as NodeJS.Signals };
  }
  return { exitCode: status, signal: null };
}

async function outputBytes(files: CommandFiles): Promise<number> {
  return (await stat(files.output).catch(() => undefined))?.size ?? 0;
}

/**
 * Until the capture has copied all the command printed (see PIPE_GRACE_MS), or `stop()` says
 * the run has ended otherwise.
 */
export async function waitForCaptureEnd(
  files: CommandFiles,
  stop: () => boolean = () => false,
  limits: { graceMs: number; maxMs: number } = { graceMs: PIPE_GRACE_MS, maxMs: PIPE_DRAIN_MAX_MS },
): Promise<void> {
  const started = Date.now();
  const size = async (file: string) => (await stat(file).catch(() => undefined))?.size ?? 0;
  const captured = async () => (await size(files.output)) + (await size(files.more));
  const atExit = await captured();
  let last = atExit;
  let grewAt = started;
  while (!stop()) {
    if (
      await stat(files.rest).then(
        () => true,
        () => false,
      )
    )
      return;
    const now = Date.now();
    const bytes = await captured();
    if (bytes !== last) {
      last = bytes;
      grewAt = now;
    }
    if (now - grewAt >= limits.graceMs || bytes - atExit > PIPE_CAPACITY_BYTES || now - started >= limits.maxMs) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
