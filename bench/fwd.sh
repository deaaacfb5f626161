#!/usr/bin/env bash
# Runs `kite bench fwd` over the one-forwarding-thread matrix (name length, FIB size, CS hit
# ratio exact/prefix, payload), each scenario RUNS times (the machine is shared and noisy), and
# records one CSV row per scenario — the run with the median rate, plus every run's rate — with
# the commit and command, in bench/results/fwd-<commit>.csv, plus an SVG bar chart beside it.
#   bench/fwd.sh [SECONDS_PER_RUN] [RUNS]   (defaults 5 and 3)
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-5}
runs_per=${2:-3}
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
  echo "# command: ${kite} bench fwd <args> --duration ${secs}s --json, ${runs_per} runs each, median reported"
  echo "label,args,exchanges_per_sec,p50_ns,p99_ns,exchanges,cs_hits,nacks,fib_bytes_per_entry,all_runs"
} > "$out"
for run in "${runs[@]}"; do
  label=${run%% *}
  args=${run#* }
  echo "==> ${label}: kite bench fwd ${args} --duration ${secs}s" >&2
  results=()
  for _ in $(seq "$runs_per"); do
    # shellcheck disable=SC2086
    results+=("$("$kite" bench fwd $args --duration "${secs}s" --json 2>/dev/null | tail -1)")
  done
  python3 - "$label" "$args" "${results[@]}" >> "$out" <<'PY'
import json, sys
label, args, lines = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = sorted((json.loads(l) for l in lines), key=lambda r: r["exchanges_per_sec"])
r = runs[len(runs) // 2]
every = " ".join(str(int(x["exchanges_per_sec"])) for x in runs)
print(",".join(str(x) for x in [label, f'"{args}"', r["exchanges_per_sec"], r["p50_ns"], r["p99_ns"],
                                  r["exchanges"], r["cs_hits"], r["nacks"], r["fib_bytes_per_entry"], every]))
PY
  tail -1 "$out" >&2
done
python3 bench/bars.py "$out" "${out%.csv}.svg" "kite bench fwd, one forwarding thread (${commit})"
echo "wrote $out and ${out%.csv}.svg"
