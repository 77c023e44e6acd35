/**
 * The S3 content store against a real SeaweedFS S3 gateway (no mock of the SDK or of S3): round
 * trips, age refresh, content that is missing or not intact, and the one-line errors of a store
 * that cannot be used (no bucket, refused credentials, nothing listening, a malformed
 * DURABLE_AGENT_STORE), from the store itself, a worker starting, and the CLI.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ContentNotFoundError, FileContentStore } from '../src/activities/store/content-store';
import {
  ContentStoreUnavailableError,
  S3ContentStore,
  s3ClientFromEnv,
} from '../src/activities/store/s3-content-store';
import { ConfigurationError, storeDir } from '../src/client/config';
import { freePort } from '../src/client/free-port';
import { openContentStore, storeAddressFromEnv } from '../src/client/store-config';
import { runCli } from './support/cli';
import { tempDir } from './support/harness';
import { startS3Server } from './support/s3-server';
import type { S3Server } from './support/s3-server';
import { TS_NODE_ARGS } from './support/ts-run';

const root = path.join(__dirname, '..');
let server: S3Server;

beforeAll(async () => {
  server = await startS3Server();
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

/** What `openContentStore` opens for this environment, made at once (the tests call it a lot). */
function open(prefix?: string, extra: NodeJS.ProcessEnv = {}): S3ContentStore {
  const env = { ...server.env(prefix), ...extra };
  const { client, endpoint } = s3ClientFromEnv(env);
  return new S3ContentStore(storeAddressFromEnv(env)!, client, endpoint);
}
const keyOf = (prefix: string, ref: string) => `${prefix}/objects/${ref.slice(7, 9)}/${ref.slice(9)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The error a promise rejects with. */
async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

describe('the S3 content store', () => {
  test('round trip: the same refs as the folder store, laid out under the prefix, read back by another store', async () => {
    expect(await openContentStore(server.env('team/a'))).toBeInstanceOf(S3ContentStore);
    const store = open('team/a');
    expect(store.location).toBe(`s3://${server.bucket}/team/a (at ${server.endpoint})`);
    const value = { prev: null, messages: [{ role: 'user', content: 'héllo' }] };
    const ref = await store.put(value);
    expect(ref).toBe(await new FileContentStore(tempDir('s3-same-ref')).put(value));

    const object = await server.client.send(new GetObjectCommand({ Bucket: server.bucket, Key: keyOf('team/a', ref) }));
    expect(await object.Body?.transformToString()).toBe(JSON.stringify(value));
    // A fresh store has no cache: this read goes to the bucket.
    expect(await open('team/a').get(ref)).toEqual(value);
    expect((await open('team/a').writtenAt(ref))?.getTime()).toBeGreaterThan(Date.now() - 60_000);
    // Another prefix is another store.
    await expect(open('team/b').get(ref)).rejects.toBeInstanceOf(ContentNotFoundError);
    expect(await open('team/b').writtenAt(ref)).toBeUndefined();
    await expect(open('team/a').check()).resolves.toBeUndefined();
  });

  test('storing content again refreshes its age, so a sweep spares it', async () => {
    const store = open('age');
    const ref = await store.put({ note: 'kept fresh' });
    const first = await store.writtenAt(ref);
    // LastModified has whole seconds.
    await sleep(1_500);
    expect(await open('age').put({ note: 'kept fresh' })).toBe(ref);
    const second = await open('age').writtenAt(ref);
    expect(second!.getTime()).toBeGreaterThan(first!.getTime());
    // Also from a store that has it in its cache.
    await sleep(1_500);
    await store.put({ note: 'kept fresh' });
    expect((await store.writtenAt(ref))!.getTime()).toBeGreaterThan(second!.getTime());
  });

  test('a missing object, or one whose bytes are not what its address names, is ContentNotFoundError', async () => {
    const missing = await failureOf(open('gone').get(`sha256:${'0'.repeat(64)}`));
    expect(missing).toBeInstanceOf(ContentNotFoundError);
    expect(missing.message).toContain(`is not in the transcript store at s3://${server.bucket}/gone`);
    expect(missing.message).toContain('set DURABLE_AGENT_STORE to the same s3:// URL on every worker');
    await expect(open('gone').get('not-a-ref')).rejects.toBeInstanceOf(ContentNotFoundError);

    const ref = await open('tampered').put({ amount: 1 });
    await server.client.send(
      new PutObjectCommand({ Bucket: server.bucket, Key: keyOf('tampered', ref), Body: '{"amount":1000}' }),
    );
    await expect(open('tampered').get(ref)).rejects.toBeInstanceOf(ContentNotFoundError);
  });

  test('a bucket that does not exist is one line saying to create it', async () => {
    const store = open(undefined, { DURABLE_AGENT_STORE: 's3://no-such-bucket/x' });
    for (const attempt of [
      () => store.check(),
      () => store.put({ a: 1 }),
      () => store.get(`sha256:${'1'.repeat(64)}`),
    ]) {
      const error = await failureOf(attempt());
      expect(error).toBeInstanceOf(ContentStoreUnavailableError);
      expect(error.message).toContain(`the bucket no-such-bucket does not exist at ${server.endpoint}. Create it`);
      expect(error.message).not.toContain('\n');
    }
  });

  test('credentials the server refuses are one line naming what to set', async () => {
    for (const extra of [
      { AWS_SECRET_ACCESS_KEY: 'not-the-secret' },
      { AWS_ACCESS_KEY_ID: 'AKIDNOBODYHAS', AWS_SECRET_ACCESS_KEY: 'whatever' },
    ]) {
      const error = await failureOf(open('creds', extra).check());
      expect(error).toBeInstanceOf(ContentStoreUnavailableError);
      expect(error.message).toMatch(
        new RegExp(
          `^the content store s3://${server.bucket}/creds \\(at ${server.endpoint}\\) cannot be used: ${server.endpoint} refused the credentials \\(\\w+`,
        ),
      );
      expect(error.message).toContain('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
      expect(error.message).not.toContain('not-the-secret');
      expect(error.message).not.toContain('\n');
    }
  });

  test('an endpoint where nothing listens is one line naming the variable', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const error = await failureOf(open('x', { AWS_ENDPOINT_URL_S3: endpoint }).check());
    expect(error).toBeInstanceOf(ContentStoreUnavailableError);
    expect(error.message).toContain(`${endpoint} cannot be reached (ECONNREFUSED). Check AWS_ENDPOINT_URL_S3`);
  }, 30_000);

  /** A worker process started with `env` over this one's: its exit code and what it printed on stderr. */
  async function startWorkerWith(env: NodeJS.ProcessEnv): Promise<{ code: number | null; lines: string[] }> {
    const started = spawn(process.execPath, [...TS_NODE_ARGS, path.join(root, 'src', 'worker', 'main.ts')], {
      cwd: root,
      env: {
        ...process.env,
        DURABLE_AGENT_HOME: tempDir('s3-worker-refused'),
        // Never reached: the store is checked first.
        TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    started.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => started.once('exit', resolve));
    return { code, lines: stderr.trim().split('\n') };
  }

  test('a worker whose store cannot be used stops at start with that one line', async () => {
    const missing = await startWorkerWith({ ...server.env(), DURABLE_AGENT_STORE: 's3://missing-bucket' });
    expect(missing.code).toBe(1);
    expect(missing.lines).toEqual([
      `the content store s3://missing-bucket (at ${server.endpoint}) cannot be used: the bucket missing-bucket ` +
        `does not exist at ${server.endpoint}. Create it (e.g. \`aws s3 mb s3://missing-bucket\`), or set ` +
        'DURABLE_AGENT_STORE to a bucket that exists.',
    ]);

    // No credentials anywhere: none in the environment, no AWS files, no metadata service to ask.
    const empty = tempDir('s3-no-aws-home');
    const nothing = await startWorkerWith({
      ...server.env(),
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_PROFILE: '',
      HOME: empty,
      AWS_CONFIG_FILE: path.join(empty, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(empty, 'credentials'),
    });
    expect(nothing.code).toBe(1);
    expect(nothing.lines).toHaveLength(1);
    expect(nothing.lines[0]).toContain(
      `the content store s3://${server.bucket} (at ${server.endpoint}) cannot be used: no AWS credentials were found`,
    );
    expect(nothing.lines[0]).toContain('Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE');
  }, 90_000);
});

describe('DURABLE_AGENT_STORE', () => {
  test('unset or blank: the folder store under DURABLE_AGENT_HOME', async () => {
    const home = tempDir('store-home');
    for (const value of [undefined, '', '  ']) {
      const store = await openContentStore({ DURABLE_AGENT_HOME: home, DURABLE_AGENT_STORE: value });
      expect(store).toBeInstanceOf(FileContentStore);
      expect(store.location).toBe(storeDir({ DURABLE_AGENT_HOME: home }));
    }
  });

  test('s3://bucket and s3://bucket/prefix', () => {
    expect(storeAddressFromEnv({ DURABLE_AGENT_STORE: 's3://agent-store' })).toEqual({
      bucket: 'agent-store',
      prefix: '',
    });
    expect(storeAddressFromEnv({ DURABLE_AGENT_STORE: 's3://agent-store/' })).toEqual({
      bucket: 'agent-store',
      prefix: '',
    });
    expect(storeAddressFromEnv({ DURABLE_AGENT_STORE: 's3://my.bucket-1/teams/infra/' })).toEqual({
      bucket: 'my.bucket-1',
      prefix: 'teams/infra',
    });
  });

  test.each([
    [
      '/srv/store',
      'is not a store: use unset (the folder store under DURABLE_AGENT_HOME), s3://bucket or s3://bucket/prefix',
    ],
    ['https://s3.amazonaws.com/bucket', 'is not a store: use unset'],
    ['s3://', 'does not name a bucket (none given)'],
    ['s3://Agent_Store', '("Agent_Store" is not a valid bucket name)'],
    ['s3://bucket?region=eu-west-1', 'has a query or fragment'],
    ['s3://bucket/a//b', 'has an empty, "." or ".." part in its prefix'],
    ['s3://bucket/a/../b', 'has an empty, "." or ".." part in its prefix'],
  ])('%s is refused, saying what it takes', (value, message) => {
    expect(() => storeAddressFromEnv({ DURABLE_AGENT_STORE: value })).toThrow(ConfigurationError);
    expect(() => storeAddressFromEnv({ DURABLE_AGENT_STORE: value })).toThrow(message);
  });

  test('credentials in the URL are refused, and not repeated', () => {
    let message = '';
    try {
      storeAddressFromEnv({ DURABLE_AGENT_STORE: 's3://AKIDEXAMPLE:wJalrXUtnFEMI@agent-store/x' });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      message = (error as Error).message;
    }
    expect(message).toContain('DURABLE_AGENT_STORE=s3://…@agent-store/x carries credentials, which it must not');
    expect(message).toContain('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
    expect(message).not.toContain('wJalrXUtnFEMI');
    expect(message).not.toContain('AKIDEXAMPLE');
  });

  test('the CLI refuses a bad value at once, with one line, before reaching Temporal', async () => {
    const home = tempDir('store-cli');
    const env = { ...process.env, DURABLE_AGENT_HOME: home, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` };
    for (const args of [
      ['export', 'some-job'],
      ['prune', '--older-than', '7d'],
    ]) {
      const result = await runCli(args, { ...env, DURABLE_AGENT_STORE: 's3://user:hunter2@bucket' });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        'durable-agent: DURABLE_AGENT_STORE=s3://…@bucket carries credentials, which it must not: use ' +
          's3://bucket[/prefix] and give the credentials the usual AWS way (AWS_ACCESS_KEY_ID and ' +
          'AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or an instance role).',
      ]);
    }
  }, 60_000);
});
