import net from 'node:net';

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** True when something accepts connections on host:port. */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Why nothing takes a TCP connection at `address` (`host:port`), or undefined when something does
 * (or the answer did not come within `timeoutMs`: a slow network is left to the real connection).
 * A refused connection or an unknown host answers at once, where a gRPC connection waits its
 * whole deadline first.
 */
export function unreachableReason(address: string, timeoutMs = 3_000): Promise<string | undefined> {
  const colon = address.lastIndexOf(':');
  const host = colon > 0 ? address.slice(0, colon).replace(/^\[|\]$/g, '') : address;
  const port = Number(colon > 0 ? address.slice(colon + 1) : NaN);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (why: string | undefined) => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('connect', () => done(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const words: Record<string, string> = {
        ECONNREFUSED: 'connection refused',
        ENOTFOUND: 'host name not found',
        EAI_AGAIN: 'host name lookup failed',
        EHOSTUNREACH: 'host unreachable',
        ENETUNREACH: 'network unreachable',
      };
      done(error.code && words[error.code] ? `${words[error.code]}, ${error.code}` : undefined);
    });
  });
}
