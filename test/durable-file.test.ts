import fs from 'node:fs';
import path from 'node:path';
import { FileContentStore } from '../src/activities/store/content-store';
import { ensureDirDurably, writeFileDurably } from '../src/activities/store/durable-file';
import { markReachable, objectPath, sweepObjects } from '../src/activities/store/gc';
import { tempDir } from './support/harness';

describe('durable writes', () => {
  test('a file is replaced whole, keeping its mode; new folders are made', async () => {
    const dir = path.join(tempDir('durable'), 'a', 'b', 'c');
    await ensureDirDurably(dir);
    await ensureDirDurably(dir);
    const file = path.join(dir, 'entry.json');
    await writeFileDurably(file, '{"v":1}');
    fs.chmodSync(file, 0o600);
    await writeFileDurably(file, '{"v":2}');
    expect(fs.readFileSync(file, 'utf8')).toBe('{"v":2}');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(['entry.json']);
  });

  test('a store object torn by an older worker is written again; an intact one only gets a fresh mtime', async () => {
    const root = tempDir('durable-store');
    const store = new FileContentStore(root);
    const ref = await store.put({ hello: 'world' });
    const file = objectPath(root, ref.slice('sha256:'.length));
    fs.writeFileSync(file, '{"hel');
    await new FileContentStore(root).put({ hello: 'world' });
    expect(await new FileContentStore(root).get(ref)).toEqual({ hello: 'world' });
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file, old, old);
    await new FileContentStore(root).put({ hello: 'world' });
    expect(fs.statSync(file).mtimeMs).toBeGreaterThan(old.getTime() + 30_000);
  });

  test('a sweep removes the temporary files of writes a crash cut off', async () => {
    const root = tempDir('durable-gc');
    const ref = await new FileContentStore(root).put({ kept: true });
    const file = objectPath(root, ref.slice('sha256:'.length));
    const abandoned = `${file.slice(0, -1)}0.3181712345`;
    fs.writeFileSync(abandoned, '{"half');
    const old = new Date(Date.now() - 2 * 86_400_000);
    fs.utimesSync(abandoned, old, old);
    const report = await sweepObjects(root, await markReachable(root, [ref]), {
      cutoffMs: Date.now() - 86_400_000,
      dryRun: false,
    });
    expect(report.abandoned.count).toBe(1);
    expect(fs.existsSync(abandoned)).toBe(false);
    expect(fs.existsSync(file)).toBe(true);
  });
});
