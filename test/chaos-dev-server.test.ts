import net from 'node:net';
import { freePort, isListening } from '../src/client/free-port';
import { DevServer } from './support/chaos';
import { tempDir } from './support/harness';

jest.mock('../src/client/free-port', () => {
  const actual = jest.requireActual('../src/client/free-port');
  return { ...actual, freePort: jest.fn(actual.freePort) };
});

/**
 * The chaos test's dev server gets a port that was free a moment ago. When another process binds
 * it first, the server exits at once; before, the harness saw the other process listening, took it
 * for the server, and failed ten seconds later with gRPC's bare "Failed to connect before the
 * deadline" (a CI run failed that way).
 */
test('a port taken before the dev server binds it: the server starts again on another', async () => {
  // It accepts and never answers, as a listener that is not a gRPC server would.
  const sockets = new Set<net.Socket>();
  const blocker = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const taken = (blocker.address() as net.AddressInfo).port;
  jest.mocked(freePort).mockResolvedValueOnce(taken);
  const dir = tempDir('chaos-port');
  let server: DevServer | undefined;
  try {
    server = await DevServer.start(dir);
    expect(server.port).not.toBe(taken);
    expect(await isListening(server.port)).toBe(true);
    expect(jest.mocked(freePort)).toHaveBeenCalledTimes(2);
  } finally {
    await server?.kill();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => blocker.close(resolve));
  }
}, 60_000);
