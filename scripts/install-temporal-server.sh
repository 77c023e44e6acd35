#!/usr/bin/env bash
# Provision a real Temporal server (not the CLI's dev server) and print, on stdout, the absolute
# path of a directory holding:
#   temporal-server      the server (`temporal-server start --config-file <yaml>`)
#   temporal-sql-tool    Temporal's schema tool (create / setup-schema / update-schema)
#   schema/              the SQL schema files of the same version (schema/postgresql/v12/...)
# All logs go to stderr, so callers can do: DIR="$(bash scripts/install-temporal-server.sh)".
#
# Lookup order (the first hit wins):
#   1. $TEMPORAL_SERVER_DIR, if set (it must hold the three entries above, or this script fails);
#   2. the project-local cache .tools/temporal-server/<version>/ (git-ignored);
#   3. build into that cache: `go install go.temporal.io/server/cmd/server@v<version>` and
#      `go install go.temporal.io/server/cmd/tools/sql@v<version>` (CGO off and the
#      disable_grpc_modules tag, as Temporal's own Makefile builds them), then copy the schema
#      files from that version's module source in the Go module cache (`go mod download -json`
#      names its Dir). Nothing else is needed: no Docker, no git clone.
#
# The build takes minutes (it logs how long each binary took); re-running is instant once the
# cache is filled. It is atomic (built in a temporary folder beside the cache, verified, then
# renamed into place) and serialized with flock when available.
#
# Knobs (environment):
#   TEMPORAL_SERVER_DIR      use this directory, skip everything else
#   TEMPORAL_SERVER_VERSION  version to build (default 1.32.1: the newest 1.32.x that builds with
#                            Go 1.26.8; the project's CLI 1.9.1 embeds Server 1.32.0, and 1.32.2
#                            needs Go >= 1.26.10)
set -euo pipefail

TEMPORAL_SERVER_VERSION="${TEMPORAL_SERVER_VERSION:-1.32.1}"
TEMPORAL_SERVER_VERSION="${TEMPORAL_SERVER_VERSION#v}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="$ROOT/.tools/temporal-server"

log() { printf '[install-temporal-server] %s\n' "$*" >&2; }
die() {
  printf '[install-temporal-server] ERROR: %s\n' "$*" >&2
  exit 1
}

# complete DIR: true when DIR holds both binaries (executable) and the postgres schema.
complete() {
  local dir="$1"
  [[ -x "$dir/temporal-server" && -x "$dir/temporal-sql-tool" && -d "$dir/schema/postgresql/v12/temporal/versioned" ]]
}

# 1. Explicit override.
if [[ -n "${TEMPORAL_SERVER_DIR:-}" ]]; then
  if complete "$TEMPORAL_SERVER_DIR"; then
    (cd "$TEMPORAL_SERVER_DIR" && pwd)
    exit 0
  fi
  die "TEMPORAL_SERVER_DIR is set to '$TEMPORAL_SERVER_DIR', which does not hold an executable temporal-server and temporal-sql-tool and schema/postgresql/v12/. Fix it, or unset TEMPORAL_SERVER_DIR to let this script build them."
fi

CACHE="$TOOLS_DIR/$TEMPORAL_SERVER_VERSION"

# 2. Cached in the project.
if complete "$CACHE"; then
  printf '%s\n' "$CACHE"
  exit 0
fi

# 3. Build.
HINT="Install Go (https://go.dev/dl/) with access to a Go module proxy, or point TEMPORAL_SERVER_DIR at a directory holding temporal-server, temporal-sql-tool and schema/, then re-run: bash scripts/install-temporal-server.sh"
command -v go >/dev/null 2>&1 || die "the go toolchain was not found, and building the Temporal server needs it. $HINT"

mkdir -p "$TOOLS_DIR"

# Serialize concurrent installers; re-check the cache once we hold the lock.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS_DIR/.install.lock"
  if ! flock -n 9; then
    log "another install is running; waiting for it..."
    flock 9
  fi
  if complete "$CACHE"; then
    printf '%s\n' "$CACHE"
    exit 0
  fi
fi

WORK="$(mktemp -d "$TOOLS_DIR/.install.XXXXXX")"
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
OUT="$WORK/$TEMPORAL_SERVER_VERSION"
mkdir -p "$OUT" "$WORK/gobin"

# Run outside the project so no go.mod/go.work nearby interferes.
gocmd() { (cd "$WORK" && GOFLAGS= GOWORK=off CGO_ENABLED=0 "$@"); }

# build PACKAGE NAME: go install one command of the server module, move it to $OUT/NAME.
build() {
  local pkg="$1" name="$2" start=$SECONDS
  log "building $pkg@v$TEMPORAL_SERVER_VERSION with go install (takes minutes on a cold cache)..."
  if ! gocmd env GOBIN="$WORK/gobin" go install -tags disable_grpc_modules -ldflags "-s -w" \
    "$pkg@v$TEMPORAL_SERVER_VERSION" >&2; then
    die "'go install $pkg@v$TEMPORAL_SERVER_VERSION' failed (see the go output above). $HINT"
  fi
  mv -f "$WORK/gobin/$(basename "$pkg")" "$OUT/$name"
  log "built $name in $((SECONDS - start)) s"
}

build go.temporal.io/server/cmd/server temporal-server
build go.temporal.io/server/cmd/tools/sql temporal-sql-tool

# The schema files ship in the module source, which go install has just put into the module cache.
if ! module_json="$(gocmd go mod download -json "go.temporal.io/server@v$TEMPORAL_SERVER_VERSION")"; then
  die "'go mod download go.temporal.io/server@v$TEMPORAL_SERVER_VERSION' failed: $module_json"
fi
module_dir="$(printf '%s\n' "$module_json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -n 1)"
if [[ -z "$module_dir" || ! -d "$module_dir/schema" ]]; then
  die "the module cache has no schema folder for go.temporal.io/server@v$TEMPORAL_SERVER_VERSION (go mod download printed: $module_json)"
fi
cp -R "$module_dir/schema" "$OUT/schema"
# The module cache is read-only; the copy must not be, or it could not be deleted later.
chmod -R u+w "$OUT/schema"
find "$OUT/schema" -name '*.go' -delete

verify() {
  local bin="$1" want="$2" out
  if ! out="$("$bin" --version 2>&1)"; then
    die "'$bin --version' failed: $out"
  fi
  case "$out" in
    *" version $want"*) log "verified: $out" ;;
    *) die "'$bin --version' printed '$out', expected '... version $want'" ;;
  esac
}
verify "$OUT/temporal-server" "$TEMPORAL_SERVER_VERSION"
verify "$OUT/temporal-sql-tool" "$TEMPORAL_SERVER_VERSION"
complete "$OUT" || die "the build left an incomplete $OUT"

# Same filesystem (both under .tools/temporal-server), so this rename is atomic.
rm -rf "$CACHE"
mv "$OUT" "$CACHE"
printf '%s\n' "$CACHE"
