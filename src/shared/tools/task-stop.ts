import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { lazySchema } from '../lazy-schema';
import { textField } from './schema-parts';

const taskStopSchema = lazySchema(() =>
  z.strictObject({
    task_id: textField('The ID of the background task to stop', 200).optional(),
    shell_id: textField('Deprecated: use task_id', 200).optional(),
  }),
);

export type TaskStopInput = z.infer<typeof taskStopSchema>;

/**
 * TaskStop ends a background command of the job (Bash with `run_in_background`). Answered by the
 * workflow, which holds the command's activity: cancelling it stops the command's process group.
 */
export const taskStopTool: ToolDefinition<TaskStopInput> = {
  name: 'TaskStop',
  description:
    'Stop a running background task by its ID (the one a background Bash call returned). Its processes are ' +
    'killed; no completion notice follows. Its output so far stays in its output file.',
  inputSchema: taskStopSchema,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
};
