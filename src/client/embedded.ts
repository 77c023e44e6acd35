import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { dataHome, formatAge, retentionFromEnv } from './config';
import { freePort, isListening, isProcessAlive } from './free-port';
import { findTemporalBinary } from './temporal-binary';
import { handOverSecrets, secretHandoffSpawn } from '../worker/secret-handoff';
import { isSecretEnvName } from '../activities/tools/bash-env';

/** A background process durable-agent started and may reuse: the embedded server or worker. */
interface ProcessRecord {
  pid: number;
  port?: number;
  uiPort?: number;
  startedAt: string;
  /** The server's namespace retention as last set, so a changed `DURABLE_AGENT_RETENTION` is applied once. */
  retentionMs?: number;
}

const SERVER_RECORD = 'embedded-server.json';
const WORKER_RECORD = 'embedded-worker.json';

function readRecord(home: string, name: string): ProcessRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(home, name), 'utf8')) as ProcessRecord;
  } catch {
    return undefined;
  }
}

function writeRecord(home: string, name: string, record: ProcessRecord): void {
  fs.writeFileSync(path.join(home, name), JSON.stringify(record, null, 2));
}

/**
 * Hold a lock (a directory created atomically) while deciding whether to start a background
 * process, so two `durable-agent run` calls at once do not start two servers.
 */
async function withLock<T>(home: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(home, 'embedded.lock');
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 60_000) fs.rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline)
        throw new Error(`Timed out waiting for ${lock}; remove it if no durable-agent is starting.`);
      await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

export interface EmbeddedServer {
  address: string;
  uiUrl: string;
  pid: number;
}

/**
 * The embedded Temporal dev server: reuse the running one, or start `temporal server start-dev`
 * in the background with its database under the data directory, so jobs survive its restarts.
 * Its namespace keeps closed jobs for `DURABLE_AGENT_RETENTION` (24 hours unless set).
 */
export async function ensureEmbeddedServer(home = dataHome()): Promise<EmbeddedServer> {
  // Checked before anything starts, so a mistyped value is reported instead of half applied.
  const retentionMs = retentionFromEnv();
  fs.mkdirSync(path.join(home, 'logs'), { recursive: true });
  return withLock(home, async () => {
    const known = readRecord(home, SERVER_RECORD);
    if (known?.port && isProcessAlive(known.pid) && (await isListening(known.port))) {
      const address = `127.0.0.1:${known.port}`;
      if (known.retentionMs !== retentionMs) {
        await applyRetention(address, retentionMs);
        writeRecord(home, SERVER_RECORD, { ...known, retentionMs });
      }
      return { address, uiUrl: `http://127.0.0.1:${known.uiPort}`, pid: known.pid };
    }
    const binary = findTemporalBinary();
    const port = known?.port && !(await isListening(known.port)) ? known.port : await freePort();
    const uiPort = await freePort();
    const log = fs.openSync(path.join(home, 'logs', 'temporal-server.log'), 'a');
    const child = spawn(
      binary,
      [
        'server',
        'start-dev',
        '--db-filename',
        path.join(home, 'temporal.db'),
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--ui-port',
        String(uiPort),
        '--log-level',
        'warn',
      ],
      // The server needs no credential, and its /proc/<pid>/environ is readable for its whole life.
      { detached: true, stdio: ['ignore', log, log], env: withoutSecrets(process.env) },
    );
    child.unref();
    fs.closeSync(log);
    if (child.pid === undefined) throw new Error(`Could not start ${binary}`);
    writeRecord(home, SERVER_RECORD, { pid: child.pid, port, uiPort, startedAt: new Date().toISOString() });
    const deadline = Date.now() + 60_000;
    while (!(await isListening(port))) {
      if (!isProcessAlive(child.pid) || Date.now() > deadline) {
        throw new Error(
          `The embedded Temporal server did not start; see ${path.join(home, 'logs', 'temporal-server.log')}`,
        );
      }
      await sleep(200);
    }
    // `start-dev` has no retention flag; the namespace setting lives in the database and survives restarts.
    await applyRetention(`127.0.0.1:${port}`, retentionMs);
    writeRecord(home, SERVER_RECORD, {
      pid: child.pid,
      port,
      uiPort,
      startedAt: new Date().toISOString(),
      retentionMs,
    });
    return { address: `127.0.0.1:${port}`, uiUrl: `http://127.0.0.1:${uiPort}`, pid: child.pid };
  });
}

