#!/usr/bin/env bash
# Make sure `systemd-analyze` (which checks the systemd unit in deploy/systemd offline, with no
# systemd running) is installed, and print its absolute path on stdout. Instant when it is on PATH;
# otherwise installs Debian's `systemd` package with apt-get (refreshing the package lists only if
# the first attempt fails), using sudo only when not root. Installing the package starts nothing
# where systemd is not the init system.
set -euo pipefail

log() { printf '[install-systemd-analyze] %s\n' "$*" >&2; }
die() {
  printf '[install-systemd-analyze] ERROR: %s\n' "$*" >&2
  exit 1
}

if found="$(command -v systemd-analyze)"; then
  printf '%s\n' "$found"
  exit 0
fi

HINT="Install systemd's tools yourself (e.g. 'apt-get install systemd', 'dnf install systemd') so that 'systemd-analyze' is on PATH, then re-run."
command -v apt-get >/dev/null 2>&1 || die "'systemd-analyze' is not on PATH and apt-get is not available to install it. $HINT"

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    die "'systemd-analyze' is not on PATH, and installing it with apt-get needs root. $HINT"
  fi
fi

apt_get() { "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT

log "'systemd-analyze' not found; installing Debian's systemd package..."
if ! apt_get install -y -q --no-install-recommends systemd >"$LOG" 2>&1; then
  log "apt-get install failed; running apt-get update and retrying..."
  if ! apt_get update -q >>"$LOG" 2>&1 || ! apt_get install -y -q --no-install-recommends systemd >>"$LOG" 2>&1; then
    cat "$LOG" >&2
    die "apt-get could not install systemd (output above). $HINT"
  fi
fi
found="$(command -v systemd-analyze)" || die "apt-get reported success but 'systemd-analyze' is still not on PATH. $HINT"
log "installed: $("$found" --version | head -n 1)"
printf '%s\n' "$found"
