#!/usr/bin/env bash
# One agent task as a CI step runs it: start the job on the runner's embedded Temporal server,
# wait for its end, write the json result and the exported transcript, exit with the job's status.
# examples/github-actions/agent-task.yml calls it; test/ci-example.test.ts runs it here.
#
#   PROMPT          what the agent should do (required)
#   WORKSPACE       the repository it works in (default: the current directory)
#   TEST_COMMAND    a --stop-hook: run when the agent wants to stop; a failing exit sends it back
#   MAX_TURNS       default 30
#   MAX_BUDGET_USD  optional: the job ends budget_exhausted once this is spent
#   OUTPUT_DIR      where result.json and transcript.jsonl go (default ./agent-output)
#   JOB_ID          default ci-<run id>-<attempt>: a re-run attempt starts a new job, while a
#                   retried step of the same attempt attaches to the job already running
#   ALLOWED_TOOLS   what the agent may do unasked (claude -p's --allowedTools); a pipeline asks nobody,
#                   so anything else that is not read-only is refused. Default: edit files, run npm test
#   DURABLE_AGENT   the command (default durable-agent), e.g. "node /opt/durable-agent/bin/durable-agent.js"
#
# Exit status: the job's (0 completed, 2 max_turns, 3 aborted, 4 budget_exhausted, 5 ended from
# outside, 1 other endings or no job at all).
set -euo pipefail

: "${PROMPT:?set PROMPT to what the agent should do}"
if [[ -z "${ANTHROPIC_API_KEY:-}${ANTHROPIC_AUTH_TOKEN:-}" ]]; then
  echo "run-agent-task: ANTHROPIC_API_KEY is not set (in GitHub Actions: the ANTHROPIC_API_KEY secret; forks get no secrets)" >&2
  exit 1
fi
WORKSPACE="${WORKSPACE:-$PWD}"
OUTPUT_DIR="${OUTPUT_DIR:-$PWD/agent-output}"
JOB_ID="${JOB_ID:-ci-${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-1}}"
read -r -a agent <<<"${DURABLE_AGENT:-durable-agent}"
# A pipeline: the permission mode defaults to dontAsk and the workspace's settings files may only
# add deny and ask rules (GitHub Actions sets CI=true itself).
export CI="${CI:-true}"

mkdir -p "$OUTPUT_DIR"
args=(run --cwd "$WORKSPACE" --job-id "$JOB_ID" --output-format json --max-turns "${MAX_TURNS:-30}" --exit-status detailed)
if [[ -n "${MAX_BUDGET_USD:-}" ]]; then args+=(--max-budget-usd "$MAX_BUDGET_USD"); fi
if [[ -n "${TEST_COMMAND:-}" ]]; then args+=(--stop-hook "$TEST_COMMAND"); fi
args+=(--allowedTools "${ALLOWED_TOOLS:-Edit Write MultiEdit Bash(npm test:*)}")

status=0
# The prompt goes through stdin, so no quoting of the user's text can break the command line.
printf '%s' "$PROMPT" | "${agent[@]}" "${args[@]}" >"$OUTPUT_DIR/result.json" || status=$?

if ! "${agent[@]}" export "$JOB_ID" --output "$OUTPUT_DIR/transcript.jsonl"; then
  echo "run-agent-task: the transcript of $JOB_ID could not be exported" >&2
fi

# One line for the log, and the answer for the run's summary page when there is one.
if [[ -s "$OUTPUT_DIR/result.json" ]]; then
  node - "$OUTPUT_DIR/result.json" "${GITHUB_STEP_SUMMARY:-}" <<'NODE' || true
const fs = require('node:fs');
const [file, summary] = process.argv.slice(2);
let result;
try {
  result = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch {
  console.error(`run-agent-task: ${file} is not a json result`);
  process.exit(0);
}
const cost = typeof result.total_cost_usd === 'number' ? `$${result.total_cost_usd.toFixed(4)}` : 'cost unknown';
console.error(`run-agent-task: ${result.job_id} ${result.terminal_reason} after ${result.num_turns} turns, ${cost}`);
if (summary) {
  fs.appendFileSync(summary, `### ${result.job_id}: ${result.terminal_reason} (${result.num_turns} turns, ${cost})\n\n${result.result || result.detail || ''}\n`);
}
NODE
else
  echo "run-agent-task: no result (durable-agent exited $status before the job ended; see above)" >&2
fi

# The runner is thrown away, but a self-hosted one is not: leave no server or worker behind.
"${agent[@]}" stop >/dev/null 2>&1 || true
exit "$status"
