import path from 'node:path';
import { dataHome } from '../client/config';
import type { SandboxEngineOptions } from '../activities/sandbox/engine';
import { configuredBwrap } from '../activities/sandbox/probe';

/**
 * The worker's sandbox, from its configuration: which bwrap, and what only the worker may read:
 * its data folder (every job's transcript and journal, the embedded server's database) and the
 * Temporal TLS files.
 */
export function workerSandboxOptions(config: NodeJS.ProcessEnv): { options: SandboxEngineOptions; tlsPaths: string[] } {
  const tlsPaths = [config.TEMPORAL_TLS_CERT, config.TEMPORAL_TLS_KEY]
    .map((file) => file?.trim())
    .filter((file): file is string => !!file)
    .map((file) => path.resolve(file));
  return {
    options: { bwrap: configuredBwrap(config), workerPrivatePaths: [dataHome(config), ...tlsPaths] },
    tlsPaths,
  };
}
