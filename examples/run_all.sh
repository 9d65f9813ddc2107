#!/usr/bin/env bash
# Runs every example in this folder; each must exit 0 by itself (CI calls this from .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p ferromq --examples
for src in examples/*.rs; do
  name=$(basename "$src" .rs)
  start=$SECONDS
  if ! timeout 60 "${CARGO_TARGET_DIR:-target}/debug/examples/$name" >/dev/null; then
    echo "example $name failed" >&2
    exit 1
  fi
  echo "example $name ok ($((SECONDS - start))s)"
done
