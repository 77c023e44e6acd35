import { temporal } from '@temporalio/proto';
import type { Client, WorkflowHandle } from '@temporalio/client';

/** Size of a workflow's history as Temporal stores it (encoded protobuf), in bytes. */
export async function historyBytes(handle: WorkflowHandle): Promise<number> {
  const history = await handle.fetchHistory();
  return temporal.api.history.v1.History.encode(history).finish().length;
}

/** One started attempt of an activity: its type, the queue it was scheduled on, the worker that ran it. */
export interface ActivityRun {
  type: string;
  queue: string;
  identity: string;
  attempt: number;
}

/** Every started activity attempt of a job's current run, in history order. */
export async function activityRuns(client: Client, workflowId: string): Promise<ActivityRun[]> {
  const EventType = temporal.api.enums.v1.EventType;
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const scheduled = new Map<number, { type: string; queue: string }>();
  const ran: ActivityRun[] = [];
  for (const event of events) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && attributes) {
      scheduled.set(Number(event.eventId), {
        type: attributes.activityType?.name ?? '',
        queue: attributes.taskQueue?.name ?? '',
      });
    }
    const started = event.activityTaskStartedEventAttributes;
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED && started) {
      const what = scheduled.get(Number(started.scheduledEventId));
      if (what) ran.push({ ...what, identity: started.identity ?? '', attempt: started.attempt ?? 1 });
    }
  }
  return ran;
}
