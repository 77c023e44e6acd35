import type { WorkflowHandle } from '@temporalio/client';
import type { PendingApproval } from '../shared/session';
import { snapshotQuery } from '../workflows/definitions';
import { withAgentApprovals } from './agent-approvals';

/**
 * The pending call an `approve`/`deny` is about: the job's own, or one of its running subagents'.
 * Checked before the signal is sent, so a typo or a job that is not waiting gets a clear error
 * instead of a signal that changes nothing.
 */
export async function pendingApprovalFor(handle: WorkflowHandle, toolUseId?: string): Promise<PendingApproval> {
  const snapshot = await withAgentApprovals(handle.client, await handle.query(snapshotQuery, Number.MAX_SAFE_INTEGER));
  const pending = snapshot.pendingApprovals;
  if (pending.length === 0)
    throw new Error(`Job ${handle.workflowId} is not waiting for an approval (phase: ${snapshot.phase}).`);
  if (toolUseId) {
    const match = pending.find((p) => p.toolUseId === toolUseId);
    if (!match)
      throw new Error(`Job ${handle.workflowId} has no pending call ${toolUseId}; pending: ${describe(pending)}.`);
    return match;
  }
  if (pending.length > 1)
    throw new Error(
      `Job ${handle.workflowId} waits on ${pending.length} calls; name one with --tool: ${describe(pending)}.`,
    );
  return pending[0] as PendingApproval;
}

function describe(pending: PendingApproval[]): string {
  return pending.map((p) => `${p.toolUseId} (${p.toolName}${p.agent ? `, agent "${p.agent.label}"` : ''})`).join(', ');
}

/** How an answer to a subagent's call says whose it was. */
export function agentNote(pending: PendingApproval): string {
  return pending.agent ? ` (for agent "${pending.agent.label}", job ${pending.agent.jobId})` : '';
}
