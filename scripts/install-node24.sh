#!/usr/bin/env bash
# Kept for earlier instructions: the same as `bash scripts/install-node.sh 24`.
exec bash "$(dirname "${BASH_SOURCE[0]}")/install-node.sh" 24 "$@"
