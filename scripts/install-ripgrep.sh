#!/usr/bin/env bash
# Make sure ripgrep (`rg`, used by the agent's Grep/Glob tools) is installed.
# Silent and instant when `rg` is already on PATH; otherwise installs Debian's `ripgrep`
# package with apt-get (refreshing the package lists only if the first attempt fails),
# using sudo only when not root. Fails with a clear message when that is impossible.
set -euo pipefail

log() { printf '[install-ripgrep] %s\n' "$*" >&2; }
die() {
  printf '[install-ripgrep] ERROR: %s\n' "$*" >&2
  exit 1
}

if command -v rg >/dev/null 2>&1; then
  exit 0
fi

HINT="Install ripgrep yourself (https://github.com/BurntSushi/ripgrep#installation, e.g. 'apt-get install ripgrep' or 'brew install ripgrep') so that 'rg' is on PATH, then re-run."

if ! command -v apt-get >/dev/null 2>&1; then
  die "'rg' is not on PATH and apt-get is not available to install it. $HINT"
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    die "'rg' is not on PATH, and installing it with apt-get needs root (not root, and passwordless sudo is unavailable). $HINT"
  fi
fi

apt_get() { "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT

log "'rg' not found; installing Debian's ripgrep package..."
if ! apt_get install -y -q --no-install-recommends ripgrep >"$LOG" 2>&1; then
  log "apt-get install failed; running apt-get update and retrying..."
  if ! apt_get update -q >>"$LOG" 2>&1 || ! apt_get install -y -q --no-install-recommends ripgrep >>"$LOG" 2>&1; then
    cat "$LOG" >&2
    die "apt-get could not install ripgrep (output above). $HINT"
  fi
fi

if ! command -v rg >/dev/null 2>&1; then
  die "apt-get reported success but 'rg' is still not on PATH. $HINT"
fi
log "installed: $(rg --version | head -n 1)"
