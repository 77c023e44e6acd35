import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SandboxEngine } from '../../src/activities/sandbox/engine';
import type { ToolContext } from '../../src/activities/tools/index';
import type { JobSandbox } from '../../src/shared/sandbox';

/**
 * Fixtures live outside /tmp: inside the sandbox /tmp is the job's private folder, so anything
 * under the host's /tmp is out of sight already and would prove nothing about a deny rule.
 */
export const FIXTURE_BASE =
  process.env.DURABLE_AGENT_TEST_FIXTURES || (fs.existsSync('/var/tmp') ? '/var/tmp' : os.homedir());

/** A fake home full of credentials, a worker data folder, TLS files and a workspace. */
export interface SandboxFixture {
  root: string;
  workspace: string;
  home: string;
  dataHome: string;
  tlsKey: string;
  tlsCert: string;
  /** Somewhere outside everything writable. */
  outside: string;
  /** Where the engine makes the jobs' private temp folders. */
  tempRoot: string;
  /** Each credential place and the secret written into it. */
  credentials: Array<{ file: string; secret: string }>;
  cleanup(): void;
}

export function makeSandboxFixture(
  secret = `sk-ant-test-SECRET-${Math.random().toString(36).slice(2)}`,
): SandboxFixture {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(FIXTURE_BASE, 'durable-agent-sandbox-test-')));
  const workspace = path.join(root, 'ws');
  const home = path.join(root, 'home');
  const dataHome = path.join(root, 'data');
  const outside = path.join(root, 'outside');
  const tempRoot = path.join(root, 'tmp');
  for (const dir of [workspace, home, dataHome, outside, tempRoot]) fs.mkdirSync(dir, { recursive: true });
  const credentials = [
    '.ssh/id_ed25519',
    '.aws/credentials',
    '.config/gcloud/application_default_credentials.json',
    '.netrc',
    '.docker/config.json',
    '.kube/config',
    '.bashrc',
    '.claude/.credentials.json',
    '.config/git/credentials',
    '.cache/huggingface/token',
    '.config/containers/auth.json',
    '.m2/settings.xml',
    '.gradle/gradle.properties',
    '.gem/credentials',
    '.composer/auth.json',
    '.s3cfg',
    '.boto',
    '.config/rclone/rclone.conf',
    '.oci/config',
    '.kaggle/kaggle.json',
    '.config/gh/hosts.yml',
    '.npmrc',
    '.pypirc',
    '.python_history',
    '.psql_history',
    '.mysql_history',
  ].map((relative, index) => ({ file: path.join(home, relative), secret: `${secret}-home-${index}` }));
  credentials.push({ file: path.join(dataHome, 'store', 'ab', 'cdef'), secret: `${secret}-store` });
  credentials.push({ file: path.join(dataHome, 'temporal.db'), secret: `${secret}-db` });
  const tlsKey = path.join(root, 'tls', 'client.key');
  const tlsCert = path.join(root, 'tls', 'client.pem');
  credentials.push({ file: tlsKey, secret: `${secret}-tls-key` }, { file: tlsCert, secret: `${secret}-tls-cert` });
  for (const { file, secret: value } of credentials) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${value}\n`);
  }
  fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Sandbox Test\n\temail = test@example.com\n');
  return {
    root,
    workspace,
    home,
    dataHome,
    tlsKey,
    tlsCert,
    outside,
    tempRoot,
    credentials,
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/** The engine a worker with this fixture's home, data folder and TLS files would have. */
export function fixtureEngine(fixture: SandboxFixture, bwrap?: string): SandboxEngine {
  return new SandboxEngine({
    homeDir: fixture.home,
    workerPrivatePaths: [fixture.dataHome, fixture.tlsKey, fixture.tlsCert],
    // The jobs' private temp folders go with the fixture, so they are removed with it.
    tempRoot: fixture.tempRoot,
    ...(bwrap ? { bwrap } : {}),
  });
}

/** A tool context whose Bash runs under `policy` in `engine`, recording how each command started. */
export function sandboxContext(
  fixture: SandboxFixture,
  engine: SandboxEngine,
  policy: JobSandbox = { enabled: true, source: 'test' },
  overrides: Partial<ToolContext> = {},
): ToolContext & { starts: Array<{ sandboxed: boolean }> } {
  const starts: Array<{ sandboxed: boolean }> = [];
  return {
    workspace: fixture.workspace,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    readState: {},
    readDenyRules: [],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: fixture.home, LANG: 'C.UTF-8' },
    sessionKey: `session-${Math.random().toString(36).slice(2)}`,
    sandbox: { engine, policy },
    onCommandStart: (facts) => starts.push(facts),
    starts,
    ...overrides,
  };
}

/**
 * `sleep` processes on this host whose argument contains `marker`, zombies excluded (the
 * bwrap and bash that started them carry the marker in their command lines too).
 */
export function livingSleeps(marker: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [program, ...args] = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (path.basename(program ?? '') !== 'sleep' || !args.some((arg) => arg.includes(marker))) continue;
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(') ') + 2)[0];
      if (state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/**
 * Polls `livingSleeps(marker)` until it counts `count` (0: until none is left), for at most
 * `timeoutMs`; returns the last count. Processes take a while to start, and to die, on a loaded
 * machine: a test waits for them rather than looking once after a fixed delay.
 */
export async function sleepsReach(marker: string, count: number, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const living = livingSleeps(marker).length;
    if (living === count || Date.now() > deadline) return living;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Counts `livingSleeps(marker)` every 20 ms until `stop()`, which returns the most seen at once. */
export function watchSleeps(marker: string): { stop(): number } {
  let most = 0;
  const timer = setInterval(() => (most = Math.max(most, livingSleeps(marker).length)), 20);
  return {
    stop: () => {
      clearInterval(timer);
      return most;
    },
  };
}

/** A TCP server on 127.0.0.1 of this host that answers "hello" to every connection. */
export async function startLocalServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer((socket) => socket.end('hello-from-host\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { port: address.port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
