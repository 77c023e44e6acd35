import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { failOrphanedModelCalls, InflightRecorder } from './inflight';
import { closeInheritedDescriptors } from './inherited-fds';
import { superviseOrphanGroups } from './orphan-groups';
import { dataHome, storeDir, temporalTargetFromEnv } from '../client/config';
import { unreachableReason } from '../client/free-port';
import { openContentStore } from '../client/store-config';
import { SandboxEngine } from '../activities/sandbox/engine';
import { unsandboxedReach } from '../activities/sandbox/reach';
import { buildToolEnv, isSecretEnvName, toolEnvNames } from '../activities/tools/bash-env';
import { anthropicFromEnv } from './anthropic-client';
import { createWorker, defaultHostId } from './create-worker';
import { SECRETS_FD_VAR, receiveSecrets, scrubSecrets } from './secret-handoff';
import { workerSandboxOptions } from './sandbox-options';
import { formatGrace, shutdownGraceFromEnv } from './shutdown-grace';
import { installQuietRuntime } from './runtime-logging';
import { stopWhenSupervisorGone } from './supervisor';
import { describeLimits, workerLimitsFromEnv } from './worker-limits';

/**
 * Run a worker until SIGINT/SIGTERM. Reads TEMPORAL_ADDRESS (and namespace, TLS, API key) and
 * DURABLE_AGENT_TASK_QUEUE from the environment, and credentials also from the pipe a launcher
 * hands them over (`secret-handoff.ts`); `durable-agent worker` and the embedded default both end
 * up here.
 */
