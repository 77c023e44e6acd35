import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { NativeConnection } from '@temporalio/worker';
import { installQuietRuntime } from '../worker/runtime-logging';
import { ScriptedModelServer, loadScriptedSession } from '../model-server';
import type { Terminal } from '../shared/terminal';
import { anthropicFromEnv } from '../worker/anthropic-client';
import { createWorker } from '../worker/create-worker';
import { packageRoot } from '../worker/package-root';
import { storeDir, temporalTargetFromEnv } from './config';
import { connect } from './connect';
import { follow, newJobId, startOrAttach } from './jobs';
import { formatTerminal } from './render';
import type { Output } from './render';
import { buildSessionInput } from './session-options';

const DEMO_PROMPT = 'Check the login module';

/**
 * The seed's own example, end to end: a copy of a small bundled repository, the prompt "Check the
 * login module", and a worker in this process on its own task queue. With no ANTHROPIC_API_KEY
 * the model is a recorded session replayed by the local Messages API server, and it says so.
 */
export async function runDemo(out: Output, env: NodeJS.ProcessEnv = process.env): Promise<Terminal> {
  // The demo's output is the conversation; the worker's routine lines would bury it.
  installQuietRuntime('durable-agent demo');
  const root = packageRoot();
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-demo-'));
  fs.cpSync(path.join(root, 'examples', 'login-demo'), workspace, { recursive: true });

  const live = Boolean(env.ANTHROPIC_API_KEY?.trim() || env.ANTHROPIC_AUTH_TOKEN?.trim());
  const replay = live
    ? undefined
    : await ScriptedModelServer.start(loadScriptedSession(path.join(root, 'examples', 'recorded', 'check-login.json')));
  out.write(
    live
      ? `Asking ${env.ANTHROPIC_MODEL ?? 'the default model'} for real (ANTHROPIC_API_KEY is set).`
      : 'No ANTHROPIC_API_KEY set: replaying a recorded session (examples/recorded/check-login.json) through a local Messages API server. No real model is called.',
  );

  const connected = await connect({ withWorker: false, env });
  const target = temporalTargetFromEnv(env);
  const workerConnection = await NativeConnection.connect({
    address: connected.address,
    ...(target?.tls ? { tls: target.tls } : {}),
    ...(target?.apiKey ? { apiKey: target.apiKey } : {}),
  });
  const taskQueue = `durable-agent-demo-${randomBytes(4).toString('hex')}`;
  const worker = await createWorker({
    connection: workerConnection,
    namespace: target?.namespace ?? 'default',
    taskQueue,
    activities: {
      anthropic: replay
        ? () => new Anthropic({ apiKey: 'recorded-session', baseURL: replay.url, maxRetries: 0 })
        : anthropicFromEnv(env),
      storeDir: storeDir(env),
    },
  });
  const running = worker.run();
  try {
    out.write(`Workspace: ${workspace} (a copy of examples/login-demo)\nTemporal: ${connected.description}\n`);
    out.write(`> ${DEMO_PROMPT}`);
    const input = buildSessionInput(
      DEMO_PROMPT,
      { cwd: workspace, ...(live ? {} : { model: 'claude-sonnet-5-5' }) },
      env,
    );
    const outcome = await startOrAttach(connected.client, newJobId(), input, taskQueue);
    const terminal = await follow(outcome.handle, out);
    out.write(`\n${formatTerminal(terminal)}`);
    return terminal;
  } finally {
    worker.shutdown();
    await running;
    await workerConnection.close();
    await connected.connection.close();
    await replay?.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}
