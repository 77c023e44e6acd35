import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { closeInheritedDescriptors } from './inherited-fds';
import { SECRETS_FD_VAR, handOverSecrets, receiveSecrets, scrubSecrets, secretHandoffSpawn } from './secret-handoff';

/**
 * The embedded default's background worker, supervised. `run` starts this process in the
 * background; it starts the worker and starts it again whenever it dies, so a job nobody watches
 * (a `--detach`ed one, a batch overnight) is not left waiting for someone to type a command. A
 * SIGTERM or SIGINT (`durable-agent stop`) is passed on, and it exits when the worker has drained.
 */

/** Names the supervisor's pid in the worker's environment: the worker stops if its supervisor is gone. */
export const SUPERVISOR_PID_VAR = 'DURABLE_AGENT_SUPERVISOR_PID';

/** The first restart comes after this long; each quick death doubles it, up to RESTART_MAX_MS. */
export const RESTART_FIRST_MS = 500;
const RESTART_MAX_MS = 30_000;
/** A worker that ran this long before it died was healthy: the next restart is quick again. */
const HEALTHY_AFTER_MS = 60_000;

export async function superviseWorker(workerMain: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Credentials come over a pipe (`secret-handoff.ts`) and go to each worker the same way.
  const secrets = receiveSecrets(env);
  closeInheritedDescriptors();
  delete process.env[SECRETS_FD_VAR];
  scrubSecrets(process.env);

  let stopping: NodeJS.Signals | undefined;
  let child: ChildProcess | undefined;
  let delay = RESTART_FIRST_MS;
  let timer: NodeJS.Timeout | undefined;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));

  const start = async () => {
    timer = undefined;
    if (stopping) return done();
    // The worker writes where this does: the data folder's worker.log.
    const handoff = secretHandoffSpawn({ ...process.env, ...secrets, [SUPERVISOR_PID_VAR]: String(process.pid) }, [
      'ignore',
      1,
      2,
    ]);
    const startedAt = Date.now();
    const worker = spawn(process.execPath, [...process.execArgv, workerMain], {
      stdio: handoff.stdio,
      env: handoff.env,
    });
    child = worker;
    let ended = false;
    const restart = (why: string) => {
      if (ended) return;
      ended = true;
      child = undefined;
      if (stopping) return done();
      delay = Date.now() - startedAt >= HEALTHY_AFTER_MS ? RESTART_FIRST_MS : delay;
      console.error(
        `durable-agent supervisor: the worker${worker.pid ? ` (pid ${worker.pid})` : ''} ${why}; starting it again in ${(delay / 1000).toFixed(1)} s`,
      );
      timer = setTimeout(() => void start(), delay);
      delay = Math.min(delay * 2, RESTART_MAX_MS);
    };
    // A worker that could not be started at all emits 'error' and no 'exit': started again too.
    worker.on('error', (error) => {
      if (worker.pid === undefined) restart(`could not be started (${error.message})`);
    });
    worker.on('exit', (code, signal) => restart(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    await handOverSecrets(worker, handoff.secrets).catch((error: unknown) =>
      console.error(`durable-agent supervisor: could not hand the worker its credentials: ${String(error)}`),
    );
  };

  const onSignal = (signal: NodeJS.Signals) => {
    stopping ??= signal;
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    // The worker drains (its running tools get their grace time) and exits; so does this.
    if (child) child.kill(signal);
    else done();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  await start();
  await finished;
}

/**
 * In the worker: stop (as on SIGTERM) when the supervisor that started it is gone, so a worker is
 * never left running after `stop` had to kill its supervisor. Returns the timer to clear.
 */
export function stopWhenSupervisorGone(env: NodeJS.ProcessEnv, stop: () => void): NodeJS.Timeout | undefined {
  const supervisor = Number(env[SUPERVISOR_PID_VAR]);
  if (!Number.isInteger(supervisor) || supervisor <= 1) return undefined;
  const timer = setInterval(() => {
    if (process.ppid !== supervisor) {
      clearInterval(timer);
      stop();
    }
  }, 1_000);
  timer.unref();
  return timer;
}

if (require.main === module) {
  const workerMain = path.join(__dirname, `main${path.extname(__filename)}`);
  superviseWorker(workerMain).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(`durable-agent supervisor: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
