import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import type { ModelFailureType } from '../shared/activity-types';

/** How many overloaded attempts of one call come before a configured fallback model takes over. */
export const OVERLOAD_ATTEMPTS_BEFORE_FALLBACK = 3;

const NON_RETRYABLE_BY_STATUS: Record<number, ModelFailureType> = {
  400: MODEL_FAILURE_TYPES.invalidRequest,
  401: MODEL_FAILURE_TYPES.authentication,
  403: MODEL_FAILURE_TYPES.permission,
  404: MODEL_FAILURE_TYPES.notFound,
  413: MODEL_FAILURE_TYPES.requestTooLarge,
};

/**
 * Turn an SDK error into the Temporal failure that says whether and when to retry. Temporal owns
 * retries (the SDK's own are off): client errors stop the call, rate limits wait as told,
 * overload and server errors back off. A stream that answered 200 and then sent an `error` event
 * arrives with no status, so the error body's type is checked as well.
 */
export function toModelFailure(
  error: unknown,
  context: { attempt: number; fallbackAvailable: boolean },
): ApplicationFailure {
  if (!(error instanceof Anthropic.APIError)) {
    const message = error instanceof Error ? error.message : String(error);
    return ApplicationFailure.create({
      message: `Model call failed: ${message}`,
      type: MODEL_FAILURE_TYPES.connection,
    });
  }
  const bodyType = errorBodyType(error);
  const message = `Model API error${error.status ? ` ${error.status}` : ''}${bodyType ? ` ${bodyType}` : ''}: ${
    error.apiMessage ?? error.message
  }`;

  if (error instanceof Anthropic.APIConnectionError) {
    return ApplicationFailure.create({ message, type: MODEL_FAILURE_TYPES.connection });
  }
  if (bodyType === 'overloaded_error' || error.status === 529) {
    const fallback = context.fallbackAvailable && context.attempt >= OVERLOAD_ATTEMPTS_BEFORE_FALLBACK;
    return ApplicationFailure.create({
      message,
      type: fallback ? MODEL_FAILURE_TYPES.overloadedFallback : MODEL_FAILURE_TYPES.overloaded,
      nonRetryable: fallback,
    });
  }
  if (error.status === 429 || bodyType === 'rate_limit_error') {
    const retryAfterMs = retryAfter(error.headers);
    return ApplicationFailure.create({
      message,
      type: MODEL_FAILURE_TYPES.rateLimited,
      ...(retryAfterMs !== undefined ? { nextRetryDelay: retryAfterMs } : {}),
    });
  }
  if (error.status !== undefined && NON_RETRYABLE_BY_STATUS[error.status] !== undefined) {
    const tooLong = error.status === 400 && /prompt is too long/i.test(error.apiMessage ?? error.message);
    return ApplicationFailure.create({
      message,
      type: tooLong ? MODEL_FAILURE_TYPES.promptTooLong : NON_RETRYABLE_BY_STATUS[error.status],
      nonRetryable: true,
    });
  }
  if (bodyType === 'invalid_request_error' || bodyType === 'authentication_error' || bodyType === 'permission_error') {
    return ApplicationFailure.create({ message, type: MODEL_FAILURE_TYPES.invalidRequest, nonRetryable: true });
  }
  return ApplicationFailure.create({ message, type: MODEL_FAILURE_TYPES.apiError });
}

function errorBodyType(error: InstanceType<typeof Anthropic.APIError>): string | undefined {
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