/**
 * Set how long the embedded server's `default` namespace keeps closed workflows. A server that
 * has just begun listening may not have registered the namespace yet, so this retries briefly.
 */
async function applyRetention(address: string, retentionMs: number): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await connection.workflowService.updateNamespace({
          namespace: 'default',
          config: { workflowExecutionRetentionTtl: msToTs(retentionMs) },
        });
        return;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(
            `Could not set the embedded server's retention to ${formatAge(retentionMs)}: ${(error as Error).message}`,
            { cause: error },
          );
        }
        await sleep(200);
      }
    }
  } finally {
    await connection.close();
  }
}

/**
 * A background worker for the embedded server, started if none is running. It inherits this
 * shell's environment, its credentials (`ANTHROPIC_API_KEY`, ...) handed over a pipe rather than
 * in the environment, and logs under the data directory.
 */
export async function ensureEmbeddedWorker(
  server: EmbeddedServer,
  home = dataHome(),
): Promise<{ pid: number; started: boolean }> {
  return withLock(home, async () => {
    const known = readRecord(home, WORKER_RECORD);
    if (known && isProcessAlive(known.pid) && known.port === Number(server.address.split(':')[1])) {
      return { pid: known.pid, started: false };
    }
    const log = fs.openSync(path.join(home, 'logs', 'worker.log'), 'a');
    // The worker runs the same build as this CLI: compiled JS, or TypeScript under ts-node in tests.
    const workerMain = path.join(__dirname, '..', 'worker', `main${path.extname(__filename)}`);
    // Credentials go over a pipe, so the worker's /proc/<pid>/environ, which every command of
    // this user can read for the worker's whole life, holds none.
    const handoff = secretHandoffSpawn(
      { ...process.env, TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default', DURABLE_AGENT_HOME: home },
      ['ignore', log, log],
    );
    const child = spawn(process.execPath, [...process.execArgv, workerMain], {
      detached: true,
      stdio: handoff.stdio,
      env: handoff.env,
    });
    child.unref();
    fs.closeSync(log);
    if (child.pid === undefined) throw new Error('Could not start the background worker');
    await handOverSecrets(child, handoff.secrets);
    writeRecord(home, WORKER_RECORD, {
      pid: child.pid,
      port: Number(server.address.split(':')[1]),
      startedAt: new Date().toISOString(),
    });
    return { pid: child.pid, started: true };
  });
}

/** Stop the embedded server and worker, if running. Jobs stay in the database for next time. */
export async function stopEmbedded(home = dataHome()): Promise<string[]> {
  const stopped: string[] = [];
  for (const [name, label] of [
    [WORKER_RECORD, 'worker'],
    [SERVER_RECORD, 'Temporal server'],
  ] as const) {
    const record = readRecord(home, name);
    if (record && isProcessAlive(record.pid)) {
      process.kill(record.pid, 'SIGTERM');
      const deadline = Date.now() + 10_000;
      while (isProcessAlive(record.pid) && Date.now() < deadline) await sleep(100);
      if (isProcessAlive(record.pid)) process.kill(record.pid, 'SIGKILL');
      stopped.push(`${label} (pid ${record.pid})`);
    }
    fs.rmSync(path.join(home, name), { force: true });
  }
  return stopped;
}

/** `env` without anything named like a credential. */
function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !isSecretEnvName(name)));
}
