import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import net from 'node:net';
import { Connection } from '@temporalio/client';
import { InvalidArgumentError } from 'commander';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { msToTs } from '@temporalio/common/lib/time';
import { dataHome, formatAge, retentionFromEnv, temporalTargetFromEnv } from './config';
import { openContentStore } from './store-config';
import { freePort, isListening, isProcessAlive } from './free-port';
import { findTemporalBinary } from './temporal-binary';
import { handOverSecrets, secretHandoffSpawn } from '../worker/secret-handoff';
import {
  DEFAULT_SHUTDOWN_GRACE_MS,
  SHUTDOWN_FORCE_MARGIN_MS,
  formatGrace,
  shutdownGraceFromEnv,
} from '../worker/shutdown-grace';
import { isSecretEnvName } from '../activities/tools/bash-env';
import { endpointForMessages } from '../activities/model-errors';
import { baseUrlProblem } from '../shared/base-url';
import { JOB_SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

/** A background process durable-agent started and may reuse: the embedded server or worker. */
interface ProcessRecord {
  pid: number;
  port?: number;
  uiPort?: number;
  startedAt: string;
  /** The server's namespace retention as last set, so a changed `DURABLE_AGENT_RETENTION` is applied once. */
  retentionMs?: number;
  /** The job search attributes known to be registered on the server, so a reused server is checked once. */
  searchAttributes?: string[];
  /** The worker's: whether it was started with model credentials (absent in older records). */
  modelCredentials?: boolean;
  /** The worker's: how long it lets running tools finish after SIGTERM (absent in older records). */
  shutdownGraceMs?: number;
  /** The worker's: where its model calls go, as {@link modelSettingsOf} (absent in older records). */
  modelSettings?: ModelSettings;
}

/**
 * Where a worker's model calls go: the endpoint, and a short hash of each credential (never the
 * credential), so a shell whose settings changed is noticed.
 */
interface ModelSettings {
  baseUrl: string;
  /** A hash of the whole URL, when it carries more than {@link endpointForMessages} shows. */
  urlCredentials?: string;
  apiKey?: string;
  authToken?: string;
}

const DEFAULT_BASE_URL = 'https://api.anthropic.com';

export function modelSettingsOf(env: NodeJS.ProcessEnv): ModelSettings {
  const digest = (value: string | undefined) =>
    value?.trim() ? createHash('sha256').update(value.trim()).digest('hex').slice(0, 12) : undefined;
  const apiKey = digest(env.ANTHROPIC_API_KEY);
  const authToken = digest(env.ANTHROPIC_AUTH_TOKEN);
  const given = env.ANTHROPIC_BASE_URL?.trim() || DEFAULT_BASE_URL;
  const urlCredentials = digest(given === endpointForMessages(given) ? undefined : given);
  return {
    // Shown and kept without a user name or password the URL may carry; a change there still counts.
    baseUrl: endpointForMessages(given),
    ...(urlCredentials ? { urlCredentials } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(authToken ? { authToken } : {}),
  };
}

/** What differs between the worker's model settings and this shell's, in words, or undefined. */
function modelSettingsChange(worker: ModelSettings | undefined, shell: ModelSettings): string | undefined {
  if (!worker) return undefined;
  const changes: string[] = [];
  if (worker.baseUrl !== shell.baseUrl)
    changes.push(`ANTHROPIC_BASE_URL is now ${shell.baseUrl} (was ${worker.baseUrl})`);
  else if (worker.urlCredentials !== shell.urlCredentials) changes.push('ANTHROPIC_BASE_URL is another');
  if (worker.apiKey !== shell.apiKey) changes.push('ANTHROPIC_API_KEY is another');
  if (worker.authToken !== shell.authToken) changes.push('ANTHROPIC_AUTH_TOKEN is another');
  return changes.length > 0 ? changes.join(', ') : undefined;
}

/** True when the embedded worker of `home` runs and was started with model credentials. */
export function liveEmbeddedWorkerHasCredentials(home = dataHome()): boolean {
  const known = readRecord(home, WORKER_RECORD);
  return known?.modelCredentials === true && isProcessAlive(known.pid);
}

/** True when `env` holds what a worker needs for model calls. */
export function hasModelCredentials(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.ANTHROPIC_API_KEY?.trim() || env.ANTHROPIC_AUTH_TOKEN?.trim());
}

/** The ports the embedded server had last, kept across `stop` so its address and UI stay put. */
interface PortsRecord {
  port: number;
  uiPort: number;
}

const SERVER_RECORD = 'embedded-server.json';
const WORKER_RECORD = 'embedded-worker.json';
const PORTS_RECORD = 'embedded-ports.json';

/**
 * Settings the embedded server starts with beyond `start-dev`'s defaults. The dev server reads its
 * transfer queue at most 20 times a second per shard, which paces a job at about one activity per
 * 50 ms whatever the activity does (bench/README.md); a production server has no such limit, so
 * neither does the embedded one. `bench/loop-overhead.ts` measures with exactly these.
 */
export const EMBEDDED_SERVER_TUNING: readonly string[] = [
  '--dynamic-config-value',
  'history.transferProcessorMaxPollRPS=1000',
];

/** Temporal's own defaults for a dev server: taken when free, so `temporal` commands and the UI's URL work as documented. */
export const PREFERRED_PORT = 7233;
export const PREFERRED_UI_PORT = 8233;

function readRecord<T = ProcessRecord>(home: string, name: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(home, name), 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function writeRecord(home: string, name: string, record: ProcessRecord | PortsRecord): void {
  fs.writeFileSync(path.join(home, name), JSON.stringify(record, null, 2));
}

/**
 * Hold a lock (a directory created atomically) while deciding whether to start a background
 * process, so two `durable-agent run` calls at once do not start two servers.
 */
function withLock<T>(home: string, fn: () => Promise<T>): Promise<T> {
  return withLockDir(path.join(home, 'embedded.lock'), fn);
}

/**
 * Held by whoever is starting an embedded server on this machine, whatever its data directory:
 * two servers starting at once could both find 7233 free, and the one that lost it would take
 * the other's server, listening there, for its own.
 */
function withPortLock<T>(fn: () => Promise<T>): Promise<T> {
  return withLockDir(portLockPath(), fn);
}

/**
 * The port lock is machine-wide, so it must not move with `TMPDIR`: two shells (or two test runs)
 * with different temp folders would each hold a lock of their own and race for 7233 again. On
 * Windows, which has no /tmp, it is the temp folder.
 */
export function portLockPath(): string {
  const user = typeof process.getuid === 'function' ? process.getuid() : 'user';
  const base = process.platform !== 'win32' && fs.existsSync('/tmp') ? '/tmp' : os.tmpdir();
  return path.join(base, `durable-agent-${user}-ports.lock`);
}

/**
 * Run `fn` holding `lock`, a directory only one process can create. A lock older than a minute is
 * taken to be left by a process that died. One another user made (the port lock's name in /tmp is
 * known) is neither waited for nor removed: the error says so at once.
 */
export async function withLockDir<T>(lock: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      const owner = fs.lstatSync(lock, { throwIfNoEntry: false })?.uid;
      if (owner !== undefined && typeof process.getuid === 'function' && owner !== process.getuid()) {
        throw new Error(
          `${lock} belongs to another user (uid ${owner}), so no embedded Temporal server can start here; ` +
            'have it removed (by that user or root), or set TEMPORAL_ADDRESS to a Temporal server you run.',
        );
      }
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
 * Its namespace keeps closed jobs for `DURABLE_AGENT_RETENTION` (24 hours unless set) and knows
 * the job search attributes. It listens on 7233 with its UI on 8233 when those are free, else on
 * free ports, and keeps the ports it got across `stop`.
 */
export async function ensureEmbeddedServer(home = dataHome()): Promise<EmbeddedServer> {
  // Checked before anything starts, so a mistyped value is reported instead of half applied.
  const retentionMs = retentionFromEnv();
  fs.mkdirSync(path.join(home, 'logs'), { recursive: true });
  return withLock(home, async () => {
    const known = readRecord(home, SERVER_RECORD);
    if (known?.port && isProcessAlive(known.pid) && (await isListening(known.port))) {
      const address = `127.0.0.1:${known.port}`;
      let record = known;
      if (known.retentionMs !== retentionMs) {
        await applyRetention(address, retentionMs);
        record = { ...record, retentionMs };
      }
      // A server started by an older durable-agent has none of them yet.
      if (!hasAllSearchAttributes(known.searchAttributes)) {
        record = { ...record, searchAttributes: await registerSearchAttributes(address) };
      }
      if (record !== known) writeRecord(home, SERVER_RECORD, record);
      return { address, uiUrl: `http://127.0.0.1:${known.uiPort}`, pid: known.pid };
    }
    // The machine-wide port lock is held only until the new server has bound its ports; the rest
    // of its set-up (retention, search attributes) needs no other starter to wait.
    const started = await withPortLock(() => launchServer(home, known));
    return finishServer(home, started, retentionMs);
  });
}

interface LaunchedServer {
  pid: number;
  port: number;
  uiPort: number;
}

/** Start `temporal server start-dev` on ports nobody else holds, and wait until it listens. */
async function launchServer(home: string, known: ProcessRecord | undefined): Promise<LaunchedServer> {
  const binary = findTemporalBinary();
  // The ports it had before (a record left by a server that died without `stop` counts too).
  const before =
    readRecord<PortsRecord>(home, PORTS_RECORD) ??
    (known?.port && known.uiPort ? { port: known.port, uiPort: known.uiPort } : undefined);
  const wanted = before ?? { port: PREFERRED_PORT, uiPort: PREFERRED_UI_PORT };
  const port = (await firstFreePort([wanted.port, PREFERRED_PORT])) ?? (await freePort());
  const uiPort =
    (await firstFreePort([wanted.uiPort, PREFERRED_UI_PORT].filter((p) => p !== port))) ??
    (await freePortOtherThan(port));
  if (port !== wanted.port || uiPort !== wanted.uiPort) {
    process.stderr.write(
      `· the embedded Temporal server listens on 127.0.0.1:${port} with its UI at http://127.0.0.1:${uiPort} ` +
        `(${wanted.port} and ${wanted.uiPort}${before ? ', which it had before,' : ''} were not both free); ` +
        'it keeps these from now on\n',
    );
  }
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
      ...EMBEDDED_SERVER_TUNING,
      // Registers them in a new database; an existing one gets them through the operator service below.
      ...JOB_SEARCH_ATTRIBUTES.flatMap(({ key, cliType }) => ['--search-attribute', `${key.name}=${cliType}`]),
    ],
    // The server needs no credential, and its /proc/<pid>/environ is readable for its whole life.
    { detached: true, stdio: ['ignore', log, log], env: withoutSecrets(process.env) },
  );
  child.unref();
  fs.closeSync(log);
  if (child.pid === undefined) throw new Error(`Could not start ${binary}`);
  writeRecord(home, SERVER_RECORD, { pid: child.pid, port, uiPort, startedAt: new Date().toISOString() });
  writeRecord(home, PORTS_RECORD, { port, uiPort });
  const deadline = Date.now() + 60_000;
  // Both ports bound before the port lock is let go, so the next starter sees them taken.
  while (!(await isListening(port)) || !(await isListening(uiPort))) {
    if (!isProcessAlive(child.pid) || Date.now() > deadline) {
      throw new Error(
        `The embedded Temporal server did not start; see ${path.join(home, 'logs', 'temporal-server.log')}`,
      );
    }
    await sleep(200);
  }
  return { pid: child.pid, port, uiPort };
}

/** Give a server just launched the namespace's retention and the job search attributes. */
async function finishServer(
  home: string,
  { pid, port, uiPort }: LaunchedServer,
  retentionMs: number,
): Promise<EmbeddedServer> {
  const address = `127.0.0.1:${port}`;
  // `start-dev` has no retention flag; the namespace setting lives in the database and survives restarts.
  await applyRetention(address, retentionMs);
  const searchAttributes = await registerSearchAttributes(address);
  writeRecord(home, SERVER_RECORD, {
    pid,
    port,
    uiPort,
    startedAt: new Date().toISOString(),
    retentionMs,
    searchAttributes,
  });
  return { address, uiUrl: `http://127.0.0.1:${uiPort}`, pid };
}

/** The first of `ports` nobody listens on or holds, if any. */
async function firstFreePort(ports: Array<number | undefined>): Promise<number | undefined> {
  for (const port of ports) if (port !== undefined && (await canBind(port))) return port;
  return undefined;
}

async function freePortOtherThan(taken: number): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port !== taken) return port;
  }
}

