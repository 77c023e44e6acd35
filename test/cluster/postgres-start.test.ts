import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, isListening } from '../../src/client/free-port';
import { startPostgres, stopProcess } from '../support/cluster';

jest.mock('../../src/client/free-port', () => {
  const actual = jest.requireActual('../../src/client/free-port');
  return { ...actual, freePort: jest.fn(actual.freePort) };
});

/**
 * The cluster's PostgreSQL gets a port that was free a moment ago. When something else binds it
 * first, postgres exits at once; before, the test helper swallowed that exit, waited its full 30 s
 * and reported a bare timeout with none of postgres's output (a CI run failed that way).
 */
test('a port taken before postgres binds it: postgres starts again on another', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const taken = (blocker.address() as net.AddressInfo).port;
  jest.mocked(freePort).mockResolvedValueOnce(taken);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-pg-'));
  fs.chmodSync(dir, 0o755);
  try {
    const { port, server } = await startPostgres(dir, () => '');
    try {
      expect(port).not.toBe(taken);
      expect(await isListening(port)).toBe(true);
      // One retry: the first postgres's exit was seen at once, not waited out.
      expect(jest.mocked(freePort)).toHaveBeenCalledTimes(2);
    } finally {
      await stopProcess(server, 'SIGINT', 10_000);
    }
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
