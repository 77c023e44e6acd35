/**
 * A real Temporal cluster for tests, without Docker: a throwaway PostgreSQL, Temporal's schema
 * applied with `temporal-sql-tool` the way Temporal's compose files do it, and `temporal-server`
 * (all four services in one process) on free loopback ports, with the `default` namespace and the
 * job search attributes registered through the `temporal` CLI. Unlike the CLI's dev server, this is
 * the server a deployment runs: SQL persistence and visibility, membership, sticky queues that time
 * out when a worker dies.
 *
 * Binaries come from the project's install scripts (`scripts/install-postgres.sh`,
 * `scripts/install-temporal-server.sh`, `scripts/install-temporal.sh`), which are instant once
 * installed; `npm run test:cluster` runs them before jest, so a first build happens outside any
 * test timeout.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../../src/client/free-port';
import { JOB_SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes';

const root = path.join(__dirname, '..', '..');

/** The database role and password of the throwaway PostgreSQL (loopback only, gone after `stop`). */
const DB_USER = 'temporal';
const DB_PASSWORD = 'temporal';
const DATABASES = [
  { name: 'temporal', schema: 'temporal' },
  { name: 'temporal_visibility', schema: 'visibility' },
] as const;

/** How much of a process's output is kept for error messages. */
const LOG_TAIL_CHARS = 64_000;

export interface TemporalCluster {
  /** host:port of the frontend, for `TEMPORAL_ADDRESS`. */
  address: string;
  namespace: string;
  /** The `temporal` CLI the cluster was set up with. */
  temporalCli: string;
  /** The tail of the server's and PostgreSQL's output, for failure messages. */
  logs(): string;
  /** Stop the server and PostgreSQL (only the processes this started) and remove their folder. */
  stop(): Promise<void>;
}

/** A child process with its output kept (the tail) and its exit awaited. */
export interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<void>;
}

function startProcess(command: string, args: string[], options: { cwd: string; uid?: number; gid?: number }): Started {
  const child = spawn(command, args, {
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid } : {}),
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-LOG_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return { child, output: () => output, exited };
}

/** Signal a process this module started and wait for it to exit, with SIGKILL after `graceMs`. */
export async function stopProcess(
  started: Started | undefined,
  signal: NodeJS.Signals,
  graceMs: number,
): Promise<void> {
  if (!started) return;
  const { child, exited } = started;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) {
  return new Promise<string>((resolve, reject) => {
    execFile(
      command,
      args,
      { env: options.env ?? process.env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${path.basename(command)} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
        else resolve(stdout + stderr);
      },
    );
  });
}

