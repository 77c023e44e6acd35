import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { BatchSnapshot } from '../shared/batch';

/** A batch's job reports what it has cost so far (batches with a budget only). */
export const taskCostSignal = defineSignal<[report: { taskId: string; costUsd: number }]>('taskCost');

/** What `batch status` shows of a running batch. */
export const batchSnapshotQuery = defineQuery<BatchSnapshot>('batchSnapshot');
