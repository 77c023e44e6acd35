import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { SessionInput } from '../shared/session';
import type { Terminal } from '../shared/terminal';
import type { PendingApproval, SessionEvent, SessionSnapshot } from '../shared/session';
import { approvalSignal, DEFAULT_TASK_QUEUE, snapshotQuery } from '../workflows/definitions';
import { approvalTarget, withAgentApprovals } from './agent-approvals';
import type { agentSession } from '../workflows/agent-session';
import { startWithSearchAttributes } from './job-attributes';
import { terminalOf } from './job-terminal';
import type { FollowListener } from './live-events';
import { LiveFollower, pendingActivities } from './live-follower';
import { LivePrinter } from './live-printer';
import type { Output } from './render';

export type JobHandle = WorkflowHandle<typeof agentSession>;

export type StartOutcome =
  | { kind: 'started'; handle: JobHandle }
  | { kind: 'attached'; handle: JobHandle }
  | { kind: 'finished'; handle: JobHandle; status: string };

export function newJobId(now = new Date()): string {
  return `job-${now.toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
}

/**
 * Start a job, or attach to the running one with the same id, so a retried CI step never starts a
 * second job. An id whose job already finished is not reused: its result stands.
 */
export async function startOrAttach(
  client: Client,
  jobId: string,
  input: SessionInput,
  taskQueue = DEFAULT_TASK_QUEUE,
): Promise<StartOutcome> {
  try {
    const handle = await startWithSearchAttributes(input, client.options.namespace, (attributes) =>
      client.workflow.start<typeof agentSession>('agentSession', {
        workflowId: jobId,
        taskQueue,
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        ...attributes,
      }),
    );
    return { kind: 'started', handle };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    const handle = client.workflow.getHandle<typeof agentSession>(jobId);
    const { status } = await handle.describe();
    return status.name === 'RUNNING' ? { kind: 'attached', handle } : { kind: 'finished', handle, status: status.name };
  }
}

/** What a person answered at the terminal; `skip` leaves the call to `approve`/`deny` elsewhere. */
export type ApprovalChoice = 'allow' | 'always' | 'deny' | 'skip';

/**
 * Asks a person about one pending call. `signal` fires when the call was answered elsewhere (or the
 * job ended), and the question must then be withdrawn.
 */
export type Approver = (
  pending: PendingApproval,
  signal: AbortSignal,
) => Promise<
  ApprovalChoice | { decision: 'deny'; reason: string } | { decision: 'allow'; updatedInput: Record<string, unknown> }
>;

export interface FollowOptions {
  /** How often to look (default 250 ms). */
  pollMs?: number;
  /** Ask about pending approvals here (an interactive terminal); without it, print the commands. */
  approver?: Approver;
  /** Stop following when it aborts: `follow()` then rejects with {@link FollowStopped}. The job runs on. */
  signal?: AbortSignal;
  /**
   * Also report to this: a {@link FollowListener} gets every event, a printer of recorded events
   * (`print(events)`) gets the job's recorded events only (an `assistant_text` with its whole text).
   */
  printer?: FollowListener | RecordedEventPrinter;
  /**
   * Asked each time no worker has answered for a while (how long, in ms): a line to show instead of
   * the generic hint, or undefined to say nothing yet. The embedded default starts its background
   * worker again here when it stopped (see `embeddedNoWorker`).
   */
  noWorker?: (afterMs: number) => Promise<string | undefined>;
}

/** Receives the job's recorded events, as the `snapshot` query has them. */
export interface RecordedEventPrinter {
  print(events: SessionEvent[]): void;
}

/** Both listeners, as one. */
function alongside(first: FollowListener, second: FollowListener | RecordedEventPrinter | undefined): FollowListener {
  if (!second) return first;
  const other: FollowListener =
    'onEvent' in second
      ? second
      : {
          onEvent: (event) => {
            if (event.kind === 'assistant_text') {
              const { seq, turn, kind, text } = event;
              second.print([{ seq, turn, kind, text }]);
            } else if (event.kind === 'tool_call' || event.kind === 'tool_result' || event.kind === 'notice') {
              second.print([event]);
            }
          },
        };
  return {
    onEvent: (event) => {
      first.onEvent(event);
      other.onEvent(event);
    },
    onStatus: (status) => {
      first.onStatus?.(status);
      other.onStatus?.(status);
    },
    close: () => {
      first.close?.();
      other.close?.();
    },
  };
}

/** `follow()` was stopped by its signal; the job itself was not touched. */
export class FollowStopped extends Error {
  override readonly name = 'FollowStopped';
  constructor() {
    super('stopped following the job');
  }
}

const NO_WORKER_MS = 10_000;
/** Even with an unchanged history, ask the query this often (a safety net; it costs a worker round trip). */
const REQUERY_MS = 5_000;
const AGENT_REQUERY_MS = 1_000;

/**
 * Report a job's progress until it ends, then return its Terminal. An {@link Output} gets the
 * terminal view ({@link LivePrinter}); a {@link FollowListener} gets the events themselves.
 *
 * Each poll (every 250 ms) asks the server (`describe`) for the running activities: the model
 * call's heartbeat carries the reply's text as it streams, and an activity's attempt and last
 * failure tell of a retry. When the job's history grew since the last look, the `snapshot` query
 * first fetches the events recorded since the last one. A job with no worker to answer the query
 * gets one hint, not a hang in silence.
 */
export async function follow(
  handle: JobHandle,
  to: Output | FollowListener,
  options: FollowOptions = {},
): Promise<Terminal> {
  const listener = alongside('onEvent' in to ? to : new LivePrinter(to), options.printer);
  const live = new LiveFollower(handle.workflowId, listener);
  const { signal } = options;
  const stopped = new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
  // The job's end is seen by the poll's `describe`, not by a long poll of its result: the client
  // adds a listener to a call's abort signal and never takes it off, so one signal kept for every
  // long poll of an hours-long job piled them up (MaxListenersExceededWarning).
  let ended = false;
  let warned = false;
  let unansweredSince: number | undefined;
  const told = new Set<string>();
  let asking: { toolUseId: string; controller: AbortController } | undefined;
  // The job's state changes only with its history, so the query (answered by a worker) is asked
  // again only when the history grew: not at all while a reply streams or a tool runs.
  let seenHistory: string | undefined;
  let queriedHistory: string | undefined;
  let queriedAt = 0;
  let followingAgents = false;
  try {
    while (!ended && !signal?.aborted) {
      // A subagent's work is in its own job's history, not this one's: looked at every second.
      const requeryMs = followingAgents ? AGENT_REQUERY_MS : REQUERY_MS;
      if (seenHistory === undefined || seenHistory !== queriedHistory || Date.now() - queriedAt > requeryMs) {
        const covers = seenHistory;
        // A query that loses the race (no worker answered, or following stopped) is cancelled: left
        // waiting, it failed later, uncaught, once the CLI had closed its connection. Its signal is
        // its own, so no listener outlives it.
        const cancel = new AbortController();
        const query = handle.client.withAbortSignal(cancel.signal, () => handle.query(snapshotQuery, live.lastSeq));
        query.catch(() => undefined);
        try {
          const snapshot = await Promise.race([
            query,
            sleep(NO_WORKER_MS, undefined, { ref: false }).then(() => undefined),
            stopped.then(() => undefined),
          ]).finally(() => cancel.abort());
          if (signal?.aborted) break;
          if (snapshot) {
            // A running subagent's approvals are asked here as the job's own are.
            const withAgents = await withAgentApprovals(handle.client, snapshot);
            unansweredSince = undefined;
            queriedHistory = covers;
            queriedAt = Date.now();
            await followAgents(handle, live, withAgents);
            followingAgents = live.agentsToFollow(withAgents).length > 0;
            live.onSnapshot(withAgents);
            const pendingIds = new Set(withAgents.pendingApprovals.map((pending) => pending.toolUseId));
            if (asking && !pendingIds.has(asking.toolUseId)) asking.controller.abort();
            const next = withAgents.pendingApprovals[0];
            if (options.approver && !asking && next)
              asking = ask(handle, next, options.approver, () => (asking = undefined));
          } else if (options.noWorker) {
            unansweredSince ??= Date.now() - NO_WORKER_MS;
            const text = await options
              .noWorker(Date.now() - unansweredSince)
              .catch((error: unknown) => `could not start the background worker again: ${String(error)}`);
            if (text !== undefined && !told.has(text)) {
              told.add(text);
              listener.onEvent({ kind: 'no_worker', afterMs: Date.now() - unansweredSince, text });
            }
          } else if (!warned) {
            warned = true;
            listener.onEvent({ kind: 'no_worker', afterMs: NO_WORKER_MS });
          }
        } catch {
          // A query can fail while the job moves between workers or continues as new; the next poll retries.
        }
      }
      try {
        // After the snapshot, so a reply's streamed text always comes before its assistant_text event.
        const description = await handle.describe();
        seenHistory = `${description.runId}:${description.historyLength}`;
        live.onActivities(description.runId, pendingActivities(description));
        // The latest run's status: a continue-as-new is RUNNING again in its new run.
        ended = description.status.name !== 'RUNNING';
      } catch {
        seenHistory = undefined; // look again, and query again, next time
      }
      if (ended) break;
      live.status();
      await Promise.race([sleep(options.pollMs ?? 250), stopped]);
    }
    if (signal?.aborted) throw new FollowStopped();
    // Ended: the result is there at once (or the failure, for a job ended from outside).
    const done = await terminalOf(handle);
    try {
      const last = await handle.query(snapshotQuery, live.lastSeq);
      await followAgents(handle, live, last);
      // The last look: an agent's ending that no look at its job confirmed is told anyway.
      live.finalLook = true;
      live.onSnapshot(last);
    } catch {
      // The final events are a courtesy; the Terminal below is what counts.
    }
    return done;
  } finally {
    asking?.controller.abort();
    listener.close?.();
  }
}

/** How long a subagent's job is given to answer a look at its events. */
const AGENT_EVENTS_MS = 10_000;

/**
 * Takes in what the job's subagents did since the last look, from their own jobs, so that the
 * follower passes it on among the job's events. An agent's job that does not answer in time is
 * looked at again next time: its ending is held back until a look after it ended succeeded (or
 * the job itself ended).
 */
async function followAgents(handle: JobHandle, live: LiveFollower, snapshot: SessionSnapshot): Promise<void> {
  await Promise.all(
    live.agentsToFollow(snapshot).map(async ({ toolUseId, jobId }) => {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), AGENT_EVENTS_MS);
      try {
        const child = await handle.client.withAbortSignal(controller.signal, () =>
          handle.client.getHandle(jobId).query(snapshotQuery, live.agentSeq.get(toolUseId) ?? 0),
        );
        live.onAgentSnapshot(toolUseId, child);
      } catch {
        // Not started yet, or no worker answered: next time.
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

/** Put one pending call to the approver and send its answer; withdrawn when answered elsewhere. */
function ask(
  handle: JobHandle,
  pending: PendingApproval,
  approver: Approver,
  onSettled: () => void,
): { toolUseId: string; controller: AbortController } {
  const controller = new AbortController();
  void approver(pending, controller.signal)
    .then(async (answer) => {
      const choice = typeof answer === 'string' ? answer : answer.decision;
      if (controller.signal.aborted || choice === 'skip') return;
      await handle.client.getHandle(approvalTarget(pending, handle.workflowId)).signal(approvalSignal, {
        toolUseId: pending.toolUseId,
        decision: choice === 'deny' ? 'deny' : 'allow',
        always: choice === 'always',
        ...(typeof answer !== 'string' && answer.decision === 'allow' ? { updatedInput: answer.updatedInput } : {}),
        ...(choice === 'deny'
          ? {
              reason:
                typeof answer !== 'string' && answer.decision === 'deny' ? answer.reason : 'denied at the terminal',
            }
          : {}),
      });
    })
    .catch(() => undefined)
    .finally(onSettled);
  return { toolUseId: pending.toolUseId, controller };
}
