import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { TERMINAL_REASONS } from '../shared/terminal';
import { TASKS_NOT_COMPLETED } from '../shared/terminal-failure';

/**
 * What the SDK logs that nobody acting on a worker needs: its state changes, and that a worker of
 * model calls or of one host's tools has no workflows (by design, `create-worker.ts`) and that no
 * Nexus services are registered (none are).
 */
const ROUTINE = [/^No workflows registered/, /^No Nexus services registered/, /^Worker state changed/];

/**
 * The SDK's log as a person reads it: warnings and errors only, one line each, `prefix` first;
 * routine lines dropped. Installed once per process, before any connection; a second call (a
 * runtime already installed) changes nothing.
 */
export function installQuietRuntime(prefix: string): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN', (entry) => printEntry(prefix, entry)) });
  } catch {
    // A runtime is installed already: its logger stays.
  }
}

/**
 * A job or batch that did not complete fails its workflow on purpose, with its Terminal in the
 * failure (the UI's Status column shows it): that is how it ends, not something wrong with the
 * worker. Any other workflow failure is still a warning.
 */
function endedWithTerminal(entry: LogEntry, meta: Record<string, unknown>): boolean {
  if (entry.message !== 'Workflow failed' || !(meta.error instanceof Error)) return false;
  // What reaches the logger is a plain Error made from the workflow's failure: its stack names the
  // failure's class, and its message is `terminalFailure`'s ("<reason>" or "<reason>: <detail>").
  const { message, stack } = meta.error;
  return stack?.startsWith('ApplicationFailure: ') === true && ENDINGS.has(message.split(':', 1)[0] ?? '');
}

/** The failure types of jobs and batches that ended with a Terminal (`terminalFailure`). */
const ENDINGS = new Set<string>([...TERMINAL_REASONS, 'aborted', TASKS_NOT_COMPLETED]);

function printEntry(prefix: string, entry: LogEntry): void {
  if (ROUTINE.some((pattern) => pattern.test(entry.message))) return;
  const meta = (entry.meta ?? {}) as Record<string, unknown>;
  if (endedWithTerminal(entry, meta)) return;
  const facts = ['activityType', 'workflowType', 'workflowId', 'attempt', 'taskQueue']
    .filter((key) => meta[key] !== undefined)
    .map((key) => `${key}=${String(meta[key])}`);
  const error = meta.error instanceof Error ? meta.error.message : typeof meta.error === 'string' ? meta.error : '';
  const detail = [error, ...facts].filter(Boolean).join(' ');
  console.error(`${prefix}: [${entry.level}] ${entry.message}${detail ? ` (${detail.replace(/\s+/g, ' ')})` : ''}`);
}
