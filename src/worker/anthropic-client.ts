import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';

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
      throw ApplicationFailure.create({
        message:
          'The worker has no ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN). Set it in the environment of ' +
          '`durable-agent worker` and restart the worker.',
        type: 'configuration',
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
