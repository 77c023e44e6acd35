import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { isSecretEnvName } from '../activities/tools/bash-env';

/**
 * Credentials reach a worker that durable-agent starts itself over a pipe, not its environment.
 * A process's `/proc/<pid>/environ` keeps the environment it was started with for its whole life,
 * readable by any process of the same user, deleting variables later hides nothing. So the
 * launcher moves every secret-looking variable into one JSON object written to an extra file
 * descriptor, and names that descriptor in `DURABLE_AGENT_SECRETS_FD`.
 */
export const SECRETS_FD_VAR = 'DURABLE_AGENT_SECRETS_FD';

/** The descriptor number the launcher uses: the first after stdin, stdout and stderr. */
export const SECRETS_FD = 3;

/** `env` without its credentials, and the credentials. */
export function splitSecrets(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; secrets: Record<string, string> } {
  const rest: NodeJS.ProcessEnv = {};
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (isSecretEnvName(name)) secrets[name] = value;
    else rest[name] = value;
  }
  return { env: rest, secrets };
}

/**
 * The environment and stdio for starting a worker that receives `env`'s credentials over a pipe:
 * spawn it with these, then call `handOverSecrets` on the child.
 */
export function secretHandoffSpawn(
  env: NodeJS.ProcessEnv,
  stdio: readonly ['ignore' | 'pipe' | number, 'ignore' | 'pipe' | number, 'ignore' | 'pipe' | number],
): {
  env: NodeJS.ProcessEnv;
  stdio: Array<'ignore' | 'pipe' | number>;
  secrets: Record<string, string>;
} {
  const split = splitSecrets(env);
  return {
    env: { ...split.env, [SECRETS_FD_VAR]: String(SECRETS_FD) },
    stdio: [...stdio, 'pipe'],
    secrets: split.secrets,
  };
}

/** Write the credentials to the child's pipe and close it; resolves once they are written. */
export function handOverSecrets(child: ChildProcess, secrets: Record<string, string>): Promise<void> {
  const pipe = child.stdio[SECRETS_FD];
  if (!pipe || !('write' in pipe)) return Promise.reject(new Error('the worker was not started with a secrets pipe'));
  return new Promise((resolve, reject) => {
    pipe.on('error', reject);
    pipe.end(JSON.stringify(secrets), () => resolve());
  });
}

/**
 * The credentials handed over by the launcher, if it named a descriptor; `{}` otherwise. Reads
 * until the launcher closes its end, then closes the descriptor, so no child inherits it.
 */
export function receiveSecrets(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const named = env[SECRETS_FD_VAR];
  if (!named) return {};
  delete env[SECRETS_FD_VAR];
  const fd = Number(named);
  if (!Number.isInteger(fd) || fd < 3) throw new Error(`${SECRETS_FD_VAR}=${named} is not a file descriptor number`);
  let text: string;
  try {
    text = fs.readFileSync(fd, 'utf8');
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // Already closed.
    }
  }
  if (text.trim() === '') return {};
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`fd ${fd} did not hold a JSON object of secrets`);
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') secrets[name] = value;
  return secrets;
}

/**
 * Remove credentials from this process's environment, so nothing it starts later (git, rg, a
 * library's child process) inherits them. What `/proc/<pid>/environ` shows does not change.
 */
export function scrubSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  const removed: string[] = [];
  for (const name of Object.keys(env)) {
    if (isSecretEnvName(name)) {
      delete env[name];
      removed.push(name);
    }
  }
  return removed;
}
