/**
 * The embedded Temporal server needs no credential, and its /proc/<pid>/environ is readable by
 * every process of the user for its whole life: it is started without the shell's secrets. Its
 * port lock is shared by everything that may start one on the machine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureEmbeddedServer, portLockPath, stopEmbedded, withLockDir } from '../src/client/embedded';
import { tempDir } from './support/harness';

describe('the embedded server', () => {
  test('starts without the credentials of the shell that started it', async () => {
    const home = tempDir('embedded-home');
    const secret = `sk-ant-test-EMBEDDED-${process.pid}-${Date.now()}`;
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = secret;
    try {
      const server = await ensureEmbeddedServer(home);
      const environ = fs.readFileSync(`/proc/${server.pid}/environ`, 'utf8');
      expect(environ).not.toContain(secret);
      expect(environ).not.toContain('ANTHROPIC_API_KEY=');
      // It still has the ordinary environment it needs.
      expect(environ).toContain('PATH=');
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
      await stopEmbedded(home);
    }
  });
});

describe('the embedded server port lock', () => {
  test('two data folders starting a server at once get ports of their own, both reachable', async () => {
    // The lock is let go once a new server has bound both of its ports (not after its set-up), so
    // two starters never pick the same free port, and neither waits on the other's set-up.
    const homes = [tempDir('embedded-a'), tempDir('embedded-b')];
    try {
      const servers = await Promise.all(homes.map((home) => ensureEmbeddedServer(home)));
      const ports = servers.flatMap((server) => [server.address.split(':')[1], new URL(server.uiUrl).port]);
      expect(new Set(ports).size).toBe(4);
      // Each is set up whole: a second call finds it running, with its search attributes recorded.
      const again = await Promise.all(homes.map((home) => ensureEmbeddedServer(home)));
      expect(again.map((server) => server.pid)).toEqual(servers.map((server) => server.pid));
      for (const home of homes) {
        const record = JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8')) as {
          searchAttributes?: unknown[];
        };
        expect(record.searchAttributes?.length).toBeGreaterThan(0);
      }
    } finally {
      await Promise.all(homes.map((home) => stopEmbedded(home, () => undefined)));
    }
  });

  test('is one per machine and user, whatever the temp folder is', () => {
    // Test runs (and shells) with their own TMPDIR must still wait for each other before taking 7233.
    const tmpdir = jest.spyOn(os, 'tmpdir');
    try {
      tmpdir.mockReturnValue(tempDir('other-tmp'));
      const first = portLockPath();
      tmpdir.mockReturnValue(tempDir('another-tmp'));
      expect(portLockPath()).toBe(first);
      expect(path.dirname(first)).toBe('/tmp');
    } finally {
      tmpdir.mockRestore();
    }
  });

  // Making a lock look like another user's needs chown, which only root may do.
  (process.getuid?.() === 0 ? test : test.skip)(
    "another user's lock is neither waited for nor removed: the error says whose it is",
    async () => {
      const lock = path.join(tempDir('locks'), 'ports.lock');
      fs.mkdirSync(lock);
      fs.chownSync(lock, 54321, 54321);
      // Old enough that it would be taken for one a dead process left.
      fs.utimesSync(lock, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
      const ran = jest.fn(async () => 'ran');
      const started = Date.now();
      await expect(withLockDir(lock, ran)).rejects.toThrow(/belongs to another user \(uid 54321\).*TEMPORAL_ADDRESS/);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(ran).not.toHaveBeenCalled();
      expect(fs.statSync(lock).uid).toBe(54321);
    },
  );

  test('a lock of our own is waited for, and one a dead process left a minute ago is taken', async () => {
    const lock = path.join(tempDir('locks'), 'ports.lock');
    fs.mkdirSync(lock);
    fs.utimesSync(lock, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    await expect(withLockDir(lock, async () => 'ran')).resolves.toBe('ran');
    expect(fs.existsSync(lock)).toBe(false);
  });
});
