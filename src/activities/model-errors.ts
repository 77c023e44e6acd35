import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import type { ModelFailureType } from '../shared/activity-types';

/** How many overloaded attempts of one call come before a configured fallback model takes over. */
export const OVERLOAD_ATTEMPTS_BEFORE_FALLBACK = 3;

/**
 * What a model failure carries in `ApplicationFailure.details[0]`: plain data, so the workflow can
 * read it after the failure crossed the Temporal boundary.
 */
export interface ModelFailureDetails {
  /** HTTP status; absent for a stream that answered 200 and then sent an `error` event. */
  status?: number;
  /** The error body's `error.type`, e.g. `billing_error`. */
  errorType?: string;
  /** The error body's `error.details.error_code`, e.g. `enforced_spend_limit_reached`. */
  errorCode?: string;
  requestId?: string;
  /** Prompt too long: the prompt's size in tokens, as the API counted it. */
  promptTokens?: number;
  /** Prompt too long: the most the model accepts. */
  maxPromptTokens?: number;
}

/** How the API's error types map onto ours, and whether a status-less (mid-stream) one may be retried. */
const BY_ERROR_TYPE: Readonly<Record<string, { type: ModelFailureType; retryable: boolean }>> = {
  invalid_request_error: { type: MODEL_FAILURE_TYPES.invalidRequest, retryable: false },
  authentication_error: { type: MODEL_FAILURE_TYPES.authentication, retryable: false },
  billing_error: { type: MODEL_FAILURE_TYPES.billing, retryable: false },
  permission_error: { type: MODEL_FAILURE_TYPES.permission, retryable: false },
  not_found_error: { type: MODEL_FAILURE_TYPES.notFound, retryable: false },
  request_too_large: { type: MODEL_FAILURE_TYPES.requestTooLarge, retryable: false },
  conflict_error: { type: MODEL_FAILURE_TYPES.conflict, retryable: true },
  rate_limit_error: { type: MODEL_FAILURE_TYPES.rateLimited, retryable: true },
  timeout_error: { type: MODEL_FAILURE_TYPES.timeout, retryable: true },
  api_error: { type: MODEL_FAILURE_TYPES.apiError, retryable: true },
  overloaded_error: { type: MODEL_FAILURE_TYPES.overloaded, retryable: true },
};

/** 4xx statuses the API documents as worth another attempt; every other 4xx is final. */
const RETRYABLE_CLIENT_STATUSES: ReadonlySet<number> = new Set([408, 409, 429]);

/**
 * A 429 whose cause is a spending cap rather than a rate: it lasts until the month (or the
 * contract) turns over, so retrying only burns attempts. The SDK names them by `error_code`.
 */
const SPEND_LIMIT_CODES: ReadonlySet<string> = new Set([
  'enforced_spend_limit_reached',
  'contract_spend_limit_reached',
]);

/**
 * The real API's answer to an over-long prompt: 400 `invalid_request_error`, "prompt is too long:
 * 212345 tokens > 200000 maximum". The API gives it no type or code of its own, so this message is
 * the only signal there is; the pattern is anchored at the start so it matches nothing else.
 */
const PROMPT_TOO_LONG = /^prompt is too long\b(?::\s*(\d+)\s*tokens\s*>\s*(\d+)\s*maximum)?/i;

type ApiError = InstanceType<typeof Anthropic.APIError>;

/**
 * Attempts of one call that may meet an unreachable API before it fails: with the first retry
 * after 2 s, doubling, the sixth attempt starts about a minute after the first. A dropped or reset
 * connection is not this: it keeps the long retry of any transient failure.
 */
export const UNREACHABLE_ATTEMPTS = 6;

/** Error codes (of the request's cause) that mean the API cannot be reached from here at all. */
const UNREACHABLE_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate cannot be verified',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its TLS certificate cannot be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate is for another host name',
};

/** The code and its words when `error` (or a cause of it) says the API cannot be reached. */
function unreachableCause(error: unknown): { code: string; what: string } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Object; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES[code]) return { code, what: UNREACHABLE_CODES[code] };
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function unreachableFailure(
  cause: { code: string; what: string },
  context: { attempt: number; endpoint?: string },
): ApplicationFailure {
  const where = context.endpoint ? `the model API at ${context.endpoint}` : 'the model API';
  const last = context.attempt >= UNREACHABLE_ATTEMPTS;
  return ApplicationFailure.create({
    message: last
      ? `Model call failed: cannot reach ${where} (${cause.what}, ${cause.code}) after ${context.attempt} attempts over about a minute. ` +
        'Check ANTHROPIC_BASE_URL, the network, and any proxy or firewall between this worker and that address.'
      : `Model call failed: cannot reach ${where} (${cause.what}, ${cause.code}); attempt ${context.attempt} of ${UNREACHABLE_ATTEMPTS}`,
    type: MODEL_FAILURE_TYPES.unreachable,
    nonRetryable: last,
  });
}

/** `url` without user name, password, query or fragment: fit for messages and logs. */
export function endpointForMessages(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(an address that is not a URL)';
  }
}

/**
 * Turn an SDK error into the Temporal failure that says whether and when to retry. Temporal owns
 * retries (the SDK's own are off).
 *
 * The HTTP status, as the SDK's error class carries it, decides whether to retry: every 4xx but
 * 408, 409 and 429 is final (402 `billing_error` included), 5xx and 529 retry, and a 429 for a
 * spending cap is final too. The error body's `error.type` names the failure, falling back to the
 * class; a stream that answered 200 and then sent an `error` event has no status, so for it the
 * body's type decides both. Nothing is classified by message text except an over-long prompt,
 * which the API marks no other way.
 */
