/**
 * The worker's spawner (see `spawner.ts`): a small process that starts the worker's short
 * commands for it. Forking copies the forking process's page tables, so a start costs the worker
 * in proportion to its memory (12 ms of CPU at 650 MiB against 1.5 ms for a process of 44 MiB,
 * measured here); this process stays small. It runs each request with `execFile` and sends back
 * what came out, and exits when the worker is gone, stopping the commands it still runs. Bash's
 * group leaders it only starts and relays (`startLeader`): they outlive a dead worker by design
 * (the next attempt adopts their group), so they outlive this process too.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeInheritedDescriptors } from './inherited-fds';
import { SPAWNER_READY, killGroupOf, startPiped } from './spawner';
import type { LeaderEvent, LeaderRequest, PipedEvent, PipedRequest, SpawnerReply, SpawnerRequest } from './spawner';

const running = new Set<ChildProcess>();
/** How long after its timeout a command that ignored SIGTERM is killed. */
const HARD_STOP_AFTER_MS = 5_000;

function reply(message: SpawnerReply | LeaderEvent | PipedEvent): void {
  if (process.connected) process.send?.(message);
}

/** Leaders started here, until they exit or the worker lets them go. */
const leaders = new Map<number, ChildProcess>();

function onLeaderRequest(request: LeaderRequest): void {
  if (request.leader === 'go') {
    leaders.get(request.id)?.stdin?.end('go\n');
    return;
  }
  if (request.leader === 'release') {
    const child = leaders.get(request.id);
    leaders.delete(request.id);
    // A leader still waiting for its "go" reads the end of its stdin and exits, having run nothing.
    child?.stdin?.destroy();
    child?.stdio[3]?.destroy();
    child?.unref();
    return;
  }
  const { id } = request;
  let child: ChildProcess;
  try {
    child = spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    // spawn throws only for arguments it refuses (a NUL byte in one, for example).
    reply({ leader: 'error', id, message: error instanceof Error ? error.message : String(error) });
    return;
  }
  child.on('error', (error: NodeJS.ErrnoException) => {
    if (child.pid !== undefined) return;
    reply({ leader: 'error', id, message: error.message, ...(error.code ? { code: error.code } : {}) });
  });
  if (child.pid === undefined) return;
  leaders.set(id, child);
  child.stdin?.on('error', () => {});
  child.stdio[3]?.on('error', () => {});
  child.stdio[3]?.on('data', (chunk: Buffer) => {
    if (leaders.get(id) === child) reply({ leader: 'notice', id, data: chunk.toString('latin1') });
  });
  child.on('exit', () => {
    if (leaders.get(id) !== child) return;
    leaders.delete(id);
    reply({ leader: 'exit', id });
  });
  reply({ leader: 'started', id, pid: child.pid });
}

/** Output messages of one piped process that may be on their way to the worker at once. */
const MAX_UNDER_WAY = 8;

/** Piped processes running here: they end with this process, as they would with a worker. */
const piped = new Map<number, { child: ChildProcess; detached: boolean }>();

/** Piped processes being started (their stdin file made), and those of them asked to stop already. */
const starting = new Set<number>();
const stopEarly = new Set<number>();

function stop(child: ChildProcess, detached: boolean): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  if (detached) killGroupOf(child.pid);
  else child.kill('SIGKILL');
}

function onPipedRequest(request: PipedRequest): void {
  const { id } = request;
  if (request.piped === 'kill') {
    const entry = piped.get(id);
    if (entry) stop(entry.child, entry.detached);
    else if (starting.has(id)) stopEarly.add(id);
    return;
  }
  if (request.piped === 'release') {
    const entry = piped.get(id);
    piped.delete(id);
    entry?.child.stdout?.destroy();
    entry?.child.stderr?.destroy();
    return;
  }
  starting.add(id);
  startPiped(
    request.file,
    request.args,
    request.cwd,
    request.env,
    request,
    (child) => {
      starting.delete(id);
      relay(request, child);
    },
    (error: unknown) => {
      starting.delete(id);
      stopEarly.delete(id);
      reply({ piped: 'error', id, message: error instanceof Error ? error.message : String(error), refused: true });
    },
  );
}

