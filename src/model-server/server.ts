/**
 * `ScriptedModelServer`: a local HTTP server that speaks the Anthropic Messages API, answering
 * from a script instead of a model. Tests and the demo point the real SDK at it (`baseURL`).
 *
 * Per request: work out its turn (continued across compactions) and whether it asks for a
 * compaction, record it, check auth, validate like the real API (context window included), apply
 * a scheduled fault, then answer with the scripted reply for its turn, or with a summary for a
 * compaction, streamed as SSE or as one JSON message, its usage split by the prompt cache.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { newRequestId, statusForErrorType } from './api-error';
import { readBody, sendApiError, sendJson, sleep, tryParseJson, writeChunk } from './http-io';
import { firstUserRequest, isCompactionRequest, requestMessages, writeSummary } from './compaction';
import { PromptCache } from './prompt-cache';
import { estimateInputTokens } from './prompt-tokens';
import { buildMessage, type BuiltReply } from './reply';
import { chunkDelayFor, compactionFaultFor, faultFor, parseScriptedSession, replyFor, sessionLabel } from './script';
import { planStream, type StreamEnding } from './sse';
import { ThinkingSeal } from './thinking-seal';
import { TurnLedger, type TurnIdentity } from './turns';
import type { Fault, RecordedRequest, ScriptedReply, ScriptedSession } from './types';
import { validateMessagesRequest } from './validate';
import { thinkingOmitted, thinkingOn } from './validate-thinking';
import { Waiters } from './waiters';

const DEFAULT_WAIT_MS = 5_000;

/** Where to listen (port 0, the default, picks a free port), and the clock. */
export interface ScriptedModelServerOptions {
  port?: number;
  host?: string;
  /** Milliseconds since the epoch, for prompt-cache expiry; default `Date.now`. */
  now?: () => number;
  /**
   * The key thinking signatures are made with. Default: random per server, so thinking is
   * accepted only by the server that sent it; give two servers the same key when a test restarts
   * the server in the middle of a conversation that holds thinking.
   */
  thinkingKey?: string;
  /**
   * Told of each streamed frame after the opening ones (`message_start`, `ping`) as soon as it is
   * handed to the socket, with the turn it answers (none for a compaction): a benchmark stamps
   * when each text delta leaves the server with it.
   */
  onStreamFrame?: (frame: string, turn: number | undefined) => void;
}

/** A recorded request's classification, before it is answered. */
type Call = TurnIdentity & { attempt: number } & ({ kind: 'turn' } | { kind: 'compaction'; index: number });

/** Per-request context shared by the answering steps. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  /** Aborted when the client disconnects or the server closes: stop writing, stop waiting. */
  signal: AbortSignal;
}

/** A scripted stand-in for the Messages API. Create with {@link ScriptedModelServer.start}. */
export class ScriptedModelServer {
  /** Base URL to give the SDK as `baseURL`, e.g. `http://127.0.0.1:43123`. */
  readonly url: string;
  /** Every `POST /v1/messages` received, in arrival order, recorded before it is answered. */
  readonly requests: RecordedRequest[] = [];
  /** The requests refused as invalid (400), by index in `requests`, with the API's message. */
  readonly rejected: { request: number; message: string }[] = [];

  private readonly session: ScriptedSession;
  private readonly server: Server;
  private readonly cache: PromptCache;
  private readonly seal: ThinkingSeal;
  private readonly ledger = new TurnLedger();
  private readonly attempts = new Map<number, number>();
  /** Compaction index by "continues from which summary, on which turn". */
  private readonly compactionIndexes = new Map<string, number>();
  private readonly compactionAttempts = new Map<number, number>();
  private readonly streamsStarted = new Set<number>();
  private readonly sockets = new Set<Socket>();
  private readonly inFlight = new Set<AbortController>();
  private readonly waiters = new Waiters();
  private closing: Promise<void> | undefined;
  private readonly onStreamFrame: ScriptedModelServerOptions['onStreamFrame'];

