import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { isProcessAlive } from '../src/client/free-port';
import { waitFor } from './support/harness';

describe('isProcessAlive', () => {
  test('a running process is alive, an ended one that nobody reaped (a zombie) is not', async () => {
    // The shell starts `sleep 30` in the background, then becomes `sleep 60`, which never reaps
    // its child: killed, the child stays a zombie, as the embedded worker does under a PID 1 that
    // reaps nothing.
    const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const child = await new Promise<number>((resolve) => parent.stdout.once('data', (data) => resolve(Number(data))));
      expect(isProcessAlive(child)).toBe(true);
      // Killed only once the shell is `sleep 60`: a shell still running would reap the child itself.
      await waitFor(
        async () => (fs.readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim() === 'sleep' ? true : undefined),
        5_000,
        'the shell to become sleep 60',
      );
      process.kill(child, 'SIGKILL');
      await waitFor(
        async () => (fs.readFileSync(`/proc/${child}/stat`, 'utf8').includes(') Z ') ? true : undefined),
        5_000,
        'the zombie',
      );
      expect(isProcessAlive(child)).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  test('a pid nobody has is not alive', () => {
    expect(isProcessAlive(2 ** 22 + 1)).toBe(false);
  });
});
