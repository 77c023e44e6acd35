import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { BASE_FLAGS, BASE_FLAGS_WITHOUT_DISABLE_USERNS } from './bwrap-args';

/** Whether this worker can sandbox commands, and with which bubblewrap. */
export type SandboxAvailability =
  | { available: true; bwrap: string; version: string; baseFlags: readonly string[] }
  | { available: false; bwrap: string; reason: string };

const PROBE_TIMEOUT_MS = 10_000;

/** The probe's answers, by bwrap path: one real sandbox start per worker and path. */
const probes = new Map<string, Promise<SandboxAvailability>>();

/** The bwrap the worker uses: `DURABLE_AGENT_BWRAP` (a path, or a name looked up on PATH), else `bwrap`. */
export function configuredBwrap(env: NodeJS.ProcessEnv = process.env): string {
  return env.DURABLE_AGENT_BWRAP?.trim() || 'bwrap';
}

async function findExecutable(name: string, searchPath: string): Promise<string | undefined> {
  const candidates = name.includes('/')
    ? [name]
    : searchPath
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return path.resolve(candidate);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

function run(file: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { timeout: PROBE_TIMEOUT_MS, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
      (error, stdout, stderr) =>
        resolve({ ok: !error, stdout: String(stdout), stderr: String(stderr || (error?.message ?? '')) }),
    );
  });
}

/**
 * Start a real sandbox, the way Bash will (own PID and network namespace, no capabilities, a
 * fresh /proc, a hidden folder), and see it run `true`. A bwrap that is installed but cannot
 * create namespaces here (an unprivileged container) fails this and counts as unavailable.
 */
async function probeOnce(bwrap: string): Promise<SandboxAvailability> {
  const found = await findExecutable(bwrap, process.env.PATH ?? '');
  if (!found) {
    return { available: false, bwrap, reason: `bubblewrap is not installed (no executable ${JSON.stringify(bwrap)})` };
  }
  const version = (await run(found, ['--version'])).stdout.trim().replace(/^bubblewrap\s+/, '') || 'unknown version';
  let lastError = '';
  for (const baseFlags of [BASE_FLAGS, BASE_FLAGS_WITHOUT_DISABLE_USERNS]) {
    const attempt = await run(found, [
      ...baseFlags,
      '--unshare-net',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--perms',
      '0000',
      '--tmpfs',
      '/tmp',
      '--',
      'true',
    ]);
    if (attempt.ok) return { available: true, bwrap: found, version, baseFlags };
    lastError = attempt.stderr.trim().split('\n')[0] ?? '';
  }
  return {
    available: false,
    bwrap: found,
    reason: `bubblewrap ${version} at ${found} cannot start a sandbox here: ${lastError || 'it failed without a message'}`,
  };
}

/** Probe once per bwrap path and remember the answer for the life of the worker. */
export function probeSandbox(bwrap: string): Promise<SandboxAvailability> {
  let probe = probes.get(bwrap);
  if (!probe) {
    probe = probeOnce(bwrap);
    probes.set(bwrap, probe);
  }
  return probe;
}
