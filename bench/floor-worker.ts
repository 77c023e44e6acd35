/**
 * The saturation floor's worker process (`saturation.ts`): the floor workflows and activities on
 * one task queue, with as many activity slots as sessions, so it waits for nothing but the CPU.
 *
 *   node -r ts-node/register/transpile-only bench/floor-worker.ts <address> <task queue> <bundle> <slots>
 *
 * Prints "floor worker polling" once it runs; SIGTERM shuts it down.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { createFloorActivities } from './floor-activities';

async function main(): Promise<void> {
  const [address, taskQueue, codePath, slots] = process.argv.slice(2);
  if (!address || !taskQueue || !codePath || !slots) {
    throw new Error('usage: floor-worker.ts <address> <task queue> <workflow bundle> <activity slots>');
  }
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath },
    activities: createFloorActivities(),
    maxConcurrentActivityTaskExecutions: Number(slots),
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  console.log('floor worker polling');
  await running;
  await connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
