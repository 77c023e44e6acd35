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
