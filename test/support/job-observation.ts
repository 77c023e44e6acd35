/**
 * What tests of real worker processes look at: the text the model was sent last, and the
 * processes a job left running.
 */
import { execFileSync } from 'node:child_process';

/** The text of the last message of a recorded request: its text blocks and tool results, joined. */
export function lastUserText(request: { body: unknown }): string {
  const messages = (request.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  const content = messages.at(-1)!.content as Array<{ type: string; text?: string; content?: unknown }> | string;
  if (typeof content === 'string') return content;
  return content
    .map((block) => block.text ?? (typeof block.content === 'string' ? block.content : JSON.stringify(block.content)))
    .join('\n');
}

/** Lines of `ps` for the processes whose command line holds `tag` (a test's own marker). */
export function processesWith(tag: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(tag) && !line.includes('ps -eo'));
}

/** What the server says of a job's execution (`describeWorkflowExecution`), on a connection of its own. */
export async function describeExecution(address: string, workflowId: string, namespace = 'default') {
  const { Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address });
  try {
    return await connection.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId } });
  } finally {
    await connection.close();
  }
}
