/**
 * `toModelFailure`: each API error, built by the real SDK, becomes the Temporal failure the
 * workflow keys on, retryable or not as the API documents it. The last group drives the real SDK
 * against the scripted model server, so error codes and mid-stream errors arrive as they would.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { ApplicationFailure } from '@temporalio/common';
import {
  endpointForMessages,
  OVERLOAD_ATTEMPTS_BEFORE_FALLBACK,
  toModelFailure,
  UNREACHABLE_ATTEMPTS,
} from '../src/activities/model-errors';
import type { ModelFailureDetails } from '../src/activities/model-errors';
import { ScriptedModelServer, type ScheduledFault } from '../src/model-server';
import { MODEL_FAILURE_TYPES } from '../src/shared/activity-types';

const firstAttempt = { attempt: 1, fallbackAvailable: false };

/** An HTTP error exactly as the SDK builds it from a response: class chosen by status. */
function httpError(
  status: number,
  errorType: string | undefined,
  message = 'something went wrong',
  headers: Record<string, string> = {},
  errorCode?: string,
) {
  const body =
    errorType === undefined
      ? undefined
      : {
          type: 'error',
          error: { type: errorType, message, ...(errorCode ? { details: { error_code: errorCode } } : {}) },
          request_id: 'req_011Ctest',
        };
  return Anthropic.APIError.generate(
    status,
    body,
    undefined,
    new Headers({ 'request-id': 'req_011Ctest', ...headers }),
  );
}

/** A stream that answered 200 and then sent an `error` event: the SDK's own construction. */
function streamError(errorType: string, message = 'mid-stream failure') {
  const body = { type: 'error', error: { type: errorType, message } };
  return new Anthropic.APIError(undefined, body, undefined, new Headers(), errorType as Anthropic.ErrorType);
}

function detailsOf(failure: ApplicationFailure): ModelFailureDetails {
  return failure.details?.[0] as ModelFailureDetails;
}

