/**
 * A job's event history across all its runs (continue-as-new), measured as Temporal stores it:
 * encoded protobuf bytes, per event, so the cumulative size can be read at any turn.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface RunHistory {
  runId: string;
  events: HistoryEvent[];
  /** `History.encode(history)` of this run. */
  bytes: number;
}

export interface JobHistory {
  runs: RunHistory[];
  /** All runs together. */
  bytes: number;
}

/** Every run of the job, from its first run along the continue-as-new chain. */
export async function fetchJobHistory(client: Client, workflowId: string, firstRunId: string): Promise<JobHistory> {
  const runs: RunHistory[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    runs.push({ runId, events, bytes: temporal.api.history.v1.History.encode(history).finish().length });
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return { runs, bytes: runs.reduce((sum, run) => sum + run.bytes, 0) };
}

function varintLength(value: number): number {
  let length = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    length++;
  }
  return length;
}

/** What one event adds to its run's encoded History: field tag, length prefix and the event. */
export function eventBytes(event: HistoryEvent): number {
  const length = temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
  return 1 + varintLength(length) + length;
}

/**
 * Cumulative history bytes at model call boundaries: `at(n)` is the size of every event (all runs)
 * before the (n+1)-th `callModel` activity was scheduled, i.e. what n model calls and the work
 * after them cost; past the last call it is the whole history. With no reactive compaction, model
 * call n is turn n.
 */
export function historyByModelCall(job: JobHistory): { calls: number; at(calls: number): number } {
  const before: number[] = [];
  let cumulative = 0;
  let check = 0;
  for (const run of job.runs) {
    let runBytes = 0;
    for (const event of run.events) {
      if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel') before.push(cumulative);
      const bytes = eventBytes(event);
      cumulative += bytes;
      runBytes += bytes;
    }
    check += runBytes;
    if (runBytes !== run.bytes) throw new Error(`bench: per-event sizes of run ${run.runId} do not add up`);
  }
  if (check !== job.bytes) throw new Error('bench: per-event sizes do not add up to the history');
  const calls = before.length;
  return { calls, at: (n) => (n < calls ? (before[n] ?? cumulative) : cumulative) };
}

/** Every payload an event carries, labelled by where it came from (as test/payload-size.test.ts). */
function payloadsOf(event: HistoryEvent, activityTypes: Map<string, string>): Array<{ where: string; bytes: number }> {
  const scheduled = event.activityTaskScheduledEventAttributes;
  const completed = event.activityTaskCompletedEventAttributes;
  const groups: Array<[string, temporal.api.common.v1.IPayloads | null | undefined]> = [
    ['start input', event.workflowExecutionStartedEventAttributes?.input],
    [`${scheduled?.activityType?.name} input`, scheduled?.input],
    [`${activityTypes.get(String(completed?.scheduledEventId ?? '')) ?? 'activity'} result`, completed?.result],
    ['continue-as-new input', event.workflowExecutionContinuedAsNewEventAttributes?.input],
    ['workflow result', event.workflowExecutionCompletedEventAttributes?.result],
    [
      `signal ${event.workflowExecutionSignaledEventAttributes?.signalName}`,
      event.workflowExecutionSignaledEventAttributes?.input,
    ],
  ];
  return groups.flatMap(([where, payloads]) =>
    (payloads?.payloads ?? []).map((payload) => ({ where, bytes: payload.data?.length ?? 0 })),
  );
}

/** The largest payloads in any run of the job, largest first. */
export function largestPayloads(job: JobHistory, count = 3): Array<{ where: string; bytes: number; run: number }> {
  const all: Array<{ where: string; bytes: number; run: number }> = [];
  job.runs.forEach((run, index) => {
    const activityTypes = new Map<string, string>();
    for (const event of run.events) {
      const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
      if (name) activityTypes.set(String(event.eventId), name);
      for (const payload of payloadsOf(event, activityTypes)) all.push({ ...payload, run: index + 1 });
    }
  });
  return all.sort((a, b) => b.bytes - a.bytes).slice(0, count);
}

/** The name of an event's type, e.g. `workflow_task_started`. */
function eventTypeName(event: HistoryEvent): string {
  const name = event.eventType != null ? temporal.api.enums.v1.EventType[event.eventType] : undefined;
  return (name ?? 'other').replace(/^EVENT_TYPE_/, '').toLowerCase();
}

/** Bytes of the job's history by event: activity events per activity type (`callModel scheduled`), the rest by event type. */
export function historyBreakdown(job: JobHistory): Array<{ what: string; bytes: number }> {
  const totals = new Map<string, number>();
  for (const run of job.runs) {
    const activityTypes = new Map<string, string>();
    for (const event of run.events) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      const completed = event.activityTaskCompletedEventAttributes;
      if (scheduled?.activityType?.name) activityTypes.set(String(event.eventId), scheduled.activityType.name);
      const what = scheduled
        ? `${scheduled.activityType?.name} scheduled`
        : completed
          ? `${activityTypes.get(String(completed.scheduledEventId ?? '')) ?? 'activity'} completed`
          : eventTypeName(event);
      totals.set(what, (totals.get(what) ?? 0) + eventBytes(event));
    }
  }
  return [...totals.entries()].map(([what, bytes]) => ({ what, bytes })).sort((a, b) => b.bytes - a.bytes);
}