function relay(request: PipedRequest & { piped: 'start' }, child: ChildProcess): void {
  const { id } = request;
  const detached = request.detached ?? false;
  piped.set(id, { child, detached });
  // The worker reads the output as fast as the channel takes it: with more than a few messages
  // under way, reading stops until they are through, as a full pipe would hold the process back.
  let underWay = 0;
  let stdoutBytes = 0;
  const sent = () => {
    if (--underWay === MAX_UNDER_WAY - 1) for (const stream of [child.stdout, child.stderr]) stream?.resume();
  };
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream]?.on('data', (chunk: Buffer) => {
      if (stream === 'stdout') {
        if (request.maxStdoutBytes !== undefined && stdoutBytes > request.maxStdoutBytes) return;
        stdoutBytes += chunk.length;
        // Past the cap: what was sent is all the worker keeps.
        if (request.maxStdoutBytes !== undefined && stdoutBytes > request.maxStdoutBytes) stop(child, detached);
      }
      if (!process.connected) return;
      underWay++;
      process.send?.(
        { piped: 'data', id, stream, data: chunk.toString('base64') } satisfies PipedEvent,
        undefined,
        {},
        sent,
      );
      if (underWay >= MAX_UNDER_WAY) for (const each of [child.stdout, child.stderr]) each?.pause();
    });
  }
  const mine = () => piped.get(id)?.child === child;
  child.on('error', (error: NodeJS.ErrnoException) => {
    // After a start, an error (a failed kill) leaves the end to 'exit' and 'close'.
    if (!mine() || child.pid !== undefined) return;
    piped.delete(id);
    reply({ piped: 'error', id, message: error.message, ...(error.code ? { code: error.code } : {}) });
  });
  child.on('exit', (code, signal) => {
    if (mine()) reply({ piped: 'exit', id, code, signal });
  });
  child.on('close', (code, signal) => {
    if (!mine()) return;
    piped.delete(id);
    reply({ piped: 'close', id, code, signal });
  });
  const early = stopEarly.delete(id);
  if (child.pid === undefined) return;
  reply({ piped: 'spawn', id, pid: child.pid });
  if (early) stop(child, detached);
}

process.on('message', (request: SpawnerRequest | LeaderRequest | PipedRequest) => {
  if ('leader' in request) return onLeaderRequest(request);
  if ('piped' in request) return onPipedRequest(request);
  let child: ChildProcess;
  try {
    child = execFile(
      request.file,
      request.args,
      { ...request.options, encoding: 'utf8', windowsHide: true },
      (error, stdout, stderr) => {
        running.delete(child);
        if (!error) return reply({ id: request.id, stdout, stderr });
        const failure = error as NodeJS.ErrnoException & { killed?: boolean; signal?: NodeJS.Signals | null };
        reply({
          id: request.id,
          stdout,
          stderr,
          error: {
            message: failure.message,
            ...(failure.code !== undefined ? { code: failure.code } : {}),
            ...(failure.signal ? { signal: failure.signal } : {}),
            killed: failure.killed === true,
          },
        });
      },
    );
  } catch (error) {
    // execFile throws only for arguments it refuses (a NUL byte in one, for example).
    reply({ id: request.id, stdout: '', stderr: '', error: { message: String(error), killed: false } });
    return;
  }
  running.add(child);
  // execFile's timeout sends SIGTERM; a command that ignores it is killed a little later.
  const timeout = request.options.timeout;
  if (timeout && timeout > 0) {
    const hardStop = setTimeout(() => child.kill('SIGKILL'), timeout + HARD_STOP_AFTER_MS);
    child.once('exit', () => clearTimeout(hardStop));
  }
});

// The worker closed the channel or died: nobody will read the results.
process.on('disconnect', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const { child, detached } of piped.values()) stop(child, detached);
  process.exit(0);
});

// What this process inherited beyond its channel (from a worker started before descriptors were
// closed, or through a library) reaches none of the commands it starts.
closeInheritedDescriptors();
process.send?.(SPAWNER_READY);
