import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { builtSchema, lazySchema } from '../lazy-schema';

const todoItemSchema = lazySchema(() =>
  z.strictObject({
    content: z.string().min(1).max(2_000).describe('What needs doing, in the imperative ("Run the tests")'),
    status: z.enum(['pending', 'in_progress', 'completed']).describe('Where the item stands'),
    activeForm: z
      .string()
      .min(1)
      .max(2_000)
      .describe('The item in the present continuous, shown while it runs ("Running the tests")'),
  }),
);

export type TodoItem = z.infer<typeof todoItemSchema>;

const todoWriteSchema = lazySchema(() =>
  z.strictObject({
    todos: z
      .array(builtSchema(todoItemSchema))
      .max(200)
      .describe('The whole updated list; it replaces the previous one'),
  }),
);

export type TodoWriteInput = z.infer<typeof todoWriteSchema>;

/**
 * TodoWrite keeps the model's task list. The list lives in the workflow's State (no activity runs),
 * so it survives crashes and continue-as-new and shows in `status`.
 */
export const todoWriteTool: ToolDefinition<TodoWriteInput> = {
  name: 'TodoWrite',
  description:
    'Create and update a structured task list for the current job. Send the whole list each time; mark ' +
    'exactly one item in_progress while working on it and mark items completed as soon as they are done.',
  inputSchema: todoWriteSchema,
  isConcurrencySafe: () => false,
  isReadOnly: () => true,
};

export const TODO_WRITE_RESULT =
  'Todos have been updated. Keep using the list to track progress, and carry on with the current task.';
