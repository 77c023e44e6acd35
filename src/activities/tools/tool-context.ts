import type { ReadFileStates } from '../../shared/file-state';
import type { JobSandbox } from '../../shared/sandbox';
import type { SandboxEngine } from '../sandbox/engine';
import type { CommandFiles, CommandGroup } from './command-run';

/** What a Write or Edit is about to do to a file: told to the journal before the file is replaced. */
export interface PlannedFileChange {
  /** The file replaced (absolute, symlinks resolved). */
  path: string;
  /** SHA-256 (hex) of the file as it is; null when it does not exist. */
  before: string | null;
  /** SHA-256 (hex) of the content that replaces it. */
  after: string;
  /** The call's answer once the file holds the new content. */
  content: string;
  /** The session's read-state key of the file, and whether the session knows only part of it. */
  stateKey: string;
  partial: boolean;
}

/** What a tool implementation gets besides its input. */
export interface ToolContext {
  /** Workspace root: absolute and realpath'd. Every path a tool touches must lie inside it. */
  workspace: string;
  /** A Bash call run in the background: no Bash timeout applies (the job stops it when it ends). */
  background?: boolean;
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
   * A journaled Bash call: where its command's output and exit status go (beside the journal
   * entry, so a retry finds them), how the journal records its process group before the command
   * is let start, and whether this attempt still owns the call. Absent, Bash uses a temporary folder.
   */
  command?: {
    files: CommandFiles;
    record(group: CommandGroup): Promise<void>;
    stillOwner?(): Promise<boolean>;
  };
  /**
   * Puts each command's process group on record while this call supervises it (the worker's
   * group registry), so the next worker on the host can see that none is left running unwatched.
   * Resolves to what takes it off the record.
   */
  registerGroup?: (group: CommandGroup) => Promise<() => Promise<void>>;
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
  /**
   * The job has a Bash deny or ask rule: git (through the worker's shim) refuses to run in a
   * repository whose own config names a program for it to run, which such a rule cannot see.
   */
  gitGuard?: boolean;
  /**
   * The data directory's folder for this workspace (`workspaceHome`): large results are saved
   * there as well as in the workspace, so a read-only or wiped workspace loses none. Absent (the
   * one-shot `durable-agent tool` call, tests of one tool), results are saved in the workspace only.
   */
  dataHome?: string;
  /**
   * Called by Write and Edit right before they replace a file (atomically, by rename), so a retry
   * can tell from the file's hash whether the replacement happened. A rejection stops the call.
   */
  beforeFileChange?: (change: PlannedFileChange) => Promise<void>;
}
