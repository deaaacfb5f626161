#!/usr/bin/env bash
# bench/io-threads.sh's load run with two builds side by side: for each round, OLD and NEW
# each with one I/O thread and with two (four daemons in turn, the same two clients each), so
# a change's effect on the two-thread cost is measured under one machine load. Prints and
# writes the medians of CPU per exchange (µs) and exchanges/s to
# bench/results/io-threads-ab-<old>-<new>[-pinned].txt. PIN=1 as in bench/io-threads.sh.
#   bench/io-threads-ab.sh OLD_KITE NEW_KITE [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
secs=${3:-3}
rounds=${4:-4}
daemon_cpu=()
client_cpu=()
suffix=""
if [[ ${PIN:-0} == 1 ]]; then
  suffix="-pinned"
  daemon_cpu=(taskset -c 1)
  client_cpu=(taskset -c 0)
fi
tick=$(getconf CLK_TCK)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for r in $(seq 1 "$rounds"); do
  for build in old new; do
    kite=$old
    [[ $build == new ]] && kite=$new
    for n in 1 2; do
      sock=$dir/kite.sock
      "${daemon_cpu[@]}" "$kite" run --local-only --socket "$sock" --threads 2 --io-threads "$n" \
        --log warn 2>"$dir/daemon.log" &
      pid=$!
      for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.05; done
      before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
      for c in 1 2; do
        "${client_cpu[@]}" "$kite" bench daemon --forwarder "$sock" --duration "${secs}s" --json \
          >"$dir/client-$c.json" 2>/dev/null &
      done
      wait %2 %3
      after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
      kill -INT $pid
      wait $pid || true
      python3 - "$dir/client-1.json" "$dir/client-2.json" "$r" "$build" "$n" \
        "$(( after - before ))" "$tick" <<'PY' | tee -a "$dir/rows"
import json, sys
runs = [json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:3]]
r, build, n, ticks, tick = sys.argv[3:8]
rate = sum(x["exchanges_per_sec"] for x in runs)
exchanges = sum(x["received"] for x in runs)
print(f"{r},{build},{n},{rate:.0f},{int(ticks) / int(tick) / exchanges * 1e6:.3f}")
PY
      rm -f "$sock"
    done
  done
done
out=bench/results/io-threads-ab-$(basename "$old")-$(basename "$new")$suffix.txt
python3 - "$dir/rows" "$old" "$new" "$secs" "$rounds" "${PIN:-0}" <<'PY' | tee "$out"
import statistics, sys
rows = [l.strip().split(",") for l in open(sys.argv[1])]
print(f"# bench/io-threads-ab.sh {sys.argv[2]} {sys.argv[3]} {sys.argv[4]} {sys.argv[5]}; pinned={sys.argv[6]}")
print("# round,build,io_threads,exchanges_per_sec,cpu_us_per_exchange")
for row in rows:
    print("# " + ",".join(row))
for build in ("old", "new"):
    med = {}
    for n in ("1", "2"):
        sel = [r for r in rows if r[1] == build and r[2] == n]
        med[n] = (statistics.median(float(r[4]) for r in sel), statistics.median(float(r[3]) for r in sel))
    print(f"{build}: 1 I/O thread {med['1'][0]:.2f} us, {med['1'][1]:.0f}/s; "
          f"2 I/O threads {med['2'][0]:.2f} us, {med['2'][1]:.0f}/s; 2 / 1 x{med['2'][0] / med['1'][0]:.3f}")
PY
