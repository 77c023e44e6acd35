import { InvalidArgumentError } from 'commander';
import { ServiceError } from '@temporalio/client';
import { NamespaceNotFoundError, WorkflowNotFoundError } from '@temporalio/common';
import { temporalTargetFromEnv } from './config';

/** gRPC status codes the CLI explains (from grpc's status.h). */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

/** Where the CLI looked for Temporal, for messages: the cluster in TEMPORAL_ADDRESS, or the embedded server. */
function where(env: NodeJS.ProcessEnv): string {
  const target = safeTarget(env);
  return target ? `${target.address} (TEMPORAL_ADDRESS, namespace ${target.namespace})` : 'the embedded server';
}

function safeTarget(env: NodeJS.ProcessEnv): ReturnType<typeof temporalTargetFromEnv> {
  try {
    return temporalTargetFromEnv(env);
  } catch {
    return undefined;
  }
}

/** An error as the Temporal client or gRPC raised it, not one durable-agent wrote. */
function isRawTemporalError(error: unknown): boolean {
  return error instanceof ServiceError || !(error instanceof Error) || error.constructor === Error;
}

function grpcCode(error: unknown): number | undefined {
  const cause = error instanceof ServiceError ? error.cause : error;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * The one line a user sees for an expected failure (no server, unknown job, bad input), saying
 * what is wrong and what to do; never a stack trace. Anything else keeps its own message.
 */
export function explainCliError(error: unknown, env: NodeJS.ProcessEnv = process.env): string {
  if (error instanceof InvalidArgumentError) return error.message;
  if (error instanceof WorkflowNotFoundError) {
    const id = error.workflowId ? `"${error.workflowId}" ` : '';
    return `no job ${id}on ${where(env)}: \`durable-agent ls\` lists the jobs there (a job closed longer ago than the retention is gone).`;
  }
  if (error instanceof NamespaceNotFoundError) {
    return `the namespace "${error.namespace}" does not exist on ${where(env)}: set TEMPORAL_NAMESPACE to one that does.`;
  }
  const message = error instanceof Error ? error.message : String(error);
  // The project's own errors (a prune refusal, a configuration error) already say what to do.
  if (!isRawTemporalError(error)) return message;
  const target = safeTarget(env);
  if (
    /Failed to connect before the deadline|ECONNREFUSED|Channel has been shut down/i.test(message) ||
    grpcCode(error) === GRPC_UNAVAILABLE
  ) {
    return target
      ? `no Temporal server answers at ${target.address} (TEMPORAL_ADDRESS): start it, check the address, or unset TEMPORAL_ADDRESS to use the embedded server.`
      : `the embedded Temporal server does not answer: \`durable-agent stop\` and run the command again; its log is under $DURABLE_AGENT_HOME/logs.`;
  }
  if (grpcCode(error) === GRPC_DEADLINE_EXCEEDED || /deadline exceeded/i.test(message)) {
    return `${where(env)} did not answer in time (${message}); is a worker running for this task queue? Start one with \`durable-agent worker\`.`;
  }
  return message;
}
