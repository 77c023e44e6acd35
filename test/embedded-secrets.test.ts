/**
 * The embedded Temporal server needs no credential, and its /proc/<pid>/environ is readable by
 * every process of the user for its whole life: it is started without the shell's secrets. Its
 * port lock is shared by everything that may start one on the machine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureEmbeddedServer, portLockPath, stopEmbedded } from '../src/client/embedded';
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
});
