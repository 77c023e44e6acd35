/** What a tool implementation gets besides its input. */
export interface ToolContext {
  /** Workspace root: absolute and realpath'd. Every path a tool touches must lie inside it. */
  workspace: string;
  /** Aborted when the activity is cancelled; tools stop their work and reject with an AbortError. */
  signal: AbortSignal;
  /** Called while a long tool runs so the activity's heartbeat timeout does not expire. */
  heartbeat: (details?: unknown) => void;
  /** Environment for Bash; the caller strips secrets. Defaults to this process's environment minus secrets. */
  env?: NodeJS.ProcessEnv;
}
