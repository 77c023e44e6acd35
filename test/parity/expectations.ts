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
  readLastLine:
    'Read: Claude Code numbers the empty line after a final newline ("3\\t"); durable-agent stops at the last line',
  readContinuation:
    'Read: durable-agent adds "(Showing lines a-b. The file has more lines: …)"; Claude Code adds nothing',
  readReminder: 'Read: other <system-reminder> wording (and Claude Code counts the empty last line: 61 lines)',
  readLongLine: 'Read: durable-agent cuts a line at 2,000 characters; Claude Code 2.1.332 shows it whole',
  readDirectory: "Read of a directory: Claude Code passes on Node's EISDIR message; durable-agent explains",
  missingFile:
    'a missing file: Claude Code adds "Note: your current working directory is <ws>."; durable-agent names the file and suggests a near one',
  missingDir: 'a missing path: Claude Code adds "Note: your current working directory is <ws>."',
  validation:
    'invalid input: Claude Code says "<tool_use_error>InputValidationError: X failed due to the following issue: The required parameter `f` is missing" (or "type is expected as"); durable-agent words it after zod',
  editError:
    'Edit errors: Claude Code wraps them in <tool_use_error>…</tool_use_error>, and the wording differs a little',
  editCreate:
    'Edit with an empty old_string on a new file: Claude Code creates the file; durable-agent refuses (use Write)',
  grepCount:
    'Grep count: Claude Code says "Found N total occurrences", but N counts matching lines (rg -c), so a line with two matches counts once; durable-agent says "N matching lines"',
  rgVersion:
    "Grep with a bad regex: ripgrep 13 quotes the pattern as given, Claude Code's ripgrep 14 as the (?:…) group it built; the same words with ripgrep 14 on the worker",
  bashExitCode: 'Bash failure: Claude Code puts "Exit code N" first, durable-agent last',
  bashTimeout: 'Bash timeout: Claude Code "Exit code 143\\nCommand timed out after 1s"; durable-agent its own sentence',
  bashLongOutput:
    'Bash long output: Claude Code keeps it in a file and shows a <persisted-output> preview; durable-agent cuts it inline',
  bashTimeoutMax: 'Bash timeout above the maximum: Claude Code clamps it silently; durable-agent refuses the call',
  bashBackground: 'Bash run_in_background: durable-agent has no background commands and refuses the parameter',
  unknownTool:
    'an unknown tool: Claude Code "<tool_use_error>Error: No such tool available: X</tool_use_error>"; durable-agent lists its tools',
} as const;

export const KNOWN_GAPS: Record<string, string> = {
  'read-relative': GAP.readLastLine,
  'read-absolute': GAP.readLastLine,
  'read-offset': GAP.readLastLine,
  'read-crlf': GAP.readLastLine,
  'read-unicode': GAP.readLastLine,
  'read-twice': GAP.readLastLine,
  'read-long-line': GAP.readLongLine,
  'read-limit': GAP.readContinuation,
  'read-offset-limit': GAP.readContinuation,
  'read-offset-past-end': GAP.readReminder,
  'read-empty-file': GAP.readReminder,
  'read-directory': GAP.readDirectory,
  'read-missing-file': GAP.missingFile,
  'edit-missing-file': GAP.missingFile,
  'two-calls-one-reply': `${GAP.readLastLine}; ${GAP.missingFile}`,
  'glob-path-missing': GAP.missingDir,
  'grep-path-missing': GAP.missingDir,
  'read-missing-file_path': GAP.validation,
  'read-offset-wrong-type': GAP.validation,
  'write-missing-content': GAP.validation,
  'write-content-wrong-type': GAP.validation,
  'edit-missing-old_string': GAP.validation,
  'edit-replace_all-wrong-type': GAP.validation,
  'glob-missing-pattern': GAP.validation,
  'grep-missing-pattern': GAP.validation,
  'grep-wrong-mode': GAP.validation,
  'bash-missing-command': GAP.validation,
  'bash-timeout-wrong-type': GAP.validation,
  'edit-not-found': GAP.editError,
  'edit-not-unique': GAP.editError,
  'edit-replace-all-false': GAP.editError,
  'edit-same-strings': GAP.editError,
  'edit-create-empty-old': GAP.editCreate,
  'grep-count': GAP.grepCount,
  'grep-count-glob': GAP.grepCount,
  'grep-invalid-regex': GAP.rgVersion,
  'bash-exit-42-with-output': GAP.bashExitCode,
  'bash-stderr-and-fail': GAP.bashExitCode,
  'bash-command-not-found': GAP.bashExitCode,
  'bash-timeout': GAP.bashTimeout,
  'bash-long-output': GAP.bashLongOutput,
  'bash-timeout-too-large': GAP.bashTimeoutMax,
  'bash-run-in-background': GAP.bashBackground,
  'unknown-tool': GAP.unknownTool,
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
