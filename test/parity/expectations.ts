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
  writeDone:
    'Write: Claude Code ends "(file state is current in your context — no need to Read it back)"; durable-agent "(N lines)"',
  writeAbsolute:
    'Write: Claude Code echoes the path as given (absolute), durable-agent the workspace-relative one; and the ending differs',
  editDone:
    'Edit: Claude Code says "updated successfully. (file state is current …)"; durable-agent shows a cat -n snippet',
  grepCount: 'Grep count: "Found N total occurrences across M files." against durable-agent\'s "N matching lines"',
  grepSingleFile:
    'Grep content on one file: Claude Code leaves the file name out of each line (and its pagination note is shorter)',
  grepMissingParam: 'Grep: durable-agent has no `context` / `-o` parameter and refuses it',
  grepRegex: 'Grep with a bad regex: other wording around the same ripgrep message',
  bashExitCode: 'Bash failure: Claude Code puts "Exit code N" first, durable-agent last',
  bashTimeout: 'Bash timeout: Claude Code "Exit code 143\\nCommand timed out after 1s"; durable-agent its own sentence',
  bashLongOutput:
    'Bash long output: Claude Code keeps it in a file and shows a <persisted-output> preview; durable-agent cuts it inline',
  bashTimeoutMax: 'Bash timeout above the maximum: Claude Code clamps it silently; durable-agent refuses the call',
  bashBackground: 'Bash run_in_background: durable-agent has no background commands and refuses the parameter',
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
  'write-new-file': GAP.writeDone,
  'write-new-nested': GAP.writeDone,
  'write-existing-after-read': GAP.writeDone,
  'write-empty-content': GAP.writeDone,
  'write-absolute': GAP.writeAbsolute,
  'edit-after-read': GAP.editDone,
  'edit-replace-all': GAP.editDone,
  'edit-multiline': GAP.editDone,
  'edit-delete-text': GAP.editDone,
  'edit-absolute': GAP.editDone,
  'edit-crlf': GAP.editDone,
  'edit-create-empty-old': GAP.editDone,
  'grep-count': GAP.grepCount,
  'grep-count-glob': GAP.grepCount,
  'grep-A': GAP.grepSingleFile,
  'grep-B': GAP.grepSingleFile,
  'grep-C': GAP.grepSingleFile,
  'grep-head-limit': GAP.grepSingleFile,
  'grep-offset': GAP.grepSingleFile,
  'grep-path-file': GAP.grepSingleFile,
  'grep-context': GAP.grepMissingParam,
  'grep-invalid-regex': GAP.grepRegex,
  'bash-exit-42-with-output': GAP.bashExitCode,
  'bash-stderr-and-fail': GAP.bashExitCode,
  'bash-command-not-found': GAP.bashExitCode,
  'bash-timeout': GAP.bashTimeout,
  'bash-long-output': GAP.bashLongOutput,
  'bash-timeout-too-large': GAP.bashTimeoutMax,
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
