import { WorkflowFailedError, defaultPayloadConverter } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { InvalidArgumentError } from 'commander';
import type { CallModelResult } from '../shared/activity-types';
import type { Usage } from '../shared/messages';
import type { SessionInput } from '../shared/session';
import type { Terminal } from '../shared/terminal';
import { terminalOf } from './job-terminal';

/** A job that ended with a Terminal, and what its history says about it. */
export interface FinishedJob {
  terminal: Terminal;
  /** The input of its latest run (continue-as-new keeps workspace and model). */
  input: Partial<SessionInput>;
  startTime: Date;
  closeTime: Date | undefined;
}

/**
 * A finished job's Terminal and input, or a clear refusal: still running (use `send`), or ended
 * from outside without a Terminal. An unknown id fails with Temporal's own not-found error, which
 * the CLI explains. `runId`: that run of the id (the last of its chain) instead of the latest.
 */
export async function finishedJob(client: Client, id: string, what: string, runId?: string): Promise<FinishedJob> {
  const handle = client.workflow.getHandle(id, runId);
  const description = await handle.describe();
  const status = description.status.name;
  if (status === 'RUNNING' || status === 'CONTINUED_AS_NEW') {
    throw new InvalidArgumentError(
      `job ${id} is still running, so there is no finished conversation to ${what}: send it more with ` +
        `\`durable-agent send ${id} "<text>"\` (it joins at the next turn), or wait for its end with \`durable-agent result ${id}\`.`,
    );
  }
  let terminal: Terminal;
  try {
    terminal = await terminalOf(handle);
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    throw new InvalidArgumentError(
      `job ${id} was ${status.toLowerCase()} from outside and has no Terminal, so there is no finished conversation to ${what}.`,
    );
  }
  const history = await handle.fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  let input: Partial<SessionInput> = {};
  try {
    if (payload) input = defaultPayloadConverter.fromPayload<Partial<SessionInput>>(payload as Payload);
  } catch {
    // An input this version cannot read: the caller falls back to what it has.
  }
  return { terminal, input, startTime: description.startTime, closeTime: description.closeTime };
}

/** What the history says about one model reply, keyed by the transcript segment that holds it. */
export interface ReplyFacts {
  model: string;
  usage: Usage;
  stopReason: string | null;
  /** When the call completed. */
  at: Date | undefined;
}

/**
 * The replies of every run of a job, from the results of its `callModel` activities: each names
 * the segment its reply was written to, with the call's model and usage. `lastRun`: the chain that
 * ends in that run instead of the latest one.
 */
export async function replyFacts(client: Client, id: string, lastRun?: string): Promise<Map<string, ReplyFacts>> {
  const facts = new Map<string, ReplyFacts>();
  let runId: string | undefined = lastRun;
  for (let runs = 0; runs < 1_000; runs++) {
    const history = await client.workflow.getHandle(id, runId).fetchHistory();
    const activityTypes = new Map<string, string>();
    let previousRun: string | undefined;
    for (const event of history.events ?? []) {
      const started = event.workflowExecutionStartedEventAttributes;
      if (started?.continuedExecutionRunId) previousRun = started.continuedExecutionRunId;
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name) activityTypes.set(String(event.eventId), scheduled.activityType.name);
      const completed = event.activityTaskCompletedEventAttributes;
      if (!completed || activityTypes.get(String(completed.scheduledEventId)) !== 'callModel') continue;
      const payload = completed.result?.payloads?.[0];
      if (!payload) continue;
      try {
        const result = defaultPayloadConverter.fromPayload<CallModelResult>(payload as Payload);
        const head = result.transcript?.head;
        if (!head || head === result.transcriptBeforeReply?.head) continue;
        facts.set(head, {
          model: result.model,
          usage: result.usage,
          stopReason: result.stopReason ?? null,
          at: eventTime(event.eventTime),
        });
      } catch {
        // A result this version cannot read adds nothing; the message is exported without it.
      }
    }
    if (!previousRun) break;
    runId = previousRun;
  }
  return facts;
}

function eventTime(time: { seconds?: unknown; nanos?: number | null } | null | undefined): Date | undefined {
  if (!time?.seconds) return undefined;
  return new Date(Number(time.seconds) * 1000 + Math.floor((time.nanos ?? 0) / 1e6));
}
