import { spawn } from 'node:child_process';
import path from 'node:path';
import { handOverSecrets, secretHandoffSpawn, splitSecrets } from '../../src/worker/secret-handoff';
import { workerSandboxOptions } from '../../src/worker/sandbox-options';
import { TS_NODE_ARGS } from '../support/ts-run';

/** Credentials reach a launched worker over a pipe, never through its environment. */
const root = path.join(__dirname, '..', '..');

describe('the secret handoff', () => {
  it('moves every secret-looking variable out of the environment', () => {
    expect(
      splitSecrets({
        PATH: '/bin',
        ANTHROPIC_API_KEY: 'a',
        TEMPORAL_API_KEY: 't',
        GITHUB_TOKEN: 'g',
        TEMPORAL_TLS_KEY: '/k',
      }),
    ).toEqual({
      env: { PATH: '/bin', TEMPORAL_TLS_KEY: '/k' },
      secrets: { ANTHROPIC_API_KEY: 'a', TEMPORAL_API_KEY: 't', GITHUB_TOKEN: 'g' },
    });
  });

  it('hands them to a child that reads them once, with none in its /proc environ and the pipe closed', async () => {
    const key = `sk-ant-test-SECRET-${Math.random().toString(36).slice(2)}`;
    const script = `
      const fs = require('node:fs');
      const { receiveSecrets } = require(${JSON.stringify(path.join(root, 'src/worker/secret-handoff.ts'))});
      const secrets = receiveSecrets(process.env);
      let fdOpen = true;
      try { fs.fstatSync(3); } catch { fdOpen = false; }
      const environ = fs.readFileSync('/proc/self/environ', 'utf8');
      console.log(JSON.stringify({ secrets, fdOpen, environHasKey: environ.includes(${JSON.stringify(key)}), fdVar: process.env.DURABLE_AGENT_SECRETS_FD ?? null }));
    `;
    const handoff = secretHandoffSpawn({ PATH: process.env.PATH, ANTHROPIC_API_KEY: key }, ['ignore', 'pipe', 'pipe']);
    expect(handoff.env).toEqual({ PATH: process.env.PATH, DURABLE_AGENT_SECRETS_FD: '3' });
    const child = spawn(process.execPath, [...TS_NODE_ARGS, '-e', script], {
      cwd: root,
      env: handoff.env,
      stdio: handoff.stdio,
    });
    let out = '';
    let err = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    await handOverSecrets(child, handoff.secrets);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(JSON.parse(out)).toEqual({
      secrets: { ANTHROPIC_API_KEY: key },
      fdOpen: false,
      environHasKey: false,
      fdVar: null,
    });
  });
});

describe("the worker's sandbox", () => {
  it('hides its data folder and the Temporal TLS files', () => {
    const { options, tlsPaths } = workerSandboxOptions({
      DURABLE_AGENT_HOME: '/srv/agent-data',
      TEMPORAL_TLS_CERT: '/etc/worker/client.pem',
      TEMPORAL_TLS_KEY: ' /etc/worker/client.key ',
      DURABLE_AGENT_BWRAP: '/opt/bwrap',
    });
    expect(options).toEqual({
      bwrap: '/opt/bwrap',
      workerPrivatePaths: ['/srv/agent-data', '/etc/worker/client.pem', '/etc/worker/client.key'],
    });
    expect(tlsPaths).toEqual(['/etc/worker/client.pem', '/etc/worker/client.key']);
  });
});
