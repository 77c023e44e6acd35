/**
 * What the model saw: the request bodies the scripted server received (sizes and estimated
 * tokens), and the `usage` each answer reported (its prompt-cache split), recorded on the client
 * side through the Anthropic SDK's `fetch` option.
 */
import Anthropic from '@anthropic-ai/sdk';
import { estimateInputTokens } from '../src/model-server';
import type { RecordedRequest, ScriptedModelServer } from '../src/model-server';
import { isCompactionRequest } from '../src/model-server/compaction';
import type { Usage } from '../src/shared/messages';

/** One request as the bench keeps it: its size, not its body. */
export interface RequestSize {
  kind: RecordedRequest['kind'];
  turn: number;
  /** Bytes of the JSON body. */
  bytes: number;
  /** The server's estimate (chars / 4 of tools, system and messages): what its context-window check uses. */
  tokens: number;
}

/**
 * Measures every request the server records and then drops its body: a 1,000-turn job sends
 * hundreds of megabytes, which the bench process need not keep. The server answers from the
 * body it parsed itself, never from its record, so this changes nothing it does.
 */
export class RequestLog {
  readonly sizes: RequestSize[] = [];
  private seen = 0;
  private readonly timer: NodeJS.Timeout;

  /** `inspect` sees each request, body included, before the body is dropped. */
  constructor(
    private readonly server: ScriptedModelServer,
    private readonly inspect?: (request: RecordedRequest) => void,
  ) {
    this.timer = setInterval(() => this.drain(), 100);
  }

  drain(): RequestSize[] {
    const requests = this.server.requests;
    for (; this.seen < requests.length; this.seen++) {
      const request = requests[this.seen] as RecordedRequest;
      const body: unknown = request.body;
      this.inspect?.(request);
      this.sizes.push({
        kind: request.kind,
        turn: request.turn,
        bytes: Buffer.byteLength(typeof body === 'string' ? body : JSON.stringify(body)),
        tokens: estimateInputTokens(body),
      });
      request.body = undefined;
    }
    return this.sizes;
  }

  stop(): RequestSize[] {
    clearInterval(this.timer);
    return this.drain();
  }
}

/** One model call as the client saw it. */
export interface CallRecord {
  kind: 'turn' | 'compaction';
  /** Date.now() when the request was sent. */
  sentAt: number;
  status: number;
  /** Bytes of the request body. */
  bytes: number;
  /** The answer's usage; undefined for an error answer. */
  usage?: Usage;
}

/**
 * An Anthropic client for `baseURL` that records each call's request size and the `usage` of its
 * answer (read from a copy of the SSE stream: input counters from `message_start`, output from
 * `message_delta`). `settled()` waits until every answer has been read.
 */
export function recordingClient(baseURL: string): { client: Anthropic; calls: CallRecord[]; settled(): Promise<void> } {
  const calls: CallRecord[] = [];
  const reading: Array<Promise<void>> = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const raw = typeof init?.body === 'string' ? init.body : '';
    const record: CallRecord = {
      kind: raw && isCompactionRequest(JSON.parse(raw)) ? 'compaction' : 'turn',
      sentAt: Date.now(),
      status: 0,
      bytes: Buffer.byteLength(raw),
    };
    calls.push(record);
    const response = await fetch(input, init);
    record.status = response.status;
    if (!response.ok || !response.body) return response;
    const [forClient, forUs] = response.body.tee();
    reading.push(
      new Response(forUs).text().then(
        (text) => {
          record.usage = usageOfStream(text);
        },
        () => undefined,
      ),
    );
    return new Response(forClient, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  const client = new Anthropic({ apiKey: 'bench-key', baseURL, maxRetries: 0, fetch: recordingFetch });
  return { client, calls, settled: async () => void (await Promise.all(reading)) };
}

function usageOfStream(text: string): Usage | undefined {
  let usage: Usage | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    let event: { type?: string; message?: { usage?: Partial<Usage> }; usage?: Partial<Usage> };
    try {
      event = JSON.parse(line.slice('data: '.length));
    } catch {
      continue;
    }
    if (event.type === 'message_start' && event.message?.usage) {
      const start = event.message.usage;
      usage = {
        input_tokens: start.input_tokens ?? 0,
        output_tokens: start.output_tokens ?? 0,
        cache_creation_input_tokens: start.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: start.cache_read_input_tokens ?? 0,
      };
    } else if (event.type === 'message_delta' && usage && event.usage?.output_tokens !== undefined) {
      usage.output_tokens = event.usage.output_tokens;
    }
  }
  return usage;
}
