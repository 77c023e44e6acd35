/**
 * Issue 26: with TEMPORAL_ADDRESS pointing at nothing, `status` took 10.5 s to say so, and
 * `durable-agent worker` printed the native client's `tonic::transport::Error(...)`. A refused
 * connection is now said at once, in one line.
 */
import { freePort } from '../src/client/free-port';
import { tempDir } from './support/harness';
import { runCli as cli } from './support/cli';

test('no server at TEMPORAL_ADDRESS is said at once, in one line, by status and by worker', async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: address, DURABLE_AGENT_HOME: tempDir('home') };
  const startedAt = Date.now();
  const status = await cli(['status', 'some-job'], env);
  const seconds = (Date.now() - startedAt) / 1000;
  expect(status.code).toBe(1);
  expect(status.stderr.trim()).toBe(
    `durable-agent: no Temporal server answers at ${address} (TEMPORAL_ADDRESS): start it, check the address, or unset TEMPORAL_ADDRESS to use the embedded server.`,
  );
  // The CLI's own start-up (ts-node in tests) is most of this; the answer itself is immediate.
  expect(seconds).toBeLessThan(8);

  const worker = await cli(['worker'], { ...env, ANTHROPIC_API_KEY: 'test-key' });
  expect(worker.code).not.toBe(0);
  expect(worker.stderr.trim().split('\n')).toEqual([
    `durable-agent: no Temporal server answers at ${address} (TEMPORAL_ADDRESS): start it, check the address, or unset TEMPORAL_ADDRESS to use the embedded server.`,
  ]);
  expect(worker.stderr).not.toMatch(/tonic|transport::Error|\n\s+at /);
}, 60_000);
