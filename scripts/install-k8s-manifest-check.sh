#!/usr/bin/env bash
# Build the offline Kubernetes manifest checker (scripts/k8s-manifest-check: a strict decode into
# the k8s.io/api types, as an API server does before admission; no cluster needed) and print its
# absolute path on stdout; logs go to stderr:
#   CHECK="$(bash scripts/install-k8s-manifest-check.sh)"; "$CHECK" deploy/kubernetes/worker.yaml
#
# Cached in .tools/k8s-manifest-check/<hash of its sources>/, so an edit of main.go, go.mod or
# go.sum builds it again and re-running is otherwise instant. The first build downloads
# k8s.io/api, k8s.io/apimachinery and k8s.io/client-go (versions pinned by go.sum) from the Go
# module proxy and compiles them: about a minute on two cores with a cold Go cache.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/scripts/k8s-manifest-check"
TOOLS_DIR="$ROOT/.tools/k8s-manifest-check"

log() { printf '[install-k8s-manifest-check] %s\n' "$*" >&2; }
die() {
  printf '[install-k8s-manifest-check] ERROR: %s\n' "$*" >&2
  exit 1
}

HASH="$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" | sha256sum | cut -c1-16)"
BIN="$TOOLS_DIR/$HASH/k8s-manifest-check"
if [[ -x "$BIN" ]]; then
  printf '%s\n' "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 \
  || die "the go toolchain was not found; install Go (https://go.dev/dl/) with access to a Go module proxy, then re-run: bash scripts/install-k8s-manifest-check.sh"

mkdir -p "$TOOLS_DIR"
# Serialize concurrent installers (two test runs at once); re-check once we hold the lock.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS_DIR/.install.lock"
  flock 9
  if [[ -x "$BIN" ]]; then
    printf '%s\n' "$BIN"
    exit 0
  fi
fi

log "building the manifest checker (k8s.io/api from the Go module proxy; a minute on a cold cache)..."
START=$SECONDS
TMP="$(mktemp -d "$TOOLS_DIR/.build.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
(cd "$SRC" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -o "$TMP/k8s-manifest-check" .) \
  || die "go build failed (output above)"
mkdir -p "$(dirname "$BIN")"
mv -f "$TMP/k8s-manifest-check" "$BIN"
log "built in $((SECONDS - START)) s: $BIN"
printf '%s\n' "$BIN"
