import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where durable-agent keeps its data: the embedded server's database, the content store, logs. */
export function dataHome(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.DURABLE_AGENT_HOME || path.join(os.homedir(), '.durable-agent'));
}

export function storeDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(dataHome(env), 'store');
}

/** How to reach Temporal: from the environment, as Temporal's own tools name it. */
export interface TemporalTarget {
  address: string;
  namespace: string;
  tls?: { clientCertPair?: { crt: Buffer; key: Buffer } } | true;
  apiKey?: string;
}

export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

/**
 * The cluster named by `TEMPORAL_ADDRESS` (with `TEMPORAL_NAMESPACE`, `TEMPORAL_TLS_CERT` and
 * `TEMPORAL_TLS_KEY` or `TEMPORAL_API_KEY` for Temporal Cloud), or undefined for the embedded server.
 */
export function temporalTargetFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalTarget | undefined {
  const address = env.TEMPORAL_ADDRESS?.trim();
  if (!address) return undefined;
  const namespace = env.TEMPORAL_NAMESPACE?.trim() || 'default';
  const certPath = env.TEMPORAL_TLS_CERT?.trim();
  const keyPath = env.TEMPORAL_TLS_KEY?.trim();
  if (Boolean(certPath) !== Boolean(keyPath)) {
    throw new ConfigurationError(
      'Set both TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY (paths to the client certificate and key), or neither.',
    );
  }
  const apiKey = env.TEMPORAL_API_KEY?.trim() || undefined;
  const read = (file: string, name: string) => {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new ConfigurationError(`${name}=${file} cannot be read: ${(error as Error).message}`);
    }
  };
  const tls =
    certPath && keyPath
      ? { clientCertPair: { crt: read(certPath, 'TEMPORAL_TLS_CERT'), key: read(keyPath, 'TEMPORAL_TLS_KEY') } }
      : apiKey || env.TEMPORAL_TLS === 'true'
        ? (true as const)
        : undefined;
  return { address, namespace, ...(tls ? { tls } : {}), ...(apiKey ? { apiKey } : {}) };
}

/** The model a job uses when neither `--model` nor `ANTHROPIC_MODEL` names one. */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';

/** How an age is written, wherever durable-agent takes one (`prune --older-than`, `DURABLE_AGENT_RETENTION`). */
export const AGE_FORM = 'a whole number followed by m (minutes), h (hours) or d (days), e.g. 30m, 12h or 7d';

const AGE_UNIT_MS = { m: 60_000, h: 60 * 60_000, d: 24 * 60 * 60_000 } as const;

/** The milliseconds of an age such as `7d`, `12h` or `30m`; undefined for anything else (or zero). */
export function parseAge(text: string): number | undefined {
  const match = /^(\d+)([mhd])$/.exec(text.trim());
  if (!match?.[1] || !match[2]) return undefined;
  const ms = Number(match[1]) * AGE_UNIT_MS[match[2] as keyof typeof AGE_UNIT_MS];
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined;
}

/** An age in the largest unit that writes it exactly: `7d`, `36h`, `90m`. */
export function formatAge(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) {
    if (ms % AGE_UNIT_MS[unit] === 0) return `${ms / AGE_UNIT_MS[unit]}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}

/** How long the embedded server keeps a closed job when `DURABLE_AGENT_RETENTION` is not set: the dev server's own default. */
export const DEFAULT_RETENTION_MS = AGE_UNIT_MS.d;
/** Temporal refuses a namespace retention under an hour. */
export const MIN_RETENTION_MS = AGE_UNIT_MS.h;

/**
 * How long the embedded Temporal server keeps a closed job (its Terminal, history and place in
 * `ls`): `DURABLE_AGENT_RETENTION`, or 24 hours. A cluster of your own keeps its namespace's setting.
 */
export function retentionFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.DURABLE_AGENT_RETENTION?.trim();
  if (!raw) return DEFAULT_RETENTION_MS;
  const ms = parseAge(raw);
  if (ms === undefined)
    throw new ConfigurationError(`DURABLE_AGENT_RETENTION="${raw}" is not an age: use ${AGE_FORM}.`);
  if (ms < MIN_RETENTION_MS) {
    throw new ConfigurationError(
      `DURABLE_AGENT_RETENTION=${raw} is shorter than 1h, the least Temporal keeps a closed workflow; use 1h or more, e.g. 7d.`,
    );
  }
  return ms;
}
