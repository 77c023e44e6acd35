/**
 * Types of the permission engine. Everything in `src/shared/permissions` is pure (no Node
 * built-ins, no clock, no randomness) because the workflow bundle calls it.
 */

/** Claude Code's permission modes (`permissions.defaultMode` in settings.json). */
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** The three rule lists of `permissions` in settings.json, e.g. `Bash(npm test:*)`. */
export interface PermissionRules {
  allow: string[];
  ask: string[];
  deny: string[];
}

export interface PermissionContext {
  mode: PermissionMode;
  rules: PermissionRules;
  /** The project root: an absolute POSIX path. Relative tool paths resolve against it. */
  workspace: string;
  /** Needed by `~/...` rules; without it such rules never allow, and deny/ask rules ask instead. */
  homeDir?: string;
  /**
   * Further directories the session may read (and, in acceptEdits, edit) as it does the
   * workspace: Claude Code's `permissions.additionalDirectories` and `--add-dir`. Absolute POSIX
   * paths.
   */
  additionalDirectories?: string[];
  /**
   * The generation of the engine's Bash reading the job decides with (see
   * {@link PERMISSION_ENGINE}); absent means the newest. A job records its generation when it
   * starts and keeps it, so a replay decides every call as it was decided the first time.
   */
  engine?: number;
}

/**
 * The newest generation of the engine. 2: git's configuration (aliases, -c settings naming
 * programs, GIT_* variables), sourced files and what git prints from history count for Bash, and
 * acceptEdits asks before the file tools change the names the sandbox protects. 3: changing PATH
 * (`PATH=/usr/bin git fetch`, `export PATH=...`, `command -p`) on a command line that runs git
 * counts too: it finds git around the worker's shim, which refuses a repository's config programs.
 */
export const PERMISSION_ENGINE = 3;

/** Whether a job deciding with `engine` reads Bash as generation `since` and later do. */
export function engineAtLeast(engine: number | undefined, since: number): boolean {
  return (engine ?? PERMISSION_ENGINE) >= since;
}

export type PermissionDecision =
  | { behavior: 'allow'; reason: string; rule?: string }
  | { behavior: 'deny'; reason: string; rule?: string }
  | { behavior: 'ask'; reason: string; rule?: string };

export type RuleList = keyof PermissionRules;

/** Where a path rule's pattern is anchored. */
export type PathAnchor = 'root' | 'home' | 'workspace';

export interface PathPattern {
  anchor: PathAnchor;
  /** Leading `..` segments, applied to the anchor directory. */
  up: number;
  /** Gitignore-style segments (`*`, `?`, `**`, `\x` escapes); empty means the anchor itself. */
  segments: string[];
}

/** A permission rule after parsing. `text` is the rule as written (trimmed). */
export type ParsedRule =
  /** `Bash`, `Read`, `Edit`, `Bash(*)`, ...: every call of the tool (or tool family). */
  | { kind: 'tool'; text: string; tool: string }
  /** `Bash(npm test)`: exactly this command. */
  | { kind: 'bash-exact'; text: string; tool: 'Bash'; command: string }
  /** `Bash(npm test:*)`: the command equals the prefix or starts with prefix + space. */
  | { kind: 'bash-prefix'; text: string; tool: 'Bash'; prefix: string }
  /** `Bash(git commit *)`: a glob over the whole command, `*` matching anything. */
  | {
      kind: 'bash-wildcard';
      text: string;
      tool: 'Bash';
      /** The pattern with `\*` (a literal star) and `\\` (a backslash) escapes kept. */
      pattern: string;
      /** `Bash(ls *)` also matches plain `ls`: a trailing ` *` (the only wildcard, or from `:*`) may match nothing. */
      optionalTail: boolean;
    }
  /** `Read(./secrets/**)`, `Edit(src/**)`: a gitignore-style path pattern. */
  | { kind: 'path'; text: string; tool: 'Read' | 'Edit'; pattern: PathPattern }
  /**
   * A specifier for a Claude Code tool this project does not have (`WebFetch(domain:x)`,
   * `mcp__...`). Kept so a shared settings file loads; it is never evaluated.
   */
  | { kind: 'other'; text: string; tool: string; specifier: string };