/** True when this process could listen on 127.0.0.1:port right now. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function hasAllSearchAttributes(registered: string[] | undefined): boolean {
  return JOB_SEARCH_ATTRIBUTES.every(({ key }) => registered?.includes(key.name));
}

/**
 * Register the job search attributes on the embedded server's namespace where missing: a database
 * made before they existed has none, and `start-dev --search-attribute` only registers them in a
 * new one. Returns their names.
 */
async function registerSearchAttributes(address: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    const missing = JOB_SEARCH_ATTRIBUTES.filter(({ key }) => customAttributes?.[key.name] === undefined);
    if (missing.length > 0) {
      await connection.operatorService.addSearchAttributes({
        namespace: 'default',
        searchAttributes: Object.fromEntries(
          missing.map(({ key }) => [key.name, encodeSearchAttributeIndexedValueType(key.type)!]),
        ),
      });
    }
    return JOB_SEARCH_ATTRIBUTES.map(({ key }) => key.name);
  } catch (error) {
    throw new Error(
      `Could not register the job search attributes on the embedded server: ${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    await connection.close();
  }
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
      // A worker some shell without a key started (any `ls` does) would leave every model call
      // waiting: this shell has a key, so the worker is started again with it.
      const shellHasCredentials = hasModelCredentials(process.env);
      // A shell without credentials (any `ls` from another terminal) never replaces a worker's.
      const changed = shellHasCredentials
        ? known.modelCredentials === false
          ? 'it has no model credentials, and this shell has ANTHROPIC_API_KEY'
          : modelSettingsChange(known.modelSettings, modelSettingsOf(process.env))
        : undefined;
      if (changed === undefined) return { pid: known.pid, started: false };
      process.stderr.write(
        `· restarting the background worker (pid ${known.pid}): ${changed}; running tools finish on the old one, and every job's next model call uses this shell's settings\n`,
      );
      await stopProcess(known.pid);
    }
    // A worker that cannot use its store would stop at once, saying why only in its log: say it here.
    await (await openContentStore(process.env)).check();
    const log = fs.openSync(path.join(home, 'logs', 'worker.log'), 'a');
    // The worker runs the same build as this CLI: compiled JS, or TypeScript under ts-node in tests.
    // Its supervisor starts it, and starts it again whenever it dies (`worker/supervisor.ts`).
    const workerMain = path.join(__dirname, '..', 'worker', `supervisor${path.extname(__filename)}`);
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
      modelCredentials: hasModelCredentials(process.env),
      shutdownGraceMs: graceOf(process.env),
      modelSettings: modelSettingsOf(process.env),
    });
    return { pid: child.pid, started: true };
  });
}

/** After this long without an answer from a running background worker, its log is worth a look. */
const SLOW_WORKER_MS = 60_000;

/**
 * For a follower (`run`, `tail`) on the embedded default when no worker answers: the background
 * worker is started again if it stopped (its supervisor too was gone: a reboot, a kill); while it
 * runs (its supervisor restarting it), nothing is said for a minute, then where its log is.
 */
export function embeddedNoWorker(home = dataHome()): (afterMs: number) => Promise<string | undefined> {
  return async (afterMs) => {
    const worker = await ensureEmbeddedWorker(await ensureEmbeddedServer(home), home);
    if (worker.started) return `the background worker had stopped: started it again (pid ${worker.pid})`;
    if (afterMs < SLOW_WORKER_MS) return undefined;
    return `the background worker (pid ${worker.pid}) has not answered for ${Math.round(SLOW_WORKER_MS / 1000)} s; its log: ${path.join(home, 'logs', 'worker.log')}`;
  };
}

/**
 * Stop the embedded server and worker, if running. Jobs stay in the database for next time. The
 * worker goes first and is given its shutdown grace time (`DURABLE_AGENT_SHUTDOWN_GRACE`, default
 * 11 minutes) to let its running tools finish while the server still takes their results; it exits
 * as soon as they have, at once when none runs. `onWait` hears once that it is waiting.
 */
export async function stopEmbedded(
  home = dataHome(),
  onWait: (message: string) => void = (message) => process.stderr.write(`${message}\n`),
): Promise<string[]> {
  const stopped: string[] = [];
  for (const [name, label] of [
    [WORKER_RECORD, 'worker'],
    [SERVER_RECORD, 'Temporal server'],
  ] as const) {
    const record = readRecord(home, name);
    if (record && isProcessAlive(record.pid)) {
      if (name === WORKER_RECORD) {
        const graceMs = record.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
        await stopProcess(
          record.pid,
          graceMs + SHUTDOWN_FORCE_MARGIN_MS,
          () =>
            onWait(
              `· waiting for the background worker (pid ${record.pid}) to let the model calls and tools it runs finish ` +
                `(at most ${formatGrace(graceMs)}; its log: ${path.join(home, 'logs', 'worker.log')})`,
            ),
          { group: true },
        );
      } else {
        await stopProcess(record.pid);
      }
      stopped.push(`${label} (pid ${record.pid})`);
    }
    fs.rmSync(path.join(home, name), { force: true });
  }
  return stopped;
}

/** The shutdown grace time a worker started from `env` will use; the default when `env`'s is unreadable. */
function graceOf(env: NodeJS.ProcessEnv): number {
  try {
    return shutdownGraceFromEnv(env);
  } catch {
    return DEFAULT_SHUTDOWN_GRACE_MS;
  }
}

/** SIGTERM, then SIGKILL if it is still there after `waitMs` (`onSlow` is told after 2 s). */
async function stopProcess(
  pid: number,
  waitMs = 10_000,
  onSlow?: () => void,
  options: { group?: boolean } = {},
): Promise<void> {
  process.kill(pid, 'SIGTERM');
  const startedAt = Date.now();
  const deadline = startedAt + waitMs;
  let told = false;
  while (isProcessAlive(pid) && Date.now() < deadline) {
    if (!told && onSlow && Date.now() - startedAt > 2_000) {
      told = true;
      onSlow();
    }
    await sleep(100);
  }
  if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
  // The worker's supervisor leads a process group with the worker in it: a worker that did not
  // drain in time goes too. (Its tools' commands are groups of their own, looked after by the next
  // worker, which adopts or kills them.)
  if (options.group) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  }
}

/** `env` without anything named like a credential. */
function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !isSecretEnvName(name)));
}

/**
 * A headless run on the embedded server from a shell without model credentials would start a
 * worker that cannot call the model, and wait for one that can for as long as it takes: in a
 * pipeline, until its timeout, in silence. Refused at once instead (a detached job may wait).
 */
export function refuseWithoutCredentials(env: NodeJS.ProcessEnv, what = 'run'): void {
  if (temporalTargetFromEnv(env) || hasModelCredentials(env) || liveEmbeddedWorkerHasCredentials()) return;
  throw new InvalidArgumentError(
    `ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) is not set, so the embedded worker this ${what} starts cannot call the model: ` +
      `set it (in CI, from a secret), or use --detach to start the ${what === 'run' ? 'job' : what} and let it wait for a worker that has it.`,
  );
}

/**
 * An `ANTHROPIC_BASE_URL` the embedded worker could not use (not a URL, not http(s), a password in
 * it) would fail every model call of the job: refused at once, without repeating the password.
 */
export function refuseBadBaseUrl(env: NodeJS.ProcessEnv): void {
  const value = env.ANTHROPIC_BASE_URL?.trim();
  if (temporalTargetFromEnv(env) || !value) return;
  const problem = baseUrlProblem(value);
  if (problem) throw new InvalidArgumentError(`${problem}.`);
}
