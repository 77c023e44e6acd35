import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { runCli } from './support/cli';
import { tempDir } from './support/harness';

/** The real CLI, from source, as `durable-agent` runs it. */
const cli = runCli;

describe('DURABLE_AGENT_RETENTION on the embedded server', () => {
  const home = tempDir('retention-home');
  const env: NodeJS.ProcessEnv = { ...process.env, DURABLE_AGENT_HOME: home, ANTHROPIC_API_KEY: 'test-key' };
  delete env.TEMPORAL_ADDRESS;

  afterAll(async () => {
    await cli(['stop'], env);
  });

  /** The retention of the embedded server's namespace, in seconds, as Temporal reports it. */
  async function retentionSeconds(): Promise<number> {
    const { port } = JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8')) as { port: number };
    const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
    try {
      const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
      return Number(described.config?.workflowExecutionRetentionTtl?.seconds);
    } finally {
      await connection.close();
    }
  }

  test('is applied when the server starts, and again when it changes; nonsense is refused', async () => {
    const nonsense = await cli(['ls'], { ...env, DURABLE_AGENT_RETENTION: 'a week' });
    expect(nonsense.code).toBe(1);
    expect(nonsense.stderr).toContain(
      'DURABLE_AGENT_RETENTION="a week" is not an age: use a whole number followed by m (minutes), h (hours) or d (days)',
    );
    expect(nonsense.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(home, 'embedded-server.json'))).toBe(false);

    expect((await cli(['ls'], { ...env, DURABLE_AGENT_RETENTION: '3d' })).stdout).toContain('no jobs yet');
    expect(await retentionSeconds()).toBe(3 * 24 * 3600);

    // The running server is reused; only its namespace setting changes.
    const { pid } = JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8')) as { pid: number };
    const dry = await cli(['prune', '--older-than', '7d', '--dry-run'], { ...env, DURABLE_AGENT_RETENTION: '36h' });
    expect(dry.stderr).toBe('');
    expect(dry.stdout).toContain('dry run: nothing is deleted.\nembedded Temporal server 127.0.0.1:');
    expect(dry.stdout).toContain('0 open jobs and 0 job runs closed in the last 7d keep their content.');
    expect(await retentionSeconds()).toBe(36 * 3600);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8'))).toMatchObject({
      pid,
      retentionMs: 36 * 3600 * 1000,
    });

    const short = await cli(['ls'], { ...env, DURABLE_AGENT_RETENTION: '30m' });
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('DURABLE_AGENT_RETENTION=30m is shorter than 1h');
    expect(await retentionSeconds()).toBe(36 * 3600);
  });
});
