import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';

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

function printEntry(prefix: string, entry: LogEntry): void {
  if (ROUTINE.some((pattern) => pattern.test(entry.message))) return;
  const meta = (entry.meta ?? {}) as Record<string, unknown>;
  const facts = ['activityType', 'workflowType', 'workflowId', 'attempt', 'taskQueue']
    .filter((key) => meta[key] !== undefined)
    .map((key) => `${key}=${String(meta[key])}`);
  const error = meta.error instanceof Error ? meta.error.message : typeof meta.error === 'string' ? meta.error : '';
  const detail = [error, ...facts].filter(Boolean).join(' ');
  console.error(`${prefix}: [${entry.level}] ${entry.message}${detail ? ` (${detail.replace(/\s+/g, ' ')})` : ''}`);
}
