import Anthropic from '@anthropic-ai/sdk';
import os from 'node:os';
import { ApplicationFailure } from '@temporalio/common';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import { baseUrlProblem } from '../shared/base-url';

/**
 * The Anthropic client the worker's model calls use, built from its environment
 * (`ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_BASE_URL`). The SDK's own retries are
 * off: Temporal's retry policy owns them, so a retry survives a worker crash.
 */
export function anthropicFromEnv(env: NodeJS.ProcessEnv = process.env): () => Anthropic {
  let client: Anthropic | undefined;
  return () => {
    if (client) return client;
    const apiKey = env.ANTHROPIC_API_KEY?.trim();
    const authToken = env.ANTHROPIC_AUTH_TOKEN?.trim();
    if (!apiKey && !authToken) {
      // Not retried here: the workflow waits and asks again, for as long as it takes a worker
      // with credentials to come (a retry policy would give up after its attempts).
      throw ApplicationFailure.create({
        message:
          `the worker on ${os.hostname()} (pid ${process.pid}) has no ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN): ` +
          'start `durable-agent worker` with it set, or run any durable-agent command from a shell that has it ' +
          '(the embedded background worker is then restarted with it)',
        type: MODEL_FAILURE_TYPES.noCredentials,
        nonRetryable: true,
      });
    }
    // Such a URL fails every attempt the same way: the call fails at once, not after 15 minutes
    // of retries as a connection error.
    const badBaseUrl = env.ANTHROPIC_BASE_URL ? baseUrlProblem(env.ANTHROPIC_BASE_URL) : undefined;
    if (badBaseUrl) {
      throw ApplicationFailure.create({
        message: `the worker on ${os.hostname()} (pid ${process.pid}) cannot call the model: ${badBaseUrl}, and restart the worker`,
        type: MODEL_FAILURE_TYPES.configuration,
        nonRetryable: true,
      });
    }
    client = new Anthropic({
      ...(apiKey ? { apiKey } : { apiKey: null, authToken }),
      ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}),
      maxRetries: 0,
    });
    return client;
  };
}
