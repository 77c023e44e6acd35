import os from 'node:os';
import { NativeConnection } from '@temporalio/worker';
import { dataHome, storeDir, temporalTargetFromEnv } from '../client/config';
import { SandboxEngine } from '../activities/sandbox/engine';
import { unsandboxedReach } from '../activities/sandbox/reach';
import { buildToolEnv, isSecretEnvName, toolEnvNames } from '../activities/tools/bash-env';
import { anthropicFromEnv } from './anthropic-client';
import { createWorker } from './create-worker';
import { SECRETS_FD_VAR, receiveSecrets, scrubSecrets } from './secret-handoff';
import { workerSandboxOptions } from './sandbox-options';

/**
 * Run a worker until SIGINT/SIGTERM. Reads TEMPORAL_ADDRESS (and namespace, TLS, API key) and
 * DURABLE_AGENT_TASK_QUEUE from the environment, and credentials also from the pipe a launcher
 * hands them over (`secret-handoff.ts`); `durable-agent worker` and the embedded default both end
 * up here.
 */
export async function runWorker(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Names this process was started with: /proc/<pid>/environ shows them for its whole life.
  const secretsInStartEnv = Object.keys(env).filter(isSecretEnvName);
  const handedOver = receiveSecrets(env);
  const config: NodeJS.ProcessEnv = { ...env, ...handedOver };
  delete process.env[SECRETS_FD_VAR];
  // Nothing this worker starts (git, rg, Bash) inherits a credential from here on.
  scrubSecrets(process.env);
  if (env !== process.env) scrubSecrets(env);

  const target = temporalTargetFromEnv(config);
  if (!target) throw new Error('TEMPORAL_ADDRESS is not set: the worker needs a Temporal server to poll.');
  const home = dataHome(config);
  const { options: sandboxOptions, tlsPaths } = workerSandboxOptions(config);
  const sandbox = new SandboxEngine(sandboxOptions);
  const availability = await sandbox.availability();
  const reach = unsandboxedReach({
    homeDir: os.homedir(),
    dataHome: home,
    tlsPaths,
    secretsInStartEnv,
    pid: process.pid,
  });
  if (availability.available) {
    console.error(
      `durable-agent worker: Bash runs sandboxed (bubblewrap ${availability.version}, ${availability.bwrap}): its own PID namespace, ` +
        `writes only to the workspace and a private temp folder, no network unless the job allows it, credential places and ${home} hidden.` +
        (secretsInStartEnv.length > 0 ? ` Jobs that opt out run unsandboxed. ${reach}` : ''),
    );
  } else {
    console.error(
      `durable-agent worker: NO SANDBOX on this worker: ${availability.reason}. Bash refuses to run for jobs that require the sandbox ` +
        '(the default); install bubblewrap (`bash scripts/setup.sh`) and restart this worker, or opt jobs out with --no-sandbox or ' +
        `"sandbox": { "enabled": false }. ${reach}`,
    );
  }

  const connection = await NativeConnection.connect({
    address: target.address,
    ...(target.tls ? { tls: target.tls } : {}),
    ...(target.apiKey ? { apiKey: target.apiKey } : {}),
  });
  try {
    const worker = await createWorker({
      connection,
      namespace: target.namespace,
      taskQueue: config.DURABLE_AGENT_TASK_QUEUE || undefined,
      identity: `durable-agent@${os.hostname()}:${process.pid}`,
      activities: {
        anthropic: anthropicFromEnv(config),
        storeDir: storeDir(config),
        toolEnv: buildToolEnv(config, toolEnvNames(config)),
        sandbox,
        ...(config.DURABLE_AGENT_STREAM_IDLE_MS ? { streamIdleMs: Number(config.DURABLE_AGENT_STREAM_IDLE_MS) } : {}),
        ...(config.DURABLE_AGENT_TEST_CRASH_AFTER_JOURNAL
          ? { crashAfterJournal: config.DURABLE_AGENT_TEST_CRASH_AFTER_JOURNAL }
          : {}),
      },
    });
    console.error(
      `durable-agent worker polling ${target.address} (${target.namespace}), task queue ${worker.options.taskQueue}`,
    );
    await worker.run();
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  runWorker().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
