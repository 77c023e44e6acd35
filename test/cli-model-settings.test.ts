/**
 * Issue 26: the embedded worker kept the environment of the shell that first started it. With
 * ANTHROPIC_BASE_URL changed, a new job's calls still went to the old endpoint, silently, until
 * `stop`. A shell whose model settings differ now restarts the worker, saying so in one line.
 */
import type { ScriptedSession } from '../src/model-server';
import { ScriptedModelServer, tempDir } from './support/harness';
import { textReply } from './support/jobs';
import { runCli as cli } from './support/cli';

const session = (name: string): ScriptedSession => ({ name, replies: [textReply(`Done by ${name}.`)] });

describe("a new shell's model settings reach the embedded worker", () => {
  const home = tempDir('home');
  let first: ScriptedModelServer;
  let second: ScriptedModelServer;
  const envFor = (server: ScriptedModelServer, key: string): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      ANTHROPIC_API_KEY: key,
      ANTHROPIC_BASE_URL: server.url,
    };
    delete env.TEMPORAL_ADDRESS;
    return env;
  };

  beforeAll(async () => {
    first = await ScriptedModelServer.start({ ...session('first'), chunkDelayMs: 0 });
    second = await ScriptedModelServer.start({ ...session('second'), chunkDelayMs: 0 });
  });
  afterAll(async () => {
    await cli(['stop'], envFor(second, 'k'));
    await first?.close();
    await second?.close();
  });

  test('a changed ANTHROPIC_BASE_URL restarts the worker, and the new job calls the new endpoint', async () => {
    const one = await cli(
      ['run', 'Say done', '--cwd', tempDir('ws'), '--output-format', 'json'],
      envFor(first, 'key-1'),
    );
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ result: 'Done by first.' });

    // The old endpoint goes away, as a gateway one stopped using would.
    await first.close();
    const two = await cli(
      ['run', 'Say done', '--cwd', tempDir('ws'), '--output-format', 'json'],
      envFor(second, 'key-1'),
    );
    expect(two.stderr).toContain(`restarting the background worker (pid `);
    expect(two.stderr).toContain(`ANTHROPIC_BASE_URL is now ${second.url} (was ${first.url})`);
    expect(two.stderr).not.toContain('key-1');
    expect(two.code).toBe(0);
    expect(JSON.parse(two.stdout)).toMatchObject({ result: 'Done by second.' });
    expect(second.requests.length).toBeGreaterThan(0);

    // The same settings again: no restart.
    const three = await cli(['ls'], envFor(second, 'key-1'));
    expect(three.stderr).not.toContain('restarting');
  }, 180_000);
});
