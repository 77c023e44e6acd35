import type { WorkflowClient } from '@temporalio/client';
import type { PendingApproval, PendingHookCallback, SessionSnapshot } from '../shared/session';
import { snapshotQuery } from '../workflows/definitions';

/** How long a running subagent's job is given to answer before its approvals are left out. */
const AGENT_QUERY_MS = 5_000;

/**
 * A job's snapshot with the approvals its running subagents wait on added to its own, each marked
 * with the agent's job: a subagent asks as its parent would, so whoever watches the parent sees it,
 * and `approve <parent>` answers it. An agent whose job does not answer in time is left out; the
 * parent's own approvals are never held up by it.
 */
export async function withAgentApprovals(client: WorkflowClient, snapshot: SessionSnapshot): Promise<SessionSnapshot> {
  const agents = (snapshot.backgroundTasks ?? []).filter((task) => task.status === 'running' && task.agentJobId);
  if (agents.length === 0) return snapshot;
  const theirs = await Promise.all(
    agents.map(async (task): Promise<{ approvals: PendingApproval[]; callbacks: PendingHookCallback[] }> => {
      const jobId = task.agentJobId as string;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), AGENT_QUERY_MS);
      try {
        const child = await client.withAbortSignal(controller.signal, () =>
          client.getHandle(jobId).query(snapshotQuery, Number.MAX_SAFE_INTEGER),
        );
        return {
          approvals: child.pendingApprovals.map((pending) => ({ ...pending, agent: { jobId, label: task.label } })),
          // The Agent SDK app's hook callbacks a subagent waits on are asked as the parent's are.
          callbacks: (child.hookCallbacks ?? []).map((pending) => ({ ...pending, jobId })),
        };
      } catch {
        return { approvals: [], callbacks: [] };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const callbacks = theirs.flatMap((agent) => agent.callbacks);
  return {
    ...snapshot,
    pendingApprovals: [...snapshot.pendingApprovals, ...theirs.flatMap((agent) => agent.approvals)],
    ...(callbacks.length > 0 ? { hookCallbacks: [...(snapshot.hookCallbacks ?? []), ...callbacks] } : {}),
  };
}

/** Where an approval's answer goes: the agent's job for a subagent's call, else the job's own. */
export function approvalTarget(pending: PendingApproval, jobId: string): string {
  return pending.agent?.jobId ?? jobId;
}
