#!/usr/bin/env bash
# Install the pinned Claude Code CLI the parity suite (`npm run test:parity`) compares the agent
# with, into .tools/claude-code/, and print the absolute path of its `claude`.
#
# Idempotent: instant when the pinned version is already there. The registry package carries the
# native binary for this platform as an optional dependency; its postinstall only links it, so the
# install runs with --ignore-scripts and `claude` is the package's own bin/claude.exe. The result is
# checked with `claude --version`.
#
# Environment knobs:
#   CLAUDE_CODE_VERSION  the version to install (default 2.1.332, the one the suite's expectations
#                        were written against)
#   CLAUDE_CODE_DIR      install prefix (default .tools/claude-code)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="${CLAUDE_CODE_VERSION:-2.1.332}"
PREFIX="${CLAUDE_CODE_DIR:-$ROOT/.tools/claude-code}"
PKG="$PREFIX/node_modules/@anthropic-ai/claude-code"
CLAUDE="$PKG/bin/claude.exe"

log() { printf '[install-claude-code] %s\n' "$*" >&2; }
die() {
  printf '[install-claude-code] ERROR: %s\n' "$*" >&2
  exit 1
}

installed_version() {
  [[ -x "$CLAUDE" ]] || return 1
  "$CLAUDE" --version 2>/dev/null | head -n 1 | awk '{print $1}'
}

if [[ "$(installed_version || true)" == "$VERSION" ]]; then
  echo "$CLAUDE"
  exit 0
fi

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
log "installing @anthropic-ai/claude-code@$VERSION into $PREFIX..."
mkdir -p "$PREFIX"
if ! npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --ignore-scripts \
  "@anthropic-ai/claude-code@$VERSION" >"$LOG" 2>&1; then
  cat "$LOG" >&2
  die "npm could not install @anthropic-ai/claude-code@$VERSION (output above)"
fi
# Without the postinstall, bin/claude.exe may still be the package's placeholder: link the
# platform package's binary in its place, as the postinstall would.
if [[ "$(installed_version || true)" != "$VERSION" ]]; then
  native="$(find "$PREFIX/node_modules/@anthropic-ai" -maxdepth 3 -path '*claude-code-*' -type f -name 'claude*' -perm -u+x 2>/dev/null | head -n 1)"
  [[ -n "$native" ]] || die "no native claude binary in $PREFIX/node_modules/@anthropic-ai (platform $(uname -sm) unsupported?)"
  ln -sf "$native" "$CLAUDE"
fi
got="$(installed_version || true)"
[[ "$got" == "$VERSION" ]] || die "installed, but '$CLAUDE --version' says '${got:-nothing}', not $VERSION"
log "installed: $("$CLAUDE" --version | head -n 1)"
echo "$CLAUDE"
