/**
 * The chaos harness's model router: one URL for the worker (a worker has one `ANTHROPIC_BASE_URL`),
 * one scripted model server per job behind it, and a record of every model call that passed through.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Usage } from '../../../src/shared/messages';
import { jobKeyOf } from './jobs';

/** One `POST /v1/messages` as the router saw it. */
export interface RoutedCall {
  job: string;
  /** The number of assistant messages in the request: its turn. */
  turn: number;
  arrivedAt: number;
  endedAt?: number;
  /** The reply reached the worker whole (`message_stop` passed through). */
  completed: boolean;
  /** Input usage from `message_start`, output from `message_delta` (or estimated from what streamed). */
  usage?: Usage;
  /** Characters of text and tool input streamed before the call ended. */
  streamedChars: number;
}

export class ModelRouter {
  readonly calls: RoutedCall[] = [];
  private readonly targets = new Map<string, string>();
  private readonly sockets = new Set<import('node:net').Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(): Promise<ModelRouter> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const router = new ModelRouter(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req, res) => void router.forward(req, res));
    return router;
  }

  add(key: string, upstreamUrl: string): void {
    this.targets.set(key, upstreamUrl);
  }

  /** Calls not yet ended. */
  open(): RoutedCall[] {
    return this.calls.filter((c) => c.endedAt === undefined);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      res.destroy();
      return;
    }
    const raw = Buffer.concat(chunks);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    const key = jobKeyOf(body);
    const target = key === undefined ? undefined : this.targets.get(key);
    if (key === undefined || target === undefined) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: `chaos router: no job for this request (${key ?? 'no tag'})`,
          },
        }),
      );
      return;
    }
    const messages = (body as { messages?: Array<{ role?: string }> }).messages ?? [];
    const record: RoutedCall | undefined =
      new URL(req.url ?? '/', 'http://x').pathname === '/v1/messages'
        ? {
            job: key,
            turn: messages.filter((m) => m.role === 'assistant').length,
            arrivedAt: Date.now(),
            completed: false,
            streamedChars: 0,
          }
        : undefined;
    if (record) this.calls.push(record);
    const end = () => {
      if (record && record.endedAt === undefined) record.endedAt = Date.now();
    };
    const { host: _host, ...headers } = req.headers;
    const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      let pending = '';
      reply.on('data', (chunk: Buffer) => {
        res.write(chunk);
        if (!record) return;
        pending += chunk.toString('utf8');
        let cut: number;
        while ((cut = pending.indexOf('\n\n')) >= 0) {
          readFrame(record, pending.slice(0, cut));
          pending = pending.slice(cut + 2);
        }
      });
      reply.on('end', () => {
        end();
        res.end();
      });
      reply.on('error', () => {
        end();
        res.destroy();
      });
    });
    upstream.on('error', () => {
      end();
      res.destroy();
    });
    // A client that goes away (its worker was killed) ends the upstream stream too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
      end();
    });
    upstream.end(raw);
  }
}

function readFrame(record: RoutedCall, frame: string): void {
  const data = frame.split('\n').find((l) => l.startsWith('data: '));
  if (!data) return;
  let event: {
    type?: string;
    message?: { usage?: Usage };
    delta?: { text?: string; partial_json?: string };
    usage?: { output_tokens?: number };
  };
  try {
    event = JSON.parse(data.slice('data: '.length)) as typeof event;
  } catch {
    return;
  }
  if (event.type === 'message_start' && event.message?.usage) record.usage = { ...event.message.usage };
  else if (event.type === 'content_block_delta') {
    record.streamedChars += (event.delta?.text ?? event.delta?.partial_json ?? '').length;
  } else if (event.type === 'message_delta' && record.usage && event.usage?.output_tokens !== undefined) {
    record.usage.output_tokens = event.usage.output_tokens;
  } else if (event.type === 'message_stop') record.completed = true;
}