/** What an install script prints on stdout: the path it provides. */
function installed(script: string): string {
  return execFileSync('bash', [path.join(root, 'scripts', script)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** initdb and postgres refuse to run as root: as root, they run as this user (Debian's package makes it). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      // No such user: try the next.
    }
  }
  throw new Error('running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL as');
}

/**
 * Poll `check` until it is true. A check that throws means "not yet" (a CLI that cannot connect
 * yet); `exited` is asked each round and ends the wait at once with the process's own words, so a
 * process that died at start is reported as such, not as a timeout that hides why.
 */
async function waitUntil(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  logs: () => string,
  exited: () => string | undefined = () => undefined,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const gone = exited();
    if (gone) throw new Error(`${gone} while waiting for ${what}\n${logs()}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) {
      // A busy event loop can run this timer before the output that arrived meanwhile is read:
      // let pending I/O in, then look once more before calling it a timeout.
      await new Promise((resolve) => setImmediate(resolve));
      if (await check().catch(() => false)) return;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${logs()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** "exited with code N" (or "killed by SIGX") once a started process is gone, else undefined. */
function exitOf(started: Started, name: string): string | undefined {
  const { exitCode, signalCode } = started.child;
  if (exitCode !== null) return `${name} exited with code ${exitCode}`;
  if (signalCode !== null) return `${name} was killed by ${signalCode}`;
  return undefined;
}

/**
 * initdb and start a throwaway PostgreSQL in `dir` (which the PostgreSQL user must be able to
 * reach), on a free loopback port. Exported for its own test.
 */
export async function startPostgres(dir: string, logs: () => string): Promise<{ port: number; server: Started }> {
  const bin = installed('install-postgres.sh');
  const user = postgresUser();
  const data = path.join(dir, 'data');
  const passwordFile = path.join(dir, 'password');
  fs.writeFileSync(passwordFile, `${DB_PASSWORD}\n`, { mode: 0o600 });
  if (user) {
    for (const entry of [dir, passwordFile]) fs.chownSync(entry, user.uid, user.gid);
  }
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  execFileSync(
    path.join(bin, 'initdb'),
    [
      '-D',
      data,
      '-U',
      DB_USER,
      `--pwfile=${passwordFile}`,
      // Password authentication over TCP, as Temporal connects in production.
      '--auth-host=scram-sha-256',
      '--auth-local=trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ],
    { cwd: dir, stdio: 'pipe', ...asUser },
  );
  // The port was free a moment ago; something else may take it before postgres binds. Then
  // postgres exits saying so, and a fresh port is tried: a few times, never forever.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const server = startProcess(
      path.join(bin, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        // TCP only, as Temporal connects: a Unix socket's path has a 107-byte limit that a nested
        // temp folder (CI's, then the test run's) overflows, and postgres then refuses to start.
        '-k',
        '',
        '-c',
        'listen_addresses=127.0.0.1',
        // Each of Temporal's four services opens pools of its own.
        '-c',
        'max_connections=200',
        // A throwaway database: durability across a power loss is not what these tests are about.
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
      ],
      { cwd: dir, ...asUser },
    );
    const withOwnOutput = () => `${logs()}\n--- postgres output (tail) ---\n${server.output()}`;
    try {
      await waitUntil(
        `PostgreSQL on 127.0.0.1:${port}`,
        30_000,
        async () => server.output().includes('database system is ready to accept connections'),
        withOwnOutput,
        () => exitOf(server, 'postgres'),
      );
      return { port, server };
    } catch (error) {
      await stopProcess(server, 'SIGINT', 10_000);
      const portTaken = /could not bind|Address already in use/i.test(server.output());
      if (!portTaken || attempt >= 3) throw error;
    }
  }
}

/** Create both databases and bring their schemas to this version, as Temporal's compose setup does. */
async function applySchema(serverDir: string, port: number): Promise<void> {
  const sqlTool = path.join(serverDir, 'temporal-sql-tool');
  const common = ['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(port), '-u', DB_USER];
  // The password through the environment, not the command line.
  const env = { ...process.env, SQL_PASSWORD: DB_PASSWORD };
  for (const { name, schema } of DATABASES) {
    await run(sqlTool, [...common, '--db', name, 'create'], { env });
    await run(sqlTool, [...common, '--db', name, 'setup-schema', '-v', '0.0'], { env });
    const versioned = path.join(serverDir, 'schema', 'postgresql', 'v12', schema, 'versioned');
    await run(sqlTool, [...common, '--db', name, 'update-schema', '-d', versioned], { env });
  }
}

interface ServerPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/**
 * A port that was free a moment ago, below 32768: Temporal keeps a node's membership port in a
 * PostgreSQL `smallint` (cluster_membership.rpc_port), which the kernel's ephemeral ports (what
 * `freePort` gets) overflow.
 */
async function freeLowPort(taken: Set<number>): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('found no free port between 20000 and 32000 on 127.0.0.1');
}

async function serverPorts(): Promise<ServerPorts> {
  const names = [
    'frontend',
    'frontendHttp',
    'frontendMembership',
    'history',
    'historyMembership',
    'matching',
    'matchingMembership',
    'worker',
    'workerMembership',
  ] as const;
  const ports: Partial<ServerPorts> = {};
  const taken = new Set<number>();
  for (const name of names) ports[name] = await freeLowPort(taken);
  return ports as ServerPorts;
}

/** The server's configuration: Temporal's development-postgres12.yaml, on these ports. */
function serverConfig(options: { dbPort: number; ports: ServerPorts; dynamicConfig: string }): string {
  const { dbPort, ports } = options;
  const datastore = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `127.0.0.1:${dbPort}`,
      connectProtocol: 'tcp',
      user: DB_USER,
      password: DB_PASSWORD,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  return stringify({
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: 4,
      datastores: {
        'postgres-default': datastore('temporal', 10),
        'postgres-visibility': datastore('temporal_visibility', 5),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.historyMembership),
      matching: service(ports.matching, ports.matchingMembership),
      worker: service(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${ports.frontend}`,
          httpAddress: `127.0.0.1:${ports.frontendHttp}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: options.dynamicConfig, pollInterval: '10s' },
  });
}

/**
 * Dynamic config of a test cluster: a namespace created a moment ago, and search attributes just
 * registered, are seen at once instead of after the caches' refresh (10 s and more by default).
 */
const DYNAMIC_CONFIG = stringify({
  'system.namespaceCacheRefreshInterval': [{ value: '1s', constraints: {} }],
  'system.forceSearchAttributesCacheRefreshOnRead': [{ value: true, constraints: {} }],
  'limit.maxIDLength': [{ value: 255, constraints: {} }],
});

/**
 * Start a cluster; `stop()` it in `afterAll`. On a failure part-way, what was started is stopped
 * before the error is thrown.
 */
export async function startTemporalCluster(options: { namespace?: string } = {}): Promise<TemporalCluster> {
  const namespace = options.namespace ?? 'default';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-cluster-'));
  // PostgreSQL's user (not this one, when this is root) must reach its folder inside.
  fs.chmodSync(dir, 0o755);
  const pgDir = path.join(dir, 'postgres');
  fs.mkdirSync(pgDir);
  let postgres: Started | undefined;
  let server: Started | undefined;
  const logs = () =>
    [
      server ? `--- temporal-server output (tail) ---\n${server.output()}` : '',
      postgres ? `--- postgres output (tail) ---\n${postgres.output()}` : '',
    ].join('\n');
  const stop = async () => {
    await stopProcess(server, 'SIGTERM', 10_000);
    // SIGINT is PostgreSQL's fast shutdown: disconnect everyone, stop at once.
    await stopProcess(postgres, 'SIGINT', 10_000);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const serverDir = installed('install-temporal-server.sh');
    const temporalCli = installed('install-temporal.sh');
    const pg = await startPostgres(pgDir, logs);
    postgres = pg.server;
    await applySchema(serverDir, pg.port);

    const ports = await serverPorts();
    const dynamicConfig = path.join(dir, 'dynamicconfig.yaml');
    fs.writeFileSync(dynamicConfig, DYNAMIC_CONFIG);
    const config = path.join(dir, 'temporal.yaml');
    fs.writeFileSync(config, serverConfig({ dbPort: pg.port, ports, dynamicConfig }));
    server = startProcess(
      path.join(serverDir, 'temporal-server'),
      ['--config-file', config, '--allow-no-auth', 'start'],
      { cwd: dir },
    );
    const address = `127.0.0.1:${ports.frontend}`;
    const cli = (args: string[]) => run(temporalCli, [...args, '--address', address], { timeoutMs: 30_000 });
    const running = server;
    await waitUntil(
      `temporal-server on ${address}`,
      60_000,
      async () => (await cli(['operator', 'cluster', 'health'])).includes('SERVING'),
      logs,
      () => exitOf(running, 'temporal-server'),
    );
    await cli(['operator', 'namespace', 'create', '--namespace', namespace, '--retention', '24h']);
    // Usable once the frontend's namespace cache has it: a visibility query goes through that cache.
    await waitUntil(
      `namespace ${namespace} to be usable`,
      30_000,
      async () => {
        await cli(['workflow', 'list', '--namespace', namespace, '--limit', '1']);
        return true;
      },
      logs,
    );
    // The job search attributes, as docs/operations.md tells a cluster's operator to register them.
    for (const { key, cliType } of JOB_SEARCH_ATTRIBUTES) {
      await cli([
        'operator',
        'search-attribute',
        'create',
        '--namespace',
        namespace,
        '--name',
        key.name,
        '--type',
        cliType,
      ]);
    }
    return { address, namespace, temporalCli, logs, stop };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await stop();
    throw new Error(`could not start the Temporal cluster: ${message}`, { cause: error });
  }
}
