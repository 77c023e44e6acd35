import fs from 'node:fs';
import path from 'node:path';
import type { SessionSnapshot } from '../src/shared/session';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { textReply } from './support/jobs';
import { runCli as cli } from './support/cli';

describe('a background worker without model credentials', () => {
  const home = tempDir('home');
  let server: ScriptedModelServer;
  let withKey: NodeJS.ProcessEnv;
  let withoutKey: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await ScriptedModelServer.start({ name: 'credentials', replies: [textReply('Done.')], chunkDelayMs: 0 });
    withKey = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: server.url,
    };
    delete withKey.TEMPORAL_ADDRESS;
    delete withKey.CI;
    withoutKey = { ...withKey };
    delete withoutKey.ANTHROPIC_API_KEY;
    delete withoutKey.ANTHROPIC_AUTH_TOKEN;
  });

  afterAll(async () => {
    await cli(['stop'], withKey);
    await server?.close();
  });

  test('makes the job wait, says so in status, and a shell with the key restarts it: the job completes', async () => {
    // Any command from a shell without the key starts the background worker without it.
    const listed = await cli(['ls'], withoutKey);
    // Code and stderr together, so a failure says why.
    expect({ code: listed.code, stderr: listed.stderr }).toMatchObject({ code: 0 });
    const started = await cli(
      ['run', 'Say done', '--cwd', makeWorkspace({}), '--job-id', 'no-key', '--detach'],
      withoutKey,
    );
    expect(started.code).toBe(0);

    let snapshot: SessionSnapshot & { status: string } = { status: 'RUNNING' } as SessionSnapshot & { status: string };
    const deadline = Date.now() + 90_000;
    while (snapshot.phase !== 'waiting_for_credentials') {
      if (Date.now() > deadline) throw new Error(`the job never waited for credentials: ${JSON.stringify(snapshot)}`);
      const status = await cli(['status', 'no-key', '--json'], withoutKey);
      snapshot = JSON.parse(status.stdout) as typeof snapshot;
      expect(snapshot.status).toBe('RUNNING');
      expect(snapshot.phase).not.toBe('finished');
    }
    const text = await cli(['status', 'no-key'], withoutKey);
    expect(text.stdout).toContain('waiting for a worker with model credentials');
    expect(text.stdout).toContain('has no ANTHROPIC_API_KEY');
    expect(server.requests).toHaveLength(0);

    const restarted = await cli(['result', 'no-key', '--json'], withKey);
    expect(restarted.stderr).toContain('restarting the background worker');
    expect(restarted.code).toBe(0);
    expect(JSON.parse(restarted.stdout)).toMatchObject({ subtype: 'success', result: 'Done.', is_error: false });
    const record = JSON.parse(fs.readFileSync(path.join(home, 'embedded-worker.json'), 'utf8')) as {
      modelCredentials?: boolean;
    };
    expect(record.modelCredentials).toBe(true);
  }, 240_000);
});
