/**
 * Low-level HTTP helpers for the scripted server: reading a bounded body, sending JSON and API
 * errors, and writing SSE frames that respect client disconnects and server shutdown.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EXTRA_REASON_PHRASES, errorBody } from './api-error';

/** The real API's request size limit; larger bodies get 413 request_too_large. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Read the whole body as UTF-8, or return `'too_large'` once it exceeds `MAX_BODY_BYTES`. */
export async function readBody(req: IncomingMessage): Promise<string | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) return 'too_large';
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parse JSON, returning undefined instead of throwing. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Send a JSON response with the given status (529 gets a readable reason phrase). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const payload = JSON.stringify(body);
  const reason = EXTRA_REASON_PHRASES[status];
  const allHeaders = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
    ...headers,
  };
  if (reason) res.writeHead(status, reason, allHeaders);
  else res.writeHead(status, allHeaders);
  res.end(payload);
}

/** Send an API error in the real shape; the body repeats the `request-id` header, as the API does. */
export function sendApiError(
  res: ServerResponse,
  status: number,
  errorType: string,
  message: string | undefined,
  requestId: string,
  headers: Record<string, string> = {},
  errorCode?: string,
): void {
  sendJson(res, status, errorBody(errorType, message, requestId, errorCode), headers);
}

/** Resolve after `ms`, or early (with false) when `signal` aborts. No timer outlives an abort. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Write one chunk and wait until it is handed to the socket, so a later `drop` really happens
 * after the client could have received it. Resolves false when the client is gone or the
 * server is closing; never rejects, because a vanished client is normal here.
 */
export function writeChunk(res: ServerResponse, chunk: string, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted || res.destroyed || res.writableEnded) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    res.write(chunk, (error) => {
      signal.removeEventListener('abort', onAbort);
      resolve(!error && !signal.aborted);
    });
  });
}
