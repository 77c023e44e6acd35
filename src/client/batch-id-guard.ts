import type { Client } from '@temporalio/client';
import { InvalidArgumentError } from 'commander';

/**
 * Job commands given a batch's id (`status nightly`): a batch is a workflow of its own, whose
 * query, result and history are not a job's. Said in one line, with the batch command that does it,
 * instead of a job command failing on what it cannot read. An id that names nothing is left to the
 * command, which says so its own way.
 */
export async function refuseBatchId(client: Client, id: string, instead: string): Promise<void> {
  const type = await client.workflow
    .getHandle(id)
    .describe()
    .then(
      (description) => description.type,
      () => undefined,
    );
  if (type === 'agentBatch') {
    throw new InvalidArgumentError(
      `${id} is a batch, not a job: ${instead.replaceAll('<id>', id)} (its jobs are ${id}/<task>, which job commands take).`,
    );
  }
}
