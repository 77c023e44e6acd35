#!/usr/bin/env bash
# Make sure a PostgreSQL server is installed, and print the absolute path of its bin directory
# (the one holding `initdb` and `postgres`, e.g. /usr/lib/postgresql/15/bin) on stdout.
# All logs go to stderr, so callers can do: PG_BIN="$(bash scripts/install-postgres.sh)".
#
# Lookup order (the first hit wins):
#   1. $POSTGRES_BIN_DIR, if set (it must hold executable initdb and postgres, or this script fails);
#   2. `initdb` and `postgres` on PATH;
#   3. Debian's layout, /usr/lib/postgresql/<major>/bin (the newest major installed);
#   4. install Debian's `postgresql` package with apt-get (refreshing the package lists only if
#      the first attempt fails), using sudo only when not root, then 3 again.
#
# Only the binaries are used: the tests start a throwaway server of their own (initdb in a temp
# folder, a free loopback port), never the system's cluster. Installing the package may create
# and start Debian's default cluster; nothing here relies on it.
set -euo pipefail

log() { printf '[install-postgres] %s\n' "$*" >&2; }
die() {
  printf '[install-postgres] ERROR: %s\n' "$*" >&2
  exit 1
}

has_server() { [[ -x "$1/initdb" && -x "$1/postgres" ]]; }

# 1. Explicit override.
if [[ -n "${POSTGRES_BIN_DIR:-}" ]]; then
  if has_server "$POSTGRES_BIN_DIR"; then
    (cd "$POSTGRES_BIN_DIR" && pwd)
    exit 0
  fi
  die "POSTGRES_BIN_DIR is set to '$POSTGRES_BIN_DIR', which holds no executable initdb and postgres. Fix it, or unset it to let this script find or install PostgreSQL."
fi

# 2. On PATH (Homebrew, a distribution that links them into /usr/bin): the folder the link points to.
if initdb="$(command -v initdb 2>/dev/null)" && [[ -n "$initdb" ]]; then
  dir="$(dirname "$(readlink -f "$initdb" 2>/dev/null || printf '%s' "$initdb")")"
  if has_server "$dir"; then
    printf '%s\n' "$dir"
    exit 0
  fi
fi

# 3. Debian and Ubuntu keep them out of PATH, one folder per major version.
debian_bin() {
  local dir
  dir="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -type d -name bin 2>/dev/null | sort -V | tail -n 1)"
  if [[ -n "$dir" ]] && has_server "$dir"; then
    printf '%s\n' "$dir"
    return 0
  fi
  return 1
}
if debian_bin; then
  exit 0
fi

# 4. Install.
HINT="Install a PostgreSQL server yourself (e.g. 'apt-get install postgresql' or 'brew install postgresql'), or set POSTGRES_BIN_DIR to the folder holding initdb and postgres, then re-run."
if ! command -v apt-get >/dev/null 2>&1; then
  die "no PostgreSQL server found (initdb, postgres), and apt-get is not available to install one. $HINT"
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    die "no PostgreSQL server found, and installing one with apt-get needs root (not root, and passwordless sudo is unavailable). $HINT"
  fi
fi

apt_get() { "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT

log "no PostgreSQL server found; installing Debian's postgresql package..."
if ! apt_get install -y -q --no-install-recommends postgresql >"$LOG" 2>&1; then
  log "apt-get install failed; running apt-get update and retrying..."
  if ! apt_get update -q >>"$LOG" 2>&1 || ! apt_get install -y -q --no-install-recommends postgresql >>"$LOG" 2>&1; then
    cat "$LOG" >&2
    die "apt-get could not install postgresql (output above). $HINT"
  fi
fi

if dir="$(debian_bin)"; then
  log "installed: $("$dir/postgres" --version)"
  printf '%s\n' "$dir"
  exit 0
fi
die "apt-get reported success but no /usr/lib/postgresql/<major>/bin holds initdb and postgres. $HINT"