export function toModelFailure(
  error: unknown,
  context: { attempt: number; fallbackAvailable: boolean; endpoint?: string },
): ApplicationFailure {
  if (!(error instanceof Anthropic.APIError) || error instanceof Anthropic.APIConnectionError) {
    const unreachable = unreachableCause(error);
    if (unreachable) return unreachableFailure(unreachable, context);
    // No answer from the API at all (reset, timed out, cut mid-body): try again.
    const message = error instanceof Error ? error.message : String(error);
    return ApplicationFailure.create({
      message: `Model call failed: ${message}${context.endpoint ? ` (${context.endpoint})` : ''}`,
      type: MODEL_FAILURE_TYPES.connection,
    });
  }
  const status = error.status;
  const bodyType = errorBodyType(error);
  const errorCode = error.errorCode ?? undefined;
  const apiMessage = error.apiMessage ?? error.message;
  const message = `Model API error${status ? ` ${status}` : ''}${bodyType ? ` ${bodyType}` : ''}: ${apiMessage}`;
  const details: ModelFailureDetails = {
    ...(status !== undefined ? { status } : {}),
    ...(bodyType ? { errorType: bodyType } : {}),
    ...(errorCode ? { errorCode } : {}),
    ...(error.requestID ? { requestId: error.requestID } : {}),
  };
  const known = bodyType ? BY_ERROR_TYPE[bodyType] : undefined;
  const type = known?.type ?? typeFromClass(error);

  if (type === MODEL_FAILURE_TYPES.overloaded) {
    const fallback = context.fallbackAvailable && context.attempt >= OVERLOAD_ATTEMPTS_BEFORE_FALLBACK;
    return ApplicationFailure.create({
      message,
      type: fallback ? MODEL_FAILURE_TYPES.overloadedFallback : MODEL_FAILURE_TYPES.overloaded,
      nonRetryable: fallback,
      details: [details],
    });
  }
  if (errorCode && SPEND_LIMIT_CODES.has(errorCode)) {
    return ApplicationFailure.create({
      message,
      type: MODEL_FAILURE_TYPES.spendLimit,
      nonRetryable: true,
      details: [details],
    });
  }
  if (type === MODEL_FAILURE_TYPES.invalidRequest && (status === undefined || status === 400)) {
    const tooLong = PROMPT_TOO_LONG.exec(apiMessage);
    if (tooLong) {
      const [, tokens, maximum] = tooLong;
      return ApplicationFailure.create({
        message,
        type: MODEL_FAILURE_TYPES.promptTooLong,
        nonRetryable: true,
        details: [
          {
            ...details,
            ...(tokens ? { promptTokens: Number(tokens) } : {}),
            ...(maximum ? { maxPromptTokens: Number(maximum) } : {}),
          },
        ],
      });
    }
  }

  const retryable =
    status === undefined
      ? (known?.retryable ?? true)
      : status >= 400 && status < 500
        ? RETRYABLE_CLIENT_STATUSES.has(status)
        : true;
  const retryAfterMs = retryable ? retryAfter(error.headers) : undefined;
  return ApplicationFailure.create({
    message,
    type,
    nonRetryable: !retryable,
    details: [details],
    // The API says how long a rate limit lasts; Temporal's backoff would only guess.
    ...(retryAfterMs !== undefined ? { nextRetryDelay: retryAfterMs } : {}),
  });
}

/** The failure type the SDK's error class implies, for a body without a known `error.type`. */
function typeFromClass(error: ApiError): ModelFailureType {
  if (error instanceof Anthropic.OverloadedError) return MODEL_FAILURE_TYPES.overloaded;
  if (error instanceof Anthropic.GatewayTimeoutError) return MODEL_FAILURE_TYPES.timeout;
  if (error instanceof Anthropic.InternalServerError) return MODEL_FAILURE_TYPES.apiError;
  if (error instanceof Anthropic.RateLimitError) return MODEL_FAILURE_TYPES.rateLimited;
  if (error instanceof Anthropic.RequestTimeoutError) return MODEL_FAILURE_TYPES.timeout;
  if (error instanceof Anthropic.ConflictError) return MODEL_FAILURE_TYPES.conflict;
  if (error instanceof Anthropic.PaymentRequiredError) return MODEL_FAILURE_TYPES.billing;
  if (error instanceof Anthropic.AuthenticationError) return MODEL_FAILURE_TYPES.authentication;
  if (error instanceof Anthropic.PermissionDeniedError) return MODEL_FAILURE_TYPES.permission;
  if (error instanceof Anthropic.NotFoundError) return MODEL_FAILURE_TYPES.notFound;
  if (error instanceof Anthropic.ContentTooLargeError) return MODEL_FAILURE_TYPES.requestTooLarge;
  // The API files every other client error under invalid_request_error (422, 412, 431, ...).
  if (error.status !== undefined && error.status >= 400 && error.status < 500)
    return MODEL_FAILURE_TYPES.invalidRequest;
  return MODEL_FAILURE_TYPES.apiError;
}

function errorBodyType(error: ApiError): string | undefined {
  if (error.type) return error.type;
  const body = error.error as { type?: unknown; error?: { type?: unknown } } | undefined;
  const nested = body?.error?.type ?? body?.type;
  return typeof nested === 'string' && nested !== 'error' ? nested : undefined;
}

/** `retry-after` in seconds (or an HTTP date), as milliseconds. */
function retryAfter(headers: Headers | undefined): number | undefined {
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
