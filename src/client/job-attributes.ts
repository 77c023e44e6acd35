import type { SearchAttributePair } from '@temporalio/common';
import { JOB_SEARCH_ATTRIBUTES, startSearchAttributes } from '../workflows/search-attributes';

/** The `temporal` commands that register the job search attributes on a namespace of a cluster. */
export function registerCommands(namespace: string): string[] {
  return JOB_SEARCH_ATTRIBUTES.map(
    ({ key, cliType }) =>
      `temporal operator search-attribute create --namespace ${namespace} --name ${key.name} --type ${cliType}`,
  );
}

/** True for the error of a start or a list query naming a search attribute the namespace does not know. */
export function isUnknownSearchAttribute(error: unknown): boolean {
  const cause = (error as { cause?: { code?: number; details?: string } } | undefined)?.cause;
  // gRPC 3 is INVALID_ARGUMENT; the server says "no mapping defined for search attribute X".
  return cause?.code === 3 && /search attribute/i.test(cause.details ?? '');
}

/**
 * Start a job carrying its search attributes (outcome `running`, workspace, model). A namespace
 * that does not know them refuses such a start; the job then starts without them (it runs the
 * same, and `ls` reads its outcome from its result) and the caller is told how to register them.
 */
export async function startWithSearchAttributes<T>(
  input: { workspace: string; model: string },
  namespace: string,
  start: (attributes: { typedSearchAttributes?: SearchAttributePair[] }) => Promise<T>,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<T> {
  try {
    return await start({ typedSearchAttributes: startSearchAttributes(input) });
  } catch (error) {
    if (!isUnknownSearchAttribute(error)) throw error;
    warn(
      `· namespace ${namespace} has no durable-agent search attributes, so \`ls --outcome\` and the Temporal UI ` +
        `cannot filter this job by outcome; register them once with:\n  ${registerCommands(namespace).join('\n  ')}`,
    );
    return start({});
  }
}