  private constructor(
    session: ScriptedSession,
    server: Server,
    url: string,
    now: () => number,
    onStreamFrame?: ScriptedModelServerOptions['onStreamFrame'],
    thinkingKey?: string,
  ) {
    this.seal = new ThinkingSeal(thinkingKey);
    this.session = session;
    this.onStreamFrame = onStreamFrame;
    this.server = server;
    this.url = url;
    this.cache = new PromptCache(now, session.cacheTtlMs);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res));
    // Tracked so close() can destroy keep-alive, streaming and hanging sockets alike.
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /**
   * Validate `session` (throws naming the bad field) and start listening.
   * Defaults: host 127.0.0.1, port 0 (a free port).
   */
  static async start(session: ScriptedSession, opts: ScriptedModelServerOptions = {}): Promise<ScriptedModelServer> {
    const checked = parseScriptedSession(session, 'passed to ScriptedModelServer.start');
    const server = createServer();
    const host = opts.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Nobody can know the port before start() resolves, so no connection predates the instance.
    const address = server.address() as AddressInfo;
    const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return new ScriptedModelServer(
      checked,
      server,
      `http://${urlHost}:${address.port}`,
      opts.now ?? Date.now,
      opts.onStreamFrame,
      opts.thinkingKey,
    );
  }

  /**
   * Resolve with the turn request for (`turn`, `attempt`) as soon as it arrives, before it is
   * answered. `attempt` defaults to 1, the first request for that turn. Compactions never match.
   */
  waitForRequest(turn: number, attempt = 1, timeoutMs = DEFAULT_WAIT_MS): Promise<RecordedRequest> {
    const turns = () => this.requests.filter((r) => r.kind === 'turn');
    return this.waiters.wait(
      () => turns().find((r) => r.turn === turn && r.attempt === attempt),
      timeoutMs,
      () =>
        `ScriptedModelServer: no request for turn ${turn} attempt ${attempt} within ${timeoutMs}ms ` +
        `(seen: ${seenList(turns(), (r) => `${r.turn}/${r.attempt}`)})`,
    );
  }

  /** The compaction requests received so far, in arrival order. */
  compactionRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.kind === 'compaction');
  }

  /** Resolve with the request for compaction `index` (0-based), attempt `attempt`, as soon as it arrives. */
  waitForCompaction(index: number, attempt = 1, timeoutMs = DEFAULT_WAIT_MS): Promise<RecordedRequest> {
    return this.waiters.wait(
      () => this.compactionRequests().find((r) => r.compaction === index && r.attempt === attempt),
      timeoutMs,
      () =>
        `ScriptedModelServer: no request for compaction ${index} attempt ${attempt} within ${timeoutMs}ms ` +
        `(seen: ${seenList(this.compactionRequests(), (r) => `${r.compaction ?? '?'}/${r.attempt}`)})`,
    );
  }

  /** Resolve once the first SSE bytes of any attempt at `turn` have been written to the socket. */
  waitForStreamStarted(turn: number, timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    return this.waiters
      .wait(
        () => (this.streamsStarted.has(turn) ? true : undefined),
        timeoutMs,
        () => `ScriptedModelServer: no stream started for turn ${turn} within ${timeoutMs}ms`,
      )
      .then(() => undefined);
  }

  /** Stop listening and destroy every socket, including streaming and hanging ones. Idempotent. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const controller of this.inFlight) controller.abort();
      this.waiters.rejectAll(new Error('ScriptedModelServer closed'));
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
    return this.closing;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    // 'close' fires on completion and on client disconnect; either way nothing more may be written.
    res.on('close', () => {
      controller.abort();
      this.inFlight.delete(controller);
    });
    res.on('error', () => undefined); // a reset client must not crash the test process
    const requestId = newRequestId();
    res.setHeader('request-id', requestId);
    const exchange: Exchange = { req, res, requestId, signal: controller.signal };
    try {
      await this.route(exchange);
    } catch (error) {
      // A bug here should fail the test loudly, not hang it: answer 500 with the cause.
      if (!res.headersSent) sendApiError(res, 500, 'api_error', `ScriptedModelServer: ${String(error)}`, requestId);
      else res.destroy();
    }
  }

  private async route(ex: Exchange): Promise<void> {
    const path = new URL(ex.req.url ?? '/', 'http://localhost').pathname;
    const isMessages = path === '/v1/messages';
    const isCount = path === '/v1/messages/count_tokens';
    if (ex.req.method !== 'POST' || (!isMessages && !isCount)) {
      ex.req.resume();
      sendApiError(ex.res, 404, 'not_found_error', `${ex.req.method ?? ''} ${path} not found`, ex.requestId);
      return;
    }
    const raw = await readBody(ex.req);
    if (raw === 'too_large') {
      sendApiError(ex.res, 413, 'request_too_large', undefined, ex.requestId, { connection: 'close' });
      return;
    }
    const body = tryParseJson(raw);
    if (isCount) return this.answerCountTokens(ex, body);

    const call = this.classify(body);
    this.requests.push({
      kind: call.kind,
      turn: call.turn,
      attempt: call.attempt,
      ...(call.kind === 'compaction' ? { compaction: call.index } : {}),
      body: body ?? raw,
      headers: { ...ex.req.headers },
    });
    this.waiters.notify();

    if (!hasCredentials(ex.req)) {
      sendApiError(ex.res, 401, 'authentication_error', 'x-api-key header is required', ex.requestId);
      return;
    }
    if (body === undefined) {
      sendApiError(ex.res, 400, 'invalid_request_error', 'There was an error parsing the body as JSON.', ex.requestId);
      return;
    }
    const context = { seal: this.seal, betas: betasOf(ex.req) };
    const problem = validateMessagesRequest(body, context) ?? this.contextWindowProblem(body);
    if (problem) {
      this.rejected.push({ request: this.requests.length - 1, message: problem });
      sendApiError(ex.res, 400, 'invalid_request_error', problem, ex.requestId);
      return;
    }
    if (call.kind === 'compaction') await this.answerCompaction(ex, body, call);
    else await this.answerTurn(ex, body, call.turn, call.attempt);
  }

  /**
   * Which turn a request is on and whether it asks for a compaction. A compaction request is the
   * same compaction as an earlier one (a retry, next attempt) when it is on the same turn and
   * continues from the same summary (or none): a retry re-sends the same conversation. Adopting
   * a summary, or going on for more turns, makes the next compaction request a new one.
   */
  private classify(body: unknown): Call {
    const identity = this.ledger.identify(body);
    if (!isCompactionRequest(body)) {
      const attempt = (this.attempts.get(identity.turn) ?? 0) + 1;
      this.attempts.set(identity.turn, attempt);
      return { ...identity, attempt, kind: 'turn' };
    }
    const key = `${identity.base?.index ?? 'start'}@${identity.turn}`;
    const index = this.compactionIndexes.get(key) ?? this.compactionIndexes.size;
    this.compactionIndexes.set(key, index);
    const attempt = (this.compactionAttempts.get(index) ?? 0) + 1;
    this.compactionAttempts.set(index, attempt);
    return { ...identity, attempt, kind: 'compaction', index };
  }

  /**
   * The real API refuses a prompt longer than the context window with this 400. What it does not
   * refuse, for current models, is a prompt that fits with `max_tokens` that does not: Claude 3.7
   * and Sonnet 4 answered that with a 400 "input length and `max_tokens` exceed context limit:
   * <input> + <max_tokens> > <window>", but Sonnet 4.5 and later models accept it and stop with
   * `stop_reason: 'model_context_window_exceeded'` when the window is full. This server therefore
   * checks the prompt alone; a script that wants the full-window stop scripts that stop reason.
   */
  private contextWindowProblem(body: unknown): string | undefined {
    const limit = this.session.contextWindow;
    if (limit === undefined) return undefined;
    const tokens = estimateInputTokens(body);
    return tokens > limit ? `prompt is too long: ${tokens} tokens > ${limit} maximum` : undefined;
  }

  private answerCountTokens(ex: Exchange, body: unknown): void {
    if (!hasCredentials(ex.req)) {
      sendApiError(ex.res, 401, 'authentication_error', 'x-api-key header is required', ex.requestId);
    } else if (body === undefined) {
      sendApiError(ex.res, 400, 'invalid_request_error', 'There was an error parsing the body as JSON.', ex.requestId);
    } else {
      sendJson(ex.res, 200, { input_tokens: estimateInputTokens(body) });
    }
  }

  private async answerTurn(ex: Exchange, body: unknown, turn: number, attempt: number): Promise<void> {
    const fault = faultFor(this.session, turn, attempt);
    const reply = fault?.kind === 'reply' ? fault.reply : replyFor(this.session, turn);
    if (!fault && !reply) {
      const count = this.session.replies.length;
      const message =
        `ScriptedModelServer: scripted session \`${sessionLabel(this.session)}\` has no reply for turn ${turn} ` +
        (count === 0 ? '(it has no replies)' : `(it has ${count} replies, for turns 0..${count - 1})`);
      sendApiError(ex.res, 400, 'invalid_request_error', message, ex.requestId);
      return;
    }
    // A fault may target a turn past the script's end; it then streams no content before failing.
    const sent = reply ?? { content: [] };
    const thinks = sent.content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
    if (thinks && !thinkingOn(body) && fault?.kind !== 'http' && fault?.kind !== 'hang') {
      // The model thinks only when asked to: a test whose request never asks would prove nothing.
      const message =
        `ScriptedModelServer: the reply for turn ${turn} of scripted session \`${sessionLabel(this.session)}\` ` +
        "holds thinking, but the request does not turn thinking on (thinking.type 'enabled', 'adaptive' or 'between_tools')";
      sendApiError(ex.res, 400, 'invalid_request_error', message, ex.requestId);
      return;
    }
    const record = (content: readonly unknown[]) => this.ledger.sent(turn, content);
    await this.answer(ex, body, sent, fault, chunkDelayFor(this.session, turn), turn, record);
  }

  /** A compaction is answered by its scripted reply, else by a summary written from the conversation. */
  private async answerCompaction(
    ex: Exchange,
    body: unknown,
    call: TurnIdentity & { index: number; attempt: number },
  ): Promise<void> {
    const fault = compactionFaultFor(this.session, call.index, call.attempt);
    const messages = requestMessages(body);
    const primaryRequest = call.base?.primaryRequest ?? firstUserRequest(messages);
    const scripted = fault?.kind === 'reply' ? fault.reply : this.session.compactions?.replies?.[call.index];
    const reply: ScriptedReply = scripted ?? {
      content: [{ type: 'text', text: writeSummary({ index: call.index, turn: call.turn, primaryRequest, messages }) }],
    };
    if (fault?.kind !== 'http' && fault?.kind !== 'hang') {
      const text = reply.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      this.ledger.remember(call.index, text, body, call.turn, primaryRequest);
    }
    await this.answer(ex, body, reply, fault, this.session.chunkDelayMs ?? 0);
  }

  /**
   * Answer with `reply`, or as `fault` says. Only a request the model gets to read (not an http
   * fault, not a hang) goes through the prompt cache. `streamTurn` is the turn whose stream start
   * `waitForStreamStarted` reports; compactions have none. `record` is told the content the
   * model answers with, as it goes out (signatures included).
   */
  private async answer(
    ex: Exchange,
    body: unknown,
    reply: ScriptedReply,
    fault: Fault | undefined,
    delayMs: number,
    streamTurn?: number,
    record?: (content: readonly unknown[]) => void,
  ): Promise<void> {
    if (fault?.kind === 'hang') return; // leave the request open; close() or the client ends it
    if (fault?.kind === 'http') {
      const headers: Record<string, string> =
        fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
      sendApiError(ex.res, fault.status, fault.errorType, fault.message, ex.requestId, headers, fault.errorCode);
      return;
    }
    const built = buildMessage(reply, body, this.cache.use(body), { seal: this.seal, omitted: thinkingOmitted(body) });
    record?.(built.message.content);
    const streaming = (body as { stream?: unknown }).stream === true;
    if (streaming) {
      await this.stream(ex, built, fault, delayMs, streamTurn);
    } else if (fault?.kind === 'drop') {
      ex.res.destroy();
    } else if (fault?.kind === 'stream_error') {
      const status = statusForErrorType(fault.errorType);
      sendApiError(ex.res, status, fault.errorType, fault.message, ex.requestId, {}, fault.errorCode);
    } else {
      sendJson(ex.res, 200, built.message);
    }
  }

  private async stream(
    ex: Exchange,
    reply: BuiltReply,
    fault: Fault | undefined,
    delayMs: number,
    streamTurn: number | undefined,
  ): Promise<void> {
    const ending: StreamEnding =
      fault?.kind === 'stream_error'
        ? {
            kind: 'error',
            errorType: fault.errorType,
            message: fault.message,
            afterBlocks: fault.afterBlocks,
            midBlock: fault.midBlock,
            errorCode: fault.errorCode,
          }
        : fault?.kind === 'drop'
          ? { kind: 'drop', afterBlocks: fault.afterBlocks, midBlock: fault.midBlock }
          : { kind: 'complete' };
    const plan = planStream(reply, ending);

    ex.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    if (!(await writeChunk(ex.res, plan.head.join(''), ex.signal))) return;
    if (streamTurn !== undefined) this.streamsStarted.add(streamTurn);
    this.waiters.notify();

    for (const frame of plan.body) {
      if (!(await sleep(delayMs, ex.signal))) return;
      if (!(await writeChunk(ex.res, frame, ex.signal))) return;
      this.onStreamFrame?.(frame, streamTurn);
    }
    if (plan.finish === 'drop') {
      if (await sleep(delayMs, ex.signal)) ex.res.destroy();
      return;
    }
    ex.res.end();
  }
}

/** What a wait timing out saw, e.g. `0/1, 0/2`, for its error message. */
function seenList(requests: RecordedRequest[], label: (request: RecordedRequest) => string): string {
  return requests.map(label).join(', ') || 'none';
}

/** The real API rejects a request without credentials before looking at it. */
function hasCredentials(req: IncomingMessage): boolean {
  return Boolean(req.headers['x-api-key'] || req.headers.authorization);
}

/** The request's `anthropic-beta` values, however many headers and commas carry them. */
function betasOf(req: IncomingMessage): string[] {
  const header = req.headers['anthropic-beta'];
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values.flatMap((v) => v.split(',').map((beta) => beta.trim())).filter(Boolean);
}
