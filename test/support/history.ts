import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';

/** Size of a workflow's history as Temporal stores it (encoded protobuf), in bytes. */
export async function historyBytes(handle: WorkflowHandle): Promise<number> {
  const history = await handle.fetchHistory();
  return temporal.api.history.v1.History.encode(history).finish().length;
}
