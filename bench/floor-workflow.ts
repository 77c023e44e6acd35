import { proxyActivities } from '@temporalio/workflow';
import type { FloorActivities, Span } from './floor-activities';

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

/**
 * The saturation floor (`saturation.ts`): a session of `turns` tool turns and an answer, shaped
 * as the scripted sessions are. Each turn's "model call" waits out `latencyMs`, its "tool" does
 * nothing; no heartbeats, eager dispatch allowed: the least Temporal can cost for such a session.
 * Returns each call's times, from which the bench works out the overhead between turns.
 */
export async function floorSession(turns: number, latencyMs: number): Promise<Array<{ model: Span; tool?: Span }>> {
  const { floorModelWait } = proxyActivities<Pick<FloorActivities, 'floorModelWait'>>({
    startToCloseTimeout: 15 * 60_000,
  });
  const spans: Array<{ model: Span; tool?: Span }> = [];
  for (let turn = 0; turn < turns; turn++) {
    const model = await floorModelWait(latencyMs);
    const { floorToolSpan } = proxyActivities<Pick<FloorActivities, 'floorToolSpan'>>({
      activityId: `tool-${turn}`,
      startToCloseTimeout: 20 * 60_000,
    });
    spans.push({ model, tool: await floorToolSpan() });
  }
  spans.push({ model: await floorModelWait(latencyMs) });
  return spans;
}