export async function runWorker(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // One line per thing a person needs: the SDK's routine INFO lines are not among them.
  installQuietRuntime('durable-agent worker');
  // Names this process was started with: /proc/<pid>/environ shows them for its whole life.
  const secretsInStartEnv = Object.keys(env).filter(isSecretEnvName);
  const handedOver = receiveSecrets(env);
  // Nothing this worker starts gets a descriptor its starter left open (the handoff pipe is closed).
  closeInheritedDescriptors();
  const config: NodeJS.ProcessEnv = { ...env, ...handedOver };
  delete process.env[SECRETS_FD_VAR];
  // Nothing this worker starts (git, rg, Bash) inherits a credential from here on.
  scrubSecrets(process.env);
  if (env !== process.env) scrubSecrets(env);

  const target = temporalTargetFromEnv(config);
  if (!target) throw new Error('TEMPORAL_ADDRESS is not set: the worker needs a Temporal server to poll.');
  const shutdownGraceMs = shutdownGraceFromEnv(config);
  const limits = workerLimitsFromEnv(config);
  const home = dataHome(config);
  // A store this worker cannot use would fail every job's first model call; it stops here instead.
  const contentStore = await openContentStore(config);
  await contentStore.check();
  // A server that is not there is said in one line, not as the native client's transport error.
  const unreachable = await unreachableReason(target.address);
  if (unreachable) {
    throw new Error(
      `durable-agent worker: no Temporal server answers at ${target.address} (TEMPORAL_ADDRESS): ${unreachable}. Start it or check the address.`,
    );
  }
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
  // The model calls this worker runs, on record, so the next worker here can hand them back.
  const inflight = new InflightRecorder(home);
  try {
    const worker = await createWorker({
      activityInterceptors: [inflight.interceptor()],
      connection,
      namespace: target.namespace,
      taskQueue: config.DURABLE_AGENT_TASK_QUEUE || undefined,
      identity: `durable-agent@${os.hostname()}:${process.pid}`,
      hostId: defaultHostId(config),
      shutdownGraceMs,
      ...limits,
      activities: {
        anthropic: anthropicFromEnv(config),
        storeDir: storeDir(config),
        contentStore,
        toolEnv: buildToolEnv(config, toolEnvNames(config)),
        sandbox,
        ...(config.DURABLE_AGENT_STREAM_IDLE_MS ? { streamIdleMs: Number(config.DURABLE_AGENT_STREAM_IDLE_MS) } : {}),
        ...(config.DURABLE_AGENT_TEST_CRASH_AFTER_JOURNAL
          ? { crashAfterJournal: config.DURABLE_AGENT_TEST_CRASH_AFTER_JOURNAL }
          : {}),
      },
    });
    console.error(
      `durable-agent worker polling ${target.address} (${target.namespace}), task queue ${worker.taskQueue}, ` +
        `model calls on ${worker.modelTaskQueue} (${describeLimits(limits)}), ` +
        `tools of the workspaces on this host on ${worker.hostTaskQueue}, content store ${contentStore.location}`,
    );
    // Calls a worker that died here was running retry now, not at their heartbeat timeout, and
    // the process groups it left behind are adopted by those retries or killed.
    const orphans = superviseOrphans(target, home, storeDir(config), sandbox);
    // Temporal's runtime turns the first SIGTERM or SIGINT into `worker.shutdown()`: polling stops,
    // running tools get the grace time to finish, and `run()` returns once they have. A later signal
    // changes nothing (the tools' process groups would outlive a worker that died of it).
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      const running = worker.getStatus().numInFlightActivities;
      const activities = `${running} running activit${running === 1 ? 'y' : 'ies'}`;
      console.error(
        signals++ === 0
          ? `durable-agent worker: ${signal}: taking no new work; ${activities} may finish within ${formatGrace(shutdownGraceMs)}, then the worker exits`
          : `durable-agent worker: ${signal}: still waiting for ${activities} to finish (at most ${formatGrace(shutdownGraceMs)} after the first signal)`,
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // A supervised worker (the embedded default) whose supervisor is gone stops as on SIGTERM.
    const orphaned = stopWhenSupervisorGone(config, () => process.kill(process.pid, 'SIGTERM'));
    try {
      await worker.run();
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      clearInterval(orphaned);
    }
    await orphans.stop();
    console.error('durable-agent worker stopped');
    await inflight.remove();
  } finally {
    await connection.close();
  }
}

/** How often the process groups dead workers here left behind are looked at again. */
const ORPHAN_LOOK_MS = 5_000;

/**
 * Fail the calls of dead predecessors on this host, once, so their retries start now; then keep
 * looking after the process groups they left (`orphan-groups.ts`) every ORPHAN_LOOK_MS, saying
 * what was done.
 */
function superviseOrphans(
  target: NonNullable<ReturnType<typeof temporalTargetFromEnv>>,
  home: string,
  storeRoot: string,
  sandbox: SandboxEngine,
): { stop(): Promise<void> } {
  let connection: Promise<Connection> | undefined;
  const client = async () => {
    connection ??= Connection.connect({
      address: target.address,
      ...(target.tls ? { tls: target.tls } : {}),
      ...(target.apiKey ? { apiKey: target.apiKey } : {}),
    });
    return new Client({ connection: await connection, namespace: target.namespace });
  };
  const handBack = async () => {
    try {
      const report = await failOrphanedModelCalls(await client(), home);
      for (const activity of report.failed) {
        console.error(
          `durable-agent worker: ${activity.activityType} of ${activity.workflowId} (attempt ${activity.attempt}) died with its worker; its retry starts now`,
        );
      }
    } catch (error) {
      connection = undefined;
      console.error(`durable-agent worker: could not hand back a dead worker's calls: ${String(error)}`);
    }
  };
  const look = async () => {
    const actions = await superviseOrphanGroups(storeRoot, await client().catch(() => undefined), (paths) =>
      sandbox.releaseLeftovers(paths),
    ).catch(() => [] as Awaited<ReturnType<typeof superviseOrphanGroups>>);
    for (const { record, action, why } of actions) {
      if (action === 'killed')
        console.error(
          `durable-agent worker: killed process group ${record.pgid} that a dead worker (pid ${record.workerPid}) left running: ${why}`,
        );
    }
  };
  let running: Promise<void> | undefined;
  const once = (work: () => Promise<void>) => {
    running ??= work().finally(() => {
      running = undefined;
    });
  };
  once(() => handBack().then(look));
  const timer = setInterval(() => once(look), ORPHAN_LOOK_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
      await (await connection?.catch(() => undefined))?.close();
    },
  };
}

if (require.main === module) {
  runWorker().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
