/**
 * Issue "never stranded": with ANTHROPIC_BASE_URL=http://user:secret@127.0.0.1:PORT, Node's fetch
 * refuses every request ("Request cannot be constructed from a URL that includes credentials"),
 * and the job retried it as a connection error for about 15 minutes. `run` now refuses such a base
 * URL (and one that is not an http(s) URL at all) at once, in one line that never repeats the
 * password; a worker that has one in its environment fails the model call at once, for good.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ScriptedModelServer, startTemporal, tempDir, uniqueTaskQueue, waitFor } from './support/harness';
import { textReply } from './support/jobs';
import { runCli as cli, startCli } from './support/cli';

const SECRET = 's3cret-in-url';

describe('a model base URL that cannot work', () => {
  let model: ScriptedModelServer;
  let port: string;

  beforeAll(async () => {
    model = await ScriptedModelServer.start({ name: 'base-url', replies: [textReply('Done.')], chunkDelayMs: 0 });
    port = new URL(model.url).port;
  });

  afterAll(async () => {
    await model?.close();
  });

  test('is refused by run at once, in one line, without its password', async () => {
    const home = tempDir('home');
    const env: NodeJS.ProcessEnv = { ...process.env, DURABLE_AGENT_HOME: home, ANTHROPIC_API_KEY: 'test-key' };
    delete env.TEMPORAL_ADDRESS;
    const cases: Array<[string, string]> = [
      [
        `http://user:${SECRET}@127.0.0.1:${port}`,
        `durable-agent: ANTHROPIC_BASE_URL http://127.0.0.1:${port} has a user name or password in it, which Node's ` +
          `fetch refuses to send: take "user:password@" out of it and give the key in ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN).`,
      ],
      [
        'not a url',
        'durable-agent: ANTHROPIC_BASE_URL is not a URL: give the whole address with its scheme, ' +
          'e.g. https://api.anthropic.com or http://127.0.0.1:8080.',
      ],
      [
        `ftp://127.0.0.1:${port}`,
        'durable-agent: ANTHROPIC_BASE_URL does not start with http:// or https://: give the whole address with its ' +
          'scheme, e.g. https://api.anthropic.com or http://127.0.0.1:8080.',
      ],
      [
        `localhost:${port}`,
        'durable-agent: ANTHROPIC_BASE_URL does not start with http:// or https://: give the whole address with its ' +
          'scheme, e.g. https://api.anthropic.com or http://127.0.0.1:8080.',
      ],
    ];
    try {
      for (const [baseUrl, message] of cases) {
        for (const detach of [[], ['--detach']]) {
          const run = await cli(['run', 'Say done', '--cwd', tempDir('ws'), ...detach], {
            ...env,
            ANTHROPIC_BASE_URL: baseUrl,
          });
          expect(run.code).toBe(1);
          expect(run.stderr.trim()).toBe(message);
          expect(run.stdout + run.stderr).not.toContain(SECRET);
        }
      }
      // Refused before anything started: no embedded server, no worker.
      expect(fs.existsSync(path.join(home, 'embedded-server.json'))).toBe(false);
    } finally {
      await cli(['stop'], env);
    }
  }, 120_000);

  describe('in a worker', () => {
    let temporal: TestWorkflowEnvironment;

    beforeAll(async () => {
      temporal = await startTemporal();
    });

    afterAll(async () => {
      await temporal?.teardown();
    });

    test("fails the job's model call at once, naming the URL without its password", async () => {
      const taskQueue = uniqueTaskQueue('base-url');
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        TEMPORAL_ADDRESS: temporal.address,
        DURABLE_AGENT_HOME: tempDir('home'),
        ANTHROPIC_API_KEY: 'test-key',
      };
      delete env.ANTHROPIC_BASE_URL;
      const worker = startCli(['worker', '--task-queue', taskQueue], {
        ...env,
        ANTHROPIC_BASE_URL: `http://user:${SECRET}@127.0.0.1:${port}`,
      });
      try {
        await waitFor(
          async () => (worker.output().includes('durable-agent worker polling') ? true : undefined),
          60_000,
          'the worker to poll',
        );
        const startedAt = Date.now();
        const run = await cli(
          ['run', 'Say done', '--cwd', tempDir('ws'), '--job-id', 'bad-url', '--task-queue', taskQueue, '--detach'],
          env,
        );
        expect(run.code).toBe(0);
        const result = await cli(['result', 'bad-url', '--json'], env);
        const seconds = (Date.now() - startedAt) / 1000;
        console.log(`a worker with a password in its base URL: the job ended ${seconds.toFixed(1)} s after it started`);
        const parsed = JSON.parse(result.stdout) as { terminal_reason: string; detail: string };
        expect(parsed.terminal_reason).toBe('model_error');
        expect(parsed.detail).toContain(
          `ANTHROPIC_BASE_URL http://127.0.0.1:${port} has a user name or password in it, which Node's fetch refuses to send`,
        );
        expect(result.stdout + result.stderr + worker.output()).not.toContain(SECRET);
        expect(model.requests.length).toBe(0);
        expect(seconds).toBeLessThan(30);
      } finally {
        worker.child.kill('SIGKILL');
      }
    }, 120_000);
  });
});
