import { Client, Connection } from '@temporalio/client';
import { temporalTargetFromEnv } from './config';
import { ensureEmbeddedServer, ensureEmbeddedWorker } from './embedded';
import { unreachableReason } from './free-port';

export interface Connected {
  client: Client;
  connection: Connection;
  /** host:port of the Temporal frontend. */
  address: string;
  /** Where the jobs live, for messages to the user. */
  description: string;
  embedded: boolean;
  /** The embedded background worker this connect started, its own or its supervisor's having stopped. */
  startedWorker?: number;
}

/**
 * A Temporal client for the cluster in `TEMPORAL_ADDRESS`, or, with none set, for the embedded dev
 * server (started on demand, with a background worker beside it when `withWorker` is true).
 */
export async function connect(options: { withWorker: boolean; env?: NodeJS.ProcessEnv }): Promise<Connected> {
  const env = options.env ?? process.env;
  const target = temporalTargetFromEnv(env);
  if (target) {
    const unreachable = await unreachableReason(target.address);
    if (unreachable) {
      throw new Error(
        `no Temporal server answers at ${target.address} (TEMPORAL_ADDRESS): ${unreachable}. Start it, check the address, or unset TEMPORAL_ADDRESS to use the embedded server.`,
      );
    }
    const connection = await Connection.connect({
      address: target.address,
      ...(target.tls ? { tls: target.tls } : {}),
      ...(target.apiKey ? { apiKey: target.apiKey } : {}),
    });
    return {
      client: new Client({ connection, namespace: target.namespace }),
      connection,
      address: target.address,
      description: `${target.address} (namespace ${target.namespace})`,
      embedded: false,
    };
  }
  const server = await ensureEmbeddedServer();
  const worker = options.withWorker ? await ensureEmbeddedWorker(server) : undefined;
  const connection = await Connection.connect({ address: server.address });
  return {
    client: new Client({ connection, namespace: 'default' }),
    connection,
    address: server.address,
    description: `embedded Temporal server ${server.address} (UI ${server.uiUrl})`,
    embedded: true,
    ...(worker?.started ? { startedWorker: worker.pid } : {}),
  };
}

/** Runs `fn` with a Temporal connection and closes it afterwards. */
export async function withClient<T>(withWorker: boolean, fn: (connected: Connected) => Promise<T>): Promise<T> {
  const connected = await connect({ withWorker });
  try {
    return await fn(connected);
  } finally {
    await connected.connection.close();
  }
}
