/**
 * Mark and sweep of the S3 content store against a real SeaweedFS S3 gateway, as prune runs them:
 * old unreached objects go, reached and young ones stay, a dry run deletes nothing, an object
 * stored again while the sweep runs stays, and other prefixes are left alone.
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { markReachable } from '../src/activities/store/gc';
import { S3ContentStore, s3ClientFromEnv } from '../src/activities/store/s3-content-store';
import { s3ObjectReader, sweepS3Objects } from '../src/activities/store/s3-gc';
import { TranscriptStore } from '../src/activities/store/transcript-store';
import { storeAddressFromEnv } from '../src/client/store-config';
import type { Message } from '../src/shared/messages';
import type { ContentRef, TranscriptRef } from '../src/shared/transcript';
import { startS3Server } from './support/s3-server';
import type { S3Server } from './support/s3-server';

let server: S3Server;

beforeAll(async () => {
  server = await startS3Server();
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

const empty: TranscriptRef = { head: null, messageCount: 0 };
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
function open(prefix: string): S3ContentStore {
  const { client, endpoint } = s3ClientFromEnv(server.env(prefix));
  return new S3ContentStore(storeAddressFromEnv(server.env(prefix))!, client, endpoint);
}
/** LastModified has whole seconds: this much apart, two writes are on either side of a cutoff. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const GAP_MS = 1_600;

/** The hex digests stored under `prefix`, as a listing of the bucket shows them. */
async function stored(prefix: string): Promise<Set<string>> {
  const found = new Set<string>();
  let token: string | undefined;
  do {
    const page = await server.client.send(
      new ListObjectsV2Command({ Bucket: server.bucket, Prefix: `${prefix}/objects/`, ContinuationToken: token }),
    );
    for (const entry of page.Contents ?? []) {
      const hex = entry.Key!.split('/').slice(-2).join('');
      if (/^[0-9a-f]{64}$/.test(hex)) found.add(hex);
    }
    token = page.NextContinuationToken;
  } while (token);
  return found;
}

const hexOf = (ref: ContentRef | null) => ref!.slice('sha256:'.length);

describe('mark and sweep of an S3 store', () => {
  test('unreached old objects go; reached and young ones stay; a dry run deletes nothing', async () => {
    const store = open('gc');
    const transcripts = new TranscriptStore(store);
    // Two jobs sharing their first segment; the closed one went on alone.
    const shared = await transcripts.append(empty, [user('Check the login module')]);
    const closed = await transcripts.append(shared, [assistant('Closed job, alone.')]);
    const closedResult = await store.put({ type: 'tool_result', tool_use_id: 't1', content: 'x'.repeat(3_000) });
    const quoted = await store.put({ type: 'tool_result', tool_use_id: 'q', content: 'quoted' });
    const open_ = await transcripts.append(shared, [assistant(`Open job; see ${quoted}.`)]);
    const openPrompt = await store.put('system prompt of the open job');
    // Not ours: another prefix in the same bucket, and an object of another layout.
    const neighbour = await open('gc-neighbour').put({ other: 'prefix' });
    await server.client.send(new PutObjectCommand({ Bucket: server.bucket, Key: 'gc/objects/README', Body: 'hi' }));

    await sleep(GAP_MS);
    const cutoffMs = Date.now();
    await sleep(GAP_MS);
    const young = await store.put({ note: 'written by a model call its job has not heard of yet' });

    const before = await stored('gc');
    expect(before.size).toBe(7);
    const roots = [open_.head, openPrompt] as ContentRef[];
    const marked = await markReachable(s3ObjectReader(store), roots);
    expect(marked.objects).toEqual(new Set([open_.head, shared.head, quoted, openPrompt].map(hexOf)));
    expect(marked.missing.size).toBe(0);

    const dry = await sweepS3Objects(store, marked, { cutoffMs, dryRun: true });
    expect(dry.removed.count).toBe(2);
    expect(await stored('gc')).toEqual(before);

    const real = await sweepS3Objects(store, marked, { cutoffMs, dryRun: false });
    expect(real).toMatchObject({ removed: { count: 2 }, live: { count: 4 }, recent: { count: 1 } });
    expect(real.removed.bytes).toBeGreaterThan(3_000);
    const after = await stored('gc');
    expect(after).toEqual(
      new Set([...before].filter((hex) => hex !== hexOf(closed.head) && hex !== hexOf(closedResult))),
    );
    expect(after.has(hexOf(young))).toBe(true);
    expect(await transcripts.load(open_)).toHaveLength(2);
    expect(await stored('gc-neighbour')).toEqual(new Set([hexOf(neighbour)]));
    const readme = await server.client.send(
      new ListObjectsV2Command({ Bucket: server.bucket, Prefix: 'gc/objects/README' }),
    );
    expect(readme.KeyCount).toBe(1);
  });

  test('refs the roots name that are not in the store are reported missing', async () => {
    const store = open('gc-missing');
    const ref = await store.put({ prev: `sha256:${'e'.repeat(64)}`, messages: [] });
    const marked = await markReachable(s3ObjectReader(store), [ref]);
    expect(marked.objects).toEqual(new Set([hexOf(ref)]));
    expect(marked.missing).toEqual(new Set([`sha256:${'e'.repeat(64)}`]));
  });

  test('an object stored again after the listing saw it old is kept', async () => {
    const store = open('gc-race');
    const value = { note: 'the same system prompt, stored again by a new job' };
    const ref = await store.put(value);
    const other = await store.put({ note: 'really unused' });
    await sleep(GAP_MS);
    const cutoffMs = Date.now();
    await sleep(GAP_MS);
    // A job stores the same content while the sweep is between its listing and this object.
    const racing = Object.create(store) as S3ContentStore;
    racing.lastModified = async (hex: string) => {
      if (hex === hexOf(ref)) await store.put(value);
      return store.lastModified(hex);
    };
    const report = await sweepS3Objects(racing, await markReachable(s3ObjectReader(store), []), {
      cutoffMs,
      dryRun: false,
    });
    expect(report).toMatchObject({ removed: { count: 1 }, recent: { count: 1 } });
    expect(await stored('gc-race')).toEqual(new Set([hexOf(ref)]));
    expect(hexOf(other)).not.toBe(hexOf(ref));
  });
});
