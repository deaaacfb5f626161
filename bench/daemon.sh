#!/usr/bin/env bash
# Whole-forwarder throughput through unix sockets, parking idle threads vs busy-polling,
# interleaved so both see the same machine load. Writes bench/results/daemon-<commit>.csv.
#   bench/daemon.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-3}
cargo build --release --quiet -p kite
commit=$(git rev-parse --short HEAD)
out=bench/results/daemon-$commit.csv
echo "round,mode,window,payload,exchanges_per_sec" > "$out"
for r in $(seq 1 "$rounds"); do
  for mode in park spin; do
    flag=""; [[ $mode == spin ]] && flag=--spin
    rate=$(target/release/kite bench daemon --duration "${secs}s" $flag --json 2>/dev/null | tail -1 |
      python3 -c 'import json,sys; print(int(json.load(sys.stdin)["exchanges_per_sec"]))')
    echo "$r,$mode,64,1000,$rate" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = {m: statistics.median(int(r["exchanges_per_sec"]) for r in rows if r["mode"] == m) for m in ("park", "spin")}
print(f"median: park {med['park']:.0f}/s, spin {med['spin']:.0f}/s, park/spin = {med['park']/med['spin']:.2f}")
PY
python3 - "$out" > "${out%.csv}.bars.csv" <<'PY'
import csv, sys
print("label,exchanges_per_sec")
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{r['mode']} (round {r['round']}),{r['exchanges_per_sec']}")
PY
python3 bench/bars.py "${out%.csv}.bars.csv" "${out%.csv}.svg" "kite bench daemon: parking vs spinning ($commit)"
rm -f "${out%.csv}.bars.csv"
