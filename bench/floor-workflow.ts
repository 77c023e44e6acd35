import { proxyActivities } from '@temporalio/workflow';
import type { FloorActivities } from './floor-activities';

/**
 * The floor: what Temporal alone costs for the shape of an `agentSession` turn. Each iteration runs
 * the same number of activities as a turn (one model call, then one tool call), each empty.
 * Bundled on its own (`bundleWorkflowCode`) and run by its own worker.
 */
/**
 * `eager` false: no activity is handed back with the workflow task's completion (eager dispatch);
 * each waits for a poll, as the agent's do, whose model calls and tools are on other task queues
 * (`@model`, `@host`) than the workflow, which eager dispatch requires to be the same.
 */
export async function floorWorkflow(iterations: number, eager = true): Promise<number> {
  const { floorModelCall } = proxyActivities<Pick<FloorActivities, 'floorModelCall'>>({
    startToCloseTimeout: 15 * 60_000,
    heartbeatTimeout: 60_000,
    allowEagerDispatch: eager,
  });
  let completed = 0;
  for (let i = 0; i < iterations; i++) {
    await floorModelCall(i);
    // agentSession gives every tool call its own activity id; so does the floor.
    const { floorTool } = proxyActivities<Pick<FloorActivities, 'floorTool'>>({
      activityId: `tool-${i}`,
      startToCloseTimeout: 20 * 60_000,
      heartbeatTimeout: 30_000,
      allowEagerDispatch: eager,
    });
    await floorTool(i);
    completed++;
  }
  return completed;
}