describe('toModelFailure: HTTP errors', () => {
  // Every documented status, plus the ones the SDK has a class for; 4xx is final unless 408/409/429.
  const cases: Array<[number, string | undefined, string, boolean, string]> = [
    [400, 'invalid_request_error', MODEL_FAILURE_TYPES.invalidRequest, false, 'BadRequestError'],
    [401, 'authentication_error', MODEL_FAILURE_TYPES.authentication, false, 'AuthenticationError'],
    [402, 'billing_error', MODEL_FAILURE_TYPES.billing, false, 'PaymentRequiredError'],
    [403, 'permission_error', MODEL_FAILURE_TYPES.permission, false, 'PermissionDeniedError'],
    [404, 'not_found_error', MODEL_FAILURE_TYPES.notFound, false, 'NotFoundError'],
    [408, undefined, MODEL_FAILURE_TYPES.timeout, true, 'RequestTimeoutError'],
    [409, 'conflict_error', MODEL_FAILURE_TYPES.conflict, true, 'ConflictError'],
    [412, 'invalid_request_error', MODEL_FAILURE_TYPES.invalidRequest, false, 'PreconditionFailedError'],
    [413, 'request_too_large', MODEL_FAILURE_TYPES.requestTooLarge, false, 'ContentTooLargeError'],
    [422, 'invalid_request_error', MODEL_FAILURE_TYPES.invalidRequest, false, 'UnprocessableEntityError'],
    [429, 'rate_limit_error', MODEL_FAILURE_TYPES.rateLimited, true, 'RateLimitError'],
    [431, undefined, MODEL_FAILURE_TYPES.invalidRequest, false, 'RequestHeaderFieldsTooLargeError'],
    [418, undefined, MODEL_FAILURE_TYPES.invalidRequest, false, 'APIError'],
    [500, 'api_error', MODEL_FAILURE_TYPES.apiError, true, 'InternalServerError'],
    [502, undefined, MODEL_FAILURE_TYPES.apiError, true, 'InternalServerError'],
    [503, 'api_error', MODEL_FAILURE_TYPES.apiError, true, 'ServiceUnavailableError'],
    [504, 'timeout_error', MODEL_FAILURE_TYPES.timeout, true, 'GatewayTimeoutError'],
    [529, 'overloaded_error', MODEL_FAILURE_TYPES.overloaded, true, 'OverloadedError'],
  ];

  test.each(cases)('%i %s → %s (retryable: %s)', (status, errorType, type, retryable, sdkClass) => {
    const error = httpError(status, errorType);
    expect(error.constructor.name).toBe(sdkClass); // the test really exercises the SDK's class
    const failure = toModelFailure(error, firstAttempt);
    expect(failure.type).toBe(type);
    expect(failure.nonRetryable).toBe(!retryable);
    expect(failure.message).toContain(String(status));
    expect(detailsOf(failure)).toMatchObject({ status, requestId: 'req_011Ctest' });
    if (errorType) expect(detailsOf(failure).errorType).toBe(errorType);
  });

  test('the message says status, type and the API message, for the Terminal detail', () => {
    const failure = toModelFailure(
      httpError(402, 'billing_error', 'Your credit balance is too low to access the Anthropic API.'),
      firstAttempt,
    );
    expect(failure.message).toBe(
      'Model API error 402 billing_error: Your credit balance is too low to access the Anthropic API.',
    );
  });

  test('a 429 waits as long as retry-after says (seconds or an HTTP date)', () => {
    const seconds = toModelFailure(
      httpError(429, 'rate_limit_error', 'slow down', { 'retry-after': '7' }),
      firstAttempt,
    );
    expect(seconds.nextRetryDelay).toBe(7000);
    const date = new Date(Date.now() + 30_000).toUTCString();
    const byDate = toModelFailure(
      httpError(429, 'rate_limit_error', 'slow down', { 'retry-after': date }),
      firstAttempt,
    );
    expect(Number(byDate.nextRetryDelay)).toBeGreaterThan(25_000);
    expect(Number(byDate.nextRetryDelay)).toBeLessThanOrEqual(30_000);
    expect(toModelFailure(httpError(429, 'rate_limit_error'), firstAttempt).nextRetryDelay).toBeUndefined();
  });

  test('a 429 for a spending cap is final; a ramp limit still waits and retries', () => {
    for (const code of ['enforced_spend_limit_reached', 'contract_spend_limit_reached']) {
      const failure = toModelFailure(
        httpError(429, 'rate_limit_error', 'spend cap reached', { 'retry-after': '60' }, code),
        firstAttempt,
      );
      expect(failure.type).toBe(MODEL_FAILURE_TYPES.spendLimit);
      expect(failure.nonRetryable).toBe(true);
      expect(failure.nextRetryDelay).toBeUndefined();
      expect(detailsOf(failure).errorCode).toBe(code);
    }
    // A ramp limit is a rate limit with a code: it waits and retries like any other.
    const ramp = toModelFailure(
      httpError(429, 'rate_limit_error', 'ramping', { 'retry-after': '2' }, 'ramp_limit_exceeded'),
      firstAttempt,
    );
    expect(ramp.type).toBe(MODEL_FAILURE_TYPES.rateLimited);
    expect(ramp.nonRetryable).toBe(false);
    expect(ramp.nextRetryDelay).toBe(2000);
  });

  test('the body type names the failure even when the status class is generic', () => {
    // An overloaded_error answered with 500 is still an overload, with its fallback logic.
    expect(toModelFailure(httpError(500, 'overloaded_error'), firstAttempt).type).toBe(MODEL_FAILURE_TYPES.overloaded);
    // The status still decides retrying: a 400 that says billing_error is final.
    const billing = toModelFailure(httpError(400, 'billing_error'), firstAttempt);
    expect(billing.type).toBe(MODEL_FAILURE_TYPES.billing);
    expect(billing.nonRetryable).toBe(true);
  });
});

describe('toModelFailure: prompt too long', () => {
  test('400 "prompt is too long: N tokens > M maximum" → prompt_too_long with N and M', () => {
    const failure = toModelFailure(
      httpError(400, 'invalid_request_error', 'prompt is too long: 212345 tokens > 200000 maximum'),
      firstAttempt,
    );
    expect(failure.type).toBe(MODEL_FAILURE_TYPES.promptTooLong);
    expect(failure.nonRetryable).toBe(true);
    expect(detailsOf(failure)).toMatchObject({ status: 400, promptTokens: 212345, maxPromptTokens: 200000 });
  });

  test('the wording without numbers is still prompt_too_long, just without them', () => {
    const failure = toModelFailure(httpError(400, 'invalid_request_error', 'prompt is too long'), firstAttempt);
    expect(failure.type).toBe(MODEL_FAILURE_TYPES.promptTooLong);
    expect(detailsOf(failure).promptTokens).toBeUndefined();
  });

  test('only an anchored match on a 400 invalid_request_error counts', () => {
    const quoted = httpError(
      400,
      'invalid_request_error',
      'messages.0.content.0.text: "prompt is too long: 5 tokens > 4 maximum" is not allowed',
    );
    expect(toModelFailure(quoted, firstAttempt).type).toBe(MODEL_FAILURE_TYPES.invalidRequest);
    // 413 is the request body's size, a different limit with its own type.
    const tooLarge = httpError(413, 'request_too_large', 'prompt is too long: 5 tokens > 4 maximum');
    expect(toModelFailure(tooLarge, firstAttempt).type).toBe(MODEL_FAILURE_TYPES.requestTooLarge);
    const otherType = httpError(400, 'billing_error', 'prompt is too long: 5 tokens > 4 maximum');
    expect(toModelFailure(otherType, firstAttempt).type).toBe(MODEL_FAILURE_TYPES.billing);
  });
});

