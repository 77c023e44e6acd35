import type { ReadFileStates } from '../../shared/file-state';
import type { JobSandbox } from '../../shared/sandbox';
import type { SandboxEngine } from '../sandbox/engine';

/** What a tool implementation gets besides its input. */
export interface ToolContext {
  /** Workspace root: absolute and realpath'd. Every path a tool touches must lie inside it. */
  workspace: string;
  /** Aborted when the activity is cancelled; tools stop their work and reject with an AbortError. */
  signal: AbortSignal;
  /** Called while a long tool runs so the activity's heartbeat timeout does not expire. */
  heartbeat: (details?: unknown) => void;
  /**
   * Environment for Bash, already free of credentials; `buildToolEnv(process.env)` when absent.
   * Bash adds `TMPDIR` (the job's private temp folder) and the git hardening variables.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * How Bash is confined: the worker's sandbox and the job's policy. Every caller outside the
   * tests passes one (`runTool`, and the one-shot `durable-agent tool` call); without one, Bash
   * runs its command unconfined, which is what the tests of Bash's own behaviour use.
   */
  sandbox?: { engine: SandboxEngine; policy: JobSandbox };
  /** The job the call belongs to; its private temp folder is keyed by it. */
  sessionKey?: string;
  /** Told, once a command has started, whether it runs in the sandbox. */
  onCommandStart?: (facts: { sandboxed: boolean }) => void;
  /**
   * The session's knowledge of the files this call touches, keyed by `fileStateKey(workspace,
   * file_path)`: at least the keys `fileStateKeysFor` names. Write and Edit refuse a file missing
   * here or changed on disk since.
   */
  readState: ReadFileStates;
  /**
   * The job's `Read(...)` deny rules (Claude Code syntax; the workflow has already applied them to
   * the path the model wrote). Read, Grep and Glob apply them again to what they really touch:
   * the real path behind a symlink, every file a search comes across. Empty when there are none.
   */
  readDenyRules: string[];
}
