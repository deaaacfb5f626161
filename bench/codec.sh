#!/usr/bin/env bash
# Measures the packet codec (criterion, `cargo bench -p kite-packet`) and records the medians
# with the commit and the command in bench/results/codec-<commit>.csv, plus an SVG plot of
# Interest view decode time against name length beside it.
#   bench/codec.sh [criterion filter]
set -euo pipefail
cd "$(dirname "$0")/.."

commit=$(git rev-parse --short HEAD)
dirty=$(git diff --quiet HEAD -- crates || echo "-dirty")
filter=${1:-}
cmd="cargo bench -p kite-packet --bench codec -- --noplot ${filter}"
echo "==> $cmd   (commit ${commit}${dirty})"
# shellcheck disable=SC2086
cargo bench -p kite-packet --bench codec -- --noplot ${filter} | grep -E '^[a-z_/0-9]+ +time:|^[a-z_/0-9]+$|time:'
python3 bench/criterion_summary.py \
  --criterion target/criterion \
  --commit "${commit}${dirty}" \
  --command "$cmd" \
  --csv "bench/results/codec-${commit}${dirty}.csv" \
  --svg "bench/results/codec-${commit}${dirty}-name-length.svg"