describe('toModelFailure: errors without an HTTP status', () => {
  const cases: Array<[string, string, boolean]> = [
    ['overloaded_error', MODEL_FAILURE_TYPES.overloaded, true],
    ['api_error', MODEL_FAILURE_TYPES.apiError, true],
    ['rate_limit_error', MODEL_FAILURE_TYPES.rateLimited, true],
    ['timeout_error', MODEL_FAILURE_TYPES.timeout, true],
    ['conflict_error', MODEL_FAILURE_TYPES.conflict, true],
    ['invalid_request_error', MODEL_FAILURE_TYPES.invalidRequest, false],
    ['authentication_error', MODEL_FAILURE_TYPES.authentication, false],
    ['billing_error', MODEL_FAILURE_TYPES.billing, false],
    ['permission_error', MODEL_FAILURE_TYPES.permission, false],
    ['not_found_error', MODEL_FAILURE_TYPES.notFound, false],
    ['request_too_large', MODEL_FAILURE_TYPES.requestTooLarge, false],
    ['some_future_error', MODEL_FAILURE_TYPES.apiError, true],
  ];

  test.each(cases)('stream error event %s → %s (retryable: %s)', (errorType, type, retryable) => {
    const failure = toModelFailure(streamError(errorType), firstAttempt);
    expect(failure.type).toBe(type);
    expect(failure.nonRetryable).toBe(!retryable);
    expect(failure.message).toBe(`Model API error ${errorType}: mid-stream failure`);
    expect(detailsOf(failure).status).toBeUndefined();
  });

  test('a mid-stream prompt-too-long is recognised too', () => {
    const failure = toModelFailure(
      streamError('invalid_request_error', 'prompt is too long: 300001 tokens > 300000 maximum'),
      firstAttempt,
    );
    expect(failure.type).toBe(MODEL_FAILURE_TYPES.promptTooLong);
    expect(detailsOf(failure)).toMatchObject({ promptTokens: 300001, maxPromptTokens: 300000 });
  });

  test('connection failures, timeouts, a body cut mid-stream and non-SDK errors retry as connection', () => {
    const errors: unknown[] = [
      new Anthropic.APIConnectionError({ message: 'Connection error.' }),
      new Anthropic.APIConnectionTimeoutError(),
      new TypeError('terminated'),
      new Anthropic.AnthropicError('stream ended without message_stop'),
      'a string',
    ];
    for (const error of errors) {
      const failure = toModelFailure(error, firstAttempt);
      expect(failure.type).toBe(MODEL_FAILURE_TYPES.connection);
      expect(failure.nonRetryable).toBe(false);
      expect(failure.message).toMatch(/^Model call failed: /);
    }
  });
});

describe('toModelFailure: an API that cannot be reached', () => {
  /** An SDK connection error caused, as undici reports it, by `code`. */
  const unreachable = (code: string) =>
    new Anthropic.APIConnectionError({
      message: 'Connection error.',
      cause: Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) }),
    });
  const at = (attempt: number) => ({ attempt, fallbackAvailable: false, endpoint: 'https://gateway.example' });

  test.each([
    ['ECONNREFUSED', 'connection refused'],
    ['ENOTFOUND', 'host name not found'],
    ['CERT_HAS_EXPIRED', 'its TLS certificate has expired'],
  ])('%s is retried for a bounded number of attempts, naming the address', (code, what) => {
    const early = toModelFailure(unreachable(code), at(1));
    expect(early.type).toBe(MODEL_FAILURE_TYPES.unreachable);
    expect(early.nonRetryable).toBe(false);
    expect(early.message).toBe(
      `Model call failed: cannot reach the model API at https://gateway.example (${what}, ${code}); attempt 1 of ${UNREACHABLE_ATTEMPTS}`,
    );
    const last = toModelFailure(unreachable(code), at(UNREACHABLE_ATTEMPTS));
    expect(last.nonRetryable).toBe(true);
    expect(last.message).toContain('Check ANTHROPIC_BASE_URL, the network, and any proxy or firewall');
  });

  test('a connection reset keeps the long retry of a transient failure', () => {
    const failure = toModelFailure(unreachable('ECONNRESET'), at(UNREACHABLE_ATTEMPTS));
    expect(failure.type).toBe(MODEL_FAILURE_TYPES.connection);
    expect(failure.nonRetryable).toBe(false);
  });

  test('an address is shown without its user name and password', () => {
    expect(endpointForMessages('https://user:secret@gateway.example:8443/anthropic?key=x')).toBe(
      'https://gateway.example:8443/anthropic',
    );
  });
});

