#!/usr/bin/env bash
# Make sure bubblewrap (`bwrap`, the OS sandbox the agent's Bash commands run in) is installed.
# Silent and instant when `bwrap` is already on PATH (or DURABLE_AGENT_BWRAP names an executable);
# otherwise installs Debian's `bubblewrap` package with apt-get (refreshing the package lists only
# if the first attempt fails), using sudo only when not root.
#
# Unlike ripgrep, a missing bubblewrap does not fail the setup: without it the worker says so at
# start and Bash refuses to run for jobs that require the sandbox, and a job can still opt out
# (--no-sandbox). So this warns and exits 0 when it cannot install.
set -euo pipefail

log() { printf '[install-bubblewrap] %s\n' "$*" >&2; }

if [[ -n "${DURABLE_AGENT_BWRAP:-}" && -x "${DURABLE_AGENT_BWRAP}" ]] || command -v bwrap >/dev/null 2>&1; then
  exit 0
fi

HINT="Install bubblewrap yourself (e.g. 'apt-get install bubblewrap', 'dnf install bubblewrap', 'pacman -S bubblewrap') so that 'bwrap' is on PATH; until then jobs need --no-sandbox to run Bash."

if ! command -v apt-get >/dev/null 2>&1; then
  log "WARNING: 'bwrap' is not on PATH and apt-get is not available to install it. $HINT"
  exit 0
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    log "WARNING: 'bwrap' is not on PATH, and installing it with apt-get needs root. $HINT"
    exit 0
  fi
fi

apt_get() { "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT

log "'bwrap' not found; installing Debian's bubblewrap package..."
if ! apt_get install -y -q --no-install-recommends bubblewrap >"$LOG" 2>&1; then
  log "apt-get install failed; running apt-get update and retrying..."
  if ! apt_get update -q >>"$LOG" 2>&1 || ! apt_get install -y -q --no-install-recommends bubblewrap >>"$LOG" 2>&1; then
    cat "$LOG" >&2
    log "WARNING: apt-get could not install bubblewrap (output above). $HINT"
    exit 0
  fi
fi

if ! command -v bwrap >/dev/null 2>&1; then
  log "WARNING: apt-get reported success but 'bwrap' is still not on PATH. $HINT"
  exit 0
fi
log "installed: $(bwrap --version)"
