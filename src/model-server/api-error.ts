/**
 * The real API's error vocabulary: error types, their HTTP statuses, the JSON body shape, and
 * the identifiers (`req_…`, `msg_…`) that accompany every response.
 */
import { randomBytes } from 'node:crypto';

/** HTTP status the real API uses for each documented error type. */
export const STATUS_BY_ERROR_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

const DEFAULT_MESSAGES: Readonly<Record<string, string>> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  billing_error: 'Your credit balance is too low to access the Anthropic API.',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  conflict_error: 'The request conflicts with the current state of the resource.',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of requests has exceeded your rate limit.',
  api_error: 'Internal server error',
  timeout_error: 'Request timed out while processing.',
  overloaded_error: 'Overloaded',
};

/** Status for an error type; unknown types fall back to 500 like an unexpected server error. */
export function statusForErrorType(errorType: string): number {
  return STATUS_BY_ERROR_TYPE[errorType] ?? 500;
}

/** The message the real API typically sends for an error type. */
export function defaultErrorMessage(errorType: string): string {
  return DEFAULT_MESSAGES[errorType] ?? errorType;
}

/**
 * `{"type":"error","error":{"type","message","details"?},"request_id"}`, the shape of every API
 * error. `details.error_code` names a specific cause within the type (the SDK reads it as
 * `errorCode` and picks a subclass for it, e.g. `EnforcedSpendLimitReachedError` on a 429).
 */
export interface ApiErrorBody {
  type: 'error';
  error: { type: string; message: string; details?: { error_code: string } };
  request_id?: string;
}

/** Build an error body; `requestId` is omitted for SSE error frames, which carry none. */
export function errorBody(errorType: string, message?: string, requestId?: string, errorCode?: string): ApiErrorBody {
  const body: ApiErrorBody = {
    type: 'error',
    error: { type: errorType, message: message ?? defaultErrorMessage(errorType) },
  };
  if (errorCode !== undefined) body.error.details = { error_code: errorCode };
  if (requestId !== undefined) body.request_id = requestId;
  return body;
}

/**
 * Reason phrases Node does not know: without one, 529 would go out as "529 unknown".
 * Cosmetic, since clients read the status code, but it keeps captures readable.
 */
export const EXTRA_REASON_PHRASES: Readonly<Record<number, string>> = { 529: 'Site Overloaded' };

const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomId(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += ID_ALPHABET[byte % ID_ALPHABET.length];
  return out;
}

/** A `request-id` value shaped like the real ones (`req_011C…`). */
export function newRequestId(): string {
  return `req_011C${randomId(20)}`;
}

/** A message id shaped like the real ones (`msg_01…`). */
export function newMessageId(): string {
  return `msg_01${randomId(22)}`;
}
