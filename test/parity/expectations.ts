/**
 * Where durable-agent tells the model something other than Claude Code does, scenario by scenario.
 *
 * INTENDED: durable-agent is stricter on purpose. The suite fails if one of these scenarios stops
 * differing (the strictness is gone) — keep this list to deliberate strictness only.
 * KNOWN_GAPS: differences not (yet) fixed. Allowed and reported; when one starts matching the suite
 * says so, and it should be taken off the list.
 * ONE_SIDED: a tool only one side has; not comparable, so left out of the count, and reported.
 * Any other difference fails the suite.
 */

/** Why each strictness exists, by kind; the scenarios below refer to these. */
export const STRICTNESS = {
  confinement:
    'workspace confinement: file tools refuse paths outside the workspace (a job runs unattended on a shared worker)',
  readBeforeWrite:
    'read-before-write: a file is changed only after this job has read it, so the model never overwrites what it has not seen',
  sandboxEnv:
    "the Bash sandbox's clean environment: the worker's credentials (ANTHROPIC_API_KEY and the like) are never in a command's environment",
  sandboxNetwork: 'the Bash sandbox has no network: a command cannot reach any host, the loopback included',
} as const;

export const INTENDED: Record<string, string> = {
  'read-outside-workspace': STRICTNESS.confinement,
  'write-outside-workspace': STRICTNESS.confinement,
  'edit-outside-workspace': STRICTNESS.confinement,
  'glob-outside-workspace': STRICTNESS.confinement,
  'grep-outside-workspace': STRICTNESS.confinement,
  'bash-credentials-in-env': STRICTNESS.sandboxEnv,
  'bash-network': STRICTNESS.sandboxNetwork,
  'edit-unread': STRICTNESS.readBeforeWrite,
  'write-existing-unread': STRICTNESS.readBeforeWrite,
};

/** Why each known gap differs, by cause; the scenarios below refer to these. */
const GAP = {
  grepCount:
    'Grep count: Claude Code says "Found N total occurrences", but N counts matching lines (rg -c), so a line with two matches counts once; durable-agent says "N matching lines"',
  rgVersion:
    "Grep with a bad regex: ripgrep 13 quotes the pattern as given, Claude Code's ripgrep 14 as the (?:…) group it built; the same words with ripgrep 14 on the worker",
  bashTimeout:
    'Bash timeout: Claude Code says "Exit code 143" (it sends SIGTERM first); durable-agent "Exit code 137", as it kills the command\'s processes with SIGKILL',
  bashLongFailure:
    'Bash failure with long output: Claude Code keeps the first 30,000 characters (and says nothing of the rest), then shows the first and last 5,000 of its result around "... [N characters truncated] ..."; durable-agent shows all 30,000 and says how many more there were',
  bashBackground: 'Bash run_in_background: durable-agent has no background commands and refuses the parameter',
} as const;

export const KNOWN_GAPS: Record<string, string> = {
  'grep-count': GAP.grepCount,
  'grep-count-glob': GAP.grepCount,
  'grep-invalid-regex': GAP.rgVersion,
  'bash-timeout': GAP.bashTimeout,
  'bash-long-output-fail': GAP.bashLongFailure,
  'bash-run-in-background': GAP.bashBackground,
};

const noTodoWrite =
  'Claude Code 2.1.332 has no TodoWrite under -p ("disabled for this session"); durable-agent offers it';
export const ONE_SIDED: Record<string, string> = {
  'todowrite-basic': noTodoWrite,
  'todowrite-empty': noTodoWrite,
  'todowrite-bad-status': noTodoWrite,
  multiedit: 'Claude Code 2.1.332 has no MultiEdit; durable-agent offers it',
  'notebookedit-replace': 'durable-agent has no NotebookEdit',
};

/**
 * Fields of Claude Code's json result object that report features of its own (fast mode, its
 * client-side latency telemetry, queued turns, subagents): not compared. Everything else in it is,
 * by presence, and by value where a value can match.
 */
export const CLAUDE_CODE_ONLY_RESULT_FIELDS: Record<string, string> = {
  fast_mode_state: 'fast mode, a Claude Code subscription feature',
  fast_mode_disabled_reason: 'fast mode, a Claude Code subscription feature',
  first_content_frame_ms: "Claude Code's client latency telemetry",
  ttft_ms: "Claude Code's client latency telemetry",
  ttft_stream_ms: "Claude Code's client latency telemetry",
  time_to_request_ms: "Claude Code's client latency telemetry",
  queued_turn_count: "Claude Code's interactive input queue",
  result_index: "Claude Code's multi-result sessions",
  subagent_stats: "Claude Code's subagents (the Agent tool)",
  safety_stops: "Claude Code's own safety stop counters",
};
