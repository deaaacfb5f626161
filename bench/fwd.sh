#!/usr/bin/env bash
# Runs `kite bench fwd` over the parameter matrix of issue #3 (name length, FIB size, CS hit
# ratio exact/prefix, payload) and records one CSV row per run, with the commit and command,
# in bench/results/fwd-<commit>.csv, plus an SVG bar chart beside it.
#   bench/fwd.sh [SECONDS_PER_RUN]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-5}
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out="bench/results/fwd-${commit}.csv"
cargo build --release --quiet -p kite
kite=target/release/kite

runs=(
  "base --name-len 4 --fib 10000"
  "name8 --name-len 8 --fib 10000"
  "name16 --name-len 16 --fib 10000"
  "fib1e5 --name-len 4 --fib 100000"
  "fib1e6 --name-len 4 --fib 1000000"
  "exact-hit50 --fib 10000 --cs-hit 50"
  "exact-hit90 --fib 10000 --cs-hit 90"
  "prefix-hit0 --fib 10000 --prefix-match"
  "prefix-hit50 --fib 10000 --prefix-match --cs-hit 50"
  "prefix-hit90 --fib 10000 --prefix-match --cs-hit 90"
  "payload100 --fib 10000 --payload 100"
  "payload8000 --fib 10000 --payload 8000"
)

{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores"
  echo "# command: ${kite} bench fwd <args> --duration ${secs}s --json"
  echo "label,args,exchanges_per_sec,p50_ns,p99_ns,exchanges,cs_hits,nacks,fib_bytes_per_entry"
} > "$out"
for run in "${runs[@]}"; do
  label=${run%% *}
  args=${run#* }
  echo "==> ${label}: kite bench fwd ${args} --duration ${secs}s" >&2
  # shellcheck disable=SC2086
  json=$("$kite" bench fwd $args --duration "${secs}s" --json 2>/dev/null | tail -1)
  python3 - "$label" "$args" "$json" >> "$out" <<'PY'
import json, sys
label, args, line = sys.argv[1], sys.argv[2], sys.argv[3]
r = json.loads(line)
print(",".join(str(x) for x in [label, f'"{args}"', r["exchanges_per_sec"], r["p50_ns"], r["p99_ns"],
                                  r["exchanges"], r["cs_hits"], r["nacks"], r["fib_bytes_per_entry"]]))
PY
  tail -1 "$out" >&2
done
python3 bench/bars.py "$out" "${out%.csv}.svg" "kite bench fwd, one forwarding thread (${commit})"
echo "wrote $out and ${out%.csv}.svg"
