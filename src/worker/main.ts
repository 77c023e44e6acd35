import os from 'node:os';
import { NativeConnection } from '@temporalio/worker';
import { storeDir, temporalTargetFromEnv } from '../client/config';
import { anthropicFromEnv } from './anthropic-client';
import { createWorker } from './create-worker';

/**
 * Run a worker until SIGINT/SIGTERM. Reads TEMPORAL_ADDRESS (and namespace, TLS, API key) and
 * DURABLE_AGENT_TASK_QUEUE from the environment; `durable-agent worker` and the embedded default
 * both end up here.
 */
export async function runWorker(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const target = temporalTargetFromEnv(env);
  if (!target) throw new Error('TEMPORAL_ADDRESS is not set: the worker needs a Temporal server to poll.');
  const connection = await NativeConnection.connect({
    address: target.address,
    ...(target.tls ? { tls: target.tls } : {}),
    ...(target.apiKey ? { apiKey: target.apiKey } : {}),
  });
  try {
    const worker = await createWorker({
      connection,
      namespace: target.namespace,
      taskQueue: env.DURABLE_AGENT_TASK_QUEUE || undefined,
      identity: `durable-agent@${os.hostname()}:${process.pid}`,
      activities: {
        anthropic: anthropicFromEnv(env),
        storeDir: storeDir(env),
        ...(env.DURABLE_AGENT_STREAM_IDLE_MS ? { streamIdleMs: Number(env.DURABLE_AGENT_STREAM_IDLE_MS) } : {}),
        ...(env.DURABLE_AGENT_TEST_CRASH_AFTER_JOURNAL
          ? { crashAfterJournal: env.DURABLE_AGENT_TEST_CRASH_AFTER_JOURNAL }
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
