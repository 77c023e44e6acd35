import type { Client, WorkflowHandle } from '@temporalio/client';
import type { PendingApproval, SessionSnapshot } from '../shared/session';
import { snapshotQuery } from '../workflows/definitions';

/**
 * The pending call an `approve`/`deny` is about. Checked before the signal is sent, so a typo or a
 * job that is not waiting gets a clear error instead of a signal that changes nothing.
 */
export async function pendingApprovalFor(handle: WorkflowHandle, toolUseId?: string): Promise<PendingApproval> {
  const snapshot = await handle.query(snapshotQuery, Number.MAX_SAFE_INTEGER);
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
  return pending.map((p) => `${p.toolUseId} (${p.toolName})`).join(', ');
}

/** One line per recent job; running jobs show their phase and, when parked, what they want to run. */
export async function listJobs(client: Client, limit: number): Promise<string[]> {
  const lines: string[] = [];
  for await (const info of client.workflow.list({ query: `WorkflowType = 'agentSession'` })) {
    if (lines.length >= limit) break;
    const started = info.startTime.toISOString().replace('T', ' ').slice(0, 19);
    let line = `${info.workflowId.padEnd(32)} ${info.status.name.padEnd(10)} ${started}`;
    if (info.status.name === 'RUNNING') {
      const snapshot = await Promise.race([
        client.workflow
          .getHandle(info.workflowId)
          .query(snapshotQuery, Number.MAX_SAFE_INTEGER) as Promise<SessionSnapshot>,
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 3_000).unref()),
      ]).catch(() => undefined);
      if (snapshot) {
        line += `  turn ${snapshot.turnCount} ${snapshot.phase}`;
        for (const p of snapshot.pendingApprovals)
          line += `\n    waiting for approval: ${p.toolName} ${p.input} [${p.toolUseId}]`;
      } else {
        line += '  (no worker answered)';
      }
    }
    lines.push(line);
  }
  return lines.length > 0 ? lines : ['no jobs yet'];
}
