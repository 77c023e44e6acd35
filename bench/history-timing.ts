import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Milliseconds per phase of a run, read from its event history: phase name -> one sample per occurrence. */
export type PhaseSamples = Map<string, number[]>;

export const WORKFLOW_TASK_WAIT = 'workflow task, scheduled -> started';
export const WORKFLOW_TASK_RUN = 'workflow task, started -> completed';

/**
 * Where a run's time went, as the server recorded it: for every workflow task and activity, the
 * wait (scheduled -> started: matching, polls) and the run (started -> completed: the worker's
 * side, including the round trips to and from it). Server timestamps, so the client's own work
 * and the bench's model server are not in it; many samples per run, so it is steadier than a
 * run's total time.
 */
export function historyTiming(history: temporal.api.history.v1.IHistory): PhaseSamples {
  const events = history.events ?? [];
  const byId = new Map<number, HistoryEvent>();
  for (const event of events) byId.set(Number(event.eventId), event);
  const samples: PhaseSamples = new Map();
  const add = (phase: string, from: HistoryEvent | undefined, to: HistoryEvent) => {
    if (!from) return;
    const list = samples.get(phase) ?? [];
    list.push(millis(to) - millis(from));
    samples.set(phase, list);
  };
  const activityType = (scheduledId: unknown) =>
    byId.get(Number(scheduledId))?.activityTaskScheduledEventAttributes?.activityType?.name ?? 'unknown';
  for (const event of events) {
    const wftStarted = event.workflowTaskStartedEventAttributes;
    if (wftStarted) add(WORKFLOW_TASK_WAIT, byId.get(Number(wftStarted.scheduledEventId)), event);
    const wftCompleted = event.workflowTaskCompletedEventAttributes;
    if (wftCompleted) add(WORKFLOW_TASK_RUN, byId.get(Number(wftCompleted.startedEventId)), event);
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const type = activityType(started.scheduledEventId);
      add(`activity ${type}, scheduled -> started`, byId.get(Number(started.scheduledEventId)), event);
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const type = activityType(completed.scheduledEventId);
      add(`activity ${type}, started -> completed`, byId.get(Number(completed.startedEventId)), event);
    }
  }
  return samples;
}

/** All runs' samples together, phase by phase. */
export function mergeTimings(timings: PhaseSamples[]): PhaseSamples {
  const merged: PhaseSamples = new Map();
  for (const timing of timings)
    for (const [phase, values] of timing) merged.set(phase, [...(merged.get(phase) ?? []), ...values]);
  return merged;
}

export function mean(values: number[]): number {
  return values.length === 0 ? NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}

function millis(event: HistoryEvent): number {
  const time = event.eventTime;
  if (!time) return NaN;
  return Number(time.seconds ?? 0) * 1000 + (time.nanos ?? 0) / 1e6;
}
