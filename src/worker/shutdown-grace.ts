import { BASH_MAX_TIMEOUT_MS } from '../shared/tools/bash';

/**
 * How long a worker told to stop (SIGTERM, SIGINT) lets its running tools finish before it
 * cancels them: the longest a Bash may run, and a minute to store its result and report it.
 */
export const DEFAULT_SHUTDOWN_GRACE_MS = BASH_MAX_TIMEOUT_MS + 60_000;

/**
 * After the grace time the worker cancels what still runs; a tool that does not stop within this
 * much more time is abandoned and the worker exits with an error.
 */
export const SHUTDOWN_FORCE_MARGIN_MS = 30_000;

export const SHUTDOWN_GRACE_VAR = 'DURABLE_AGENT_SHUTDOWN_GRACE';

const UNIT_MS = { s: 1_000, m: 60_000, h: 60 * 60_000 } as const;

/** A bad `DURABLE_AGENT_SHUTDOWN_GRACE`: said in one line, without a stack trace. */
export class ShutdownGraceError extends Error {
  override name = 'ShutdownGraceError';
}

/**
 * The worker's shutdown grace time from `DURABLE_AGENT_SHUTDOWN_GRACE` (`90s`, `15m`, `1h`; `0s`
 * cancels running tools at once), else {@link DEFAULT_SHUTDOWN_GRACE_MS}.
 */
export function shutdownGraceFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env[SHUTDOWN_GRACE_VAR];
  if (raw === undefined || raw.trim() === '') return DEFAULT_SHUTDOWN_GRACE_MS;
  const match = /^(\d+)\s*([smh])$/.exec(raw.trim());
  const ms = match?.[1] && match[2] ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : NaN;
  if (!Number.isSafeInteger(ms) || ms > 24 * UNIT_MS.h) {
    throw new ShutdownGraceError(
      `${SHUTDOWN_GRACE_VAR}=${JSON.stringify(raw)} is not a duration: use a whole number followed by s, m or h, ` +
        `at most 24h (e.g. 15m; the default is ${DEFAULT_SHUTDOWN_GRACE_MS / 60_000}m, the Bash maximum and a minute).`,
    );
  }
  return ms;
}

/** `660000` as `11m`, `90000` as `90s`: how the worker names its grace time. */
export function formatGrace(ms: number): string {
  for (const unit of ['h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms / 1000}s`;
}