describe('toModelFailure: overload and the fallback model', () => {
  test('retries until the fallback threshold, then fails fast once a fallback exists', () => {
    const overloaded = httpError(529, 'overloaded_error');
    const early = toModelFailure(overloaded, {
      attempt: OVERLOAD_ATTEMPTS_BEFORE_FALLBACK - 1,
      fallbackAvailable: true,
    });
    expect(early.type).toBe(MODEL_FAILURE_TYPES.overloaded);
    expect(early.nonRetryable).toBe(false);
    const late = toModelFailure(overloaded, { attempt: OVERLOAD_ATTEMPTS_BEFORE_FALLBACK, fallbackAvailable: true });
    expect(late.type).toBe(MODEL_FAILURE_TYPES.overloadedFallback);
    expect(late.nonRetryable).toBe(true);
    const noFallback = toModelFailure(overloaded, { attempt: 10, fallbackAvailable: false });
    expect(noFallback.type).toBe(MODEL_FAILURE_TYPES.overloaded);
    expect(noFallback.nonRetryable).toBe(false);
    // The same holds for an overload that arrives mid-stream.
    const midStream = toModelFailure(streamError('overloaded_error'), {
      attempt: OVERLOAD_ATTEMPTS_BEFORE_FALLBACK,
      fallbackAvailable: true,
    });
    expect(midStream.type).toBe(MODEL_FAILURE_TYPES.overloadedFallback);
  });
});

describe('toModelFailure: errors as the SDK receives them from the scripted server', () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  let lastError: unknown;
  async function failureFor(fault: ScheduledFault): Promise<ApplicationFailure> {
    server = await ScriptedModelServer.start({
      replies: [{ content: [{ type: 'text', text: 'partial answer' }] }],
      faults: [fault],
    });
    const client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
    try {
      await client.messages
        .stream({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
        .finalMessage();
    } catch (error) {
      lastError = error;
      return toModelFailure(error, firstAttempt);
    }
    throw new Error('expected the call to fail');
  }

  test('402 billing_error is final', async () => {
    const failure = await failureFor({ turn: 0, attempt: 1, kind: 'http', status: 402, errorType: 'billing_error' });
    expect(failure.type).toBe(MODEL_FAILURE_TYPES.billing);
    expect(failure.nonRetryable).toBe(true);
    expect(detailsOf(failure).requestId).toMatch(/^req_/);
  });

  test('429 enforced_spend_limit_reached arrives as the SDK subclass and is final', async () => {
    const failure = await failureFor({
      turn: 0,
      attempt: 1,
      kind: 'http',
      status: 429,
      errorType: 'rate_limit_error',
      errorCode: 'enforced_spend_limit_reached',
    });
    expect(lastError).toBeInstanceOf(Anthropic.RateLimitError);
    expect((lastError as InstanceType<typeof Anthropic.APIError>).constructor.name).toBe(
      'EnforcedSpendLimitReachedError',
    );
    expect(failure.type).toBe(MODEL_FAILURE_TYPES.spendLimit);
    expect(failure.nonRetryable).toBe(true);
  });

  test('408 and 409 retry', async () => {
    const timeout = await failureFor({ turn: 0, attempt: 1, kind: 'http', status: 408, errorType: 'timeout_error' });
    expect([timeout.type, timeout.nonRetryable]).toEqual([MODEL_FAILURE_TYPES.timeout, false]);
    await server?.close();
    const conflict = await failureFor({ turn: 0, attempt: 1, kind: 'http', status: 409, errorType: 'conflict_error' });
    expect([conflict.type, conflict.nonRetryable]).toEqual([MODEL_FAILURE_TYPES.conflict, false]);
  });

  test('an error event after the first block has no status and is classified by its type', async () => {
    const overloaded = await failureFor({
      turn: 0,
      attempt: 1,
      kind: 'stream_error',
      afterBlocks: 1,
      errorType: 'overloaded_error',
    });
    expect(overloaded.type).toBe(MODEL_FAILURE_TYPES.overloaded);
    expect(detailsOf(overloaded).status).toBeUndefined();
    await server?.close();
    const invalid = await failureFor({
      turn: 0,
      attempt: 1,
      kind: 'stream_error',
      errorType: 'invalid_request_error',
      message: 'prompt is too long: 200100 tokens > 200000 maximum',
    });
    expect(invalid.type).toBe(MODEL_FAILURE_TYPES.promptTooLong);
    expect(detailsOf(invalid)).toMatchObject({ promptTokens: 200100, maxPromptTokens: 200000 });
  });
});
