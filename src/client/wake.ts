import type { Client } from '@temporalio/client';
import { snapshotQuery, wakeSignal } from '../workflows/definitions';
import { signalJob } from './signal-job';

/**
 * Wake job `id` from the wake-up it sleeps on. Its state is asked first, so a job that is not
 * sleeping, or has ended, gets a clear answer instead of a signal that changes nothing.
 */
export async function wakeJob(client: Client, id: string): Promise<string> {
  const handle = client.workflow.getHandle(id);
  const snapshot = await handle.query(snapshotQuery, Number.MAX_SAFE_INTEGER);
  if (snapshot.terminal) {
    throw new Error(`Job ${id} has ended (${snapshot.terminal.reason}); it has no wake-up to fire.`);
  }
  // Without a wake-up, the scheduled prompt (CronCreate) due first is what fires.
  const scheduled = snapshot.wakeup
    ? undefined
    : [...(snapshot.crons ?? [])].sort((a, b) => a.nextAt.localeCompare(b.nextAt))[0];
  if (!snapshot.wakeup && !scheduled) {
    throw new Error(
      `Job ${id} has no wake-up pending (phase: ${snapshot.phase}); it wakes only from one it scheduled with ` +
        'ScheduleWakeup or CronCreate.',
    );
  }
  const ended = await signalJob(
    client,
    id,
    (target) => target.signal(wakeSignal),
    (ending) => ({ refuse: `Job ${id} has ended (${ending}); it has no wake-up to fire.` }),
  );
  if (ended) return ended;
  if (scheduled) {
    const next = `${scheduled.nextAt.slice(0, 16).replace('T', ' ')} UTC`;
    return snapshot.phase === 'sleeping'
      ? `woke ${id}: its scheduled job ${scheduled.id} (next run ${next}) fires now with: ${scheduled.prompt.slice(0, 200)}`
      : `wake sent to ${id}: its scheduled job ${scheduled.id} fires as soon as the current turn ends`;
  }
  const wakeup = snapshot.wakeup as NonNullable<typeof snapshot.wakeup>;
  const at = `${wakeup.at.slice(0, 19).replace('T', ' ')} UTC`;
  return snapshot.phase === 'sleeping'
    ? `woke ${id} (its wake-up was set for ${at}); it goes on with: ${wakeup.prompt.slice(0, 200)}`
    : `wake sent to ${id}: its wake-up (set for ${at}) fires as soon as the current turn ends`;
}
