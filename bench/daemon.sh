#!/usr/bin/env bash
# Whole-forwarder throughput through unix sockets (`kite bench daemon`, in-process Kite, one
# forwarding shard, window 64, 1000 B): forwarding in the I/O thread (inline) vs in a thread of
# its own, each parking idle threads vs busy-polling, interleaved round by round so every mode
# sees the same machine load. Writes bench/results/daemon-<commit>.csv and an SVG beside it.
#   bench/daemon.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-3}
cargo build --release --quiet -p kite
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out=bench/results/daemon-$commit.csv
modes="inline-park inline-spin threads-park threads-spin"
{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores"
  echo "# command: kite bench daemon --inline true|false [--spin] --duration ${secs}s --json, ${rounds} rounds"
  echo "round,mode,window,payload,exchanges_per_sec"
} > "$out"
for r in $(seq 1 "$rounds"); do
  for mode in $modes; do
    flags=(--inline "$([[ $mode == inline-* ]] && echo true || echo false)")
    [[ $mode == *-spin ]] && flags+=(--spin)
    rate=$(target/release/kite bench daemon --duration "${secs}s" "${flags[@]}" --json 2>/dev/null | tail -1 |
      python3 -c 'import json,sys; print(int(json.load(sys.stdin)["exchanges_per_sec"]))')
    echo "$r,$mode,64,1000,$rate" | tee -a "$out"
  done
done
python3 - "$out" "${out%.csv}.svg" "kite bench daemon: inline vs threaded forwarding, parking vs spinning ($commit)" $modes <<'PY'
import csv, statistics, subprocess, sys, tempfile
src, svg, title, *modes = sys.argv[1:]
rows = list(csv.DictReader(line for line in open(src) if not line.startswith("#")))
med = {m: statistics.median(int(r["exchanges_per_sec"]) for r in rows if r["mode"] == m) for m in modes}
print("medians: " + ", ".join(f"{m} {v:.0f}/s" for m, v in med.items()))
print(f"inline/threads (parking) = {med['inline-park'] / med['threads-park']:.2f}; "
      f"park/spin: inline {med['inline-park'] / med['inline-spin']:.2f}, threads {med['threads-park'] / med['threads-spin']:.2f}")
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("label,exchanges_per_sec\n" + "".join(f"{m},{med[m]}\n" for m in modes))
subprocess.run([sys.executable, "bench/bars.py", f.name, svg, title], check=True)
PY
