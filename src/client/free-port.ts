import fs from 'node:fs';
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
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/**
 * A process that has ended but that no parent has reaped still answers signal 0. The embedded
 * server and worker outlive the command that started them, so their parent becomes PID 1, and in
 * a container whose PID 1 reaps no children (a `docker run` without `--init`, some sandboxes)
 * a killed worker stays a zombie forever: counted alive, it would never be started again.
 */
function isZombie(pid: number): boolean {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false; // no /proc (macOS): signal 0 is all there is
  }
  // "<pid> (<comm>) <state> ...": comm may hold spaces and parentheses, the state follows the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
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
