#!/usr/bin/env bash
# CPU per exchange of `kite run` with one I/O thread and with two, interleaved round by round:
# a daemon (two forwarding shards, the machine's default for inline forwarding) loaded by two
# `kite bench daemon --forwarder` clients at once (window 64, 1000 B), each a consumer and a
# producer on the unix socket, so the four faces spread over the I/O threads (then each client's
# two move to the thread running its shard). The daemon's CPU
# time (utime + stime of /proc/PID/stat) over the clients' run, divided by the exchanges they
# counted, is its CPU per exchange. PIN=1 runs the daemon on CPU 1 and the clients on CPU 0.
# Writes bench/results/io-threads-<commit>[-pinned].csv.
#   bench/io-threads.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-5}
pin=${PIN:-0}
cargo build --release --quiet -p kite
kite=target/release/kite
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
suffix=""
daemon_cpu=()
client_cpu=()
if [[ $pin == 1 ]]; then
  suffix="-pinned"
  daemon_cpu=(taskset -c 1)
  client_cpu=(taskset -c 0)
fi
out=bench/results/io-threads-$commit$suffix.csv
tick=$(getconf CLK_TCK)
{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; pinned=${pin}"
  echo "# command: kite run --local-only --threads 2 --io-threads 1|2; two clients: kite bench daemon --forwarder SOCK --duration ${secs}s --json; ${rounds} rounds"
  echo "round,io_threads,exchanges_per_sec,daemon_cpu_sec,cpu_us_per_exchange"
} > "$out"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for r in $(seq 1 "$rounds"); do
  for n in 1 2; do
    sock=$dir/kite-$n.sock
    "${daemon_cpu[@]}" $kite run --local-only --socket "$sock" --threads 2 --io-threads "$n" \
      --log warn 2>"$dir/daemon.log" &
    pid=$!
    for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.05; done
    before=$(cpu_ticks $pid)
    for c in 1 2; do
      "${client_cpu[@]}" $kite bench daemon --forwarder "$sock" --duration "${secs}s" --json \
        >"$dir/client-$c.json" 2>/dev/null &
    done
    wait %2 %3
    after=$(cpu_ticks $pid)
    kill -INT $pid
    wait $pid || true
    read -r rate exchanges < <(python3 - "$dir/client-1.json" "$dir/client-2.json" <<'PY'
import json, sys
runs = [json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:]]
print(round(sum(r["exchanges_per_sec"] for r in runs)), sum(r["received"] for r in runs))
PY
)
    cpu=$(python3 -c "print(($after - $before) / $tick)")
    per=$(python3 -c "print(round($cpu / $exchanges * 1e6, 3))")
    echo "$r,$n,$rate,$cpu,$per" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(line for line in open(sys.argv[1]) if not line.startswith("#")))
med = {}
for n in ("1", "2"):
    sel = [r for r in rows if r["io_threads"] == n]
    med[n] = (statistics.median(float(r["cpu_us_per_exchange"]) for r in sel),
              statistics.median(float(r["exchanges_per_sec"]) for r in sel))
    print(f"io_threads={n}: median {med[n][0]:.2f} us CPU per exchange, {med[n][1]:.0f} exchanges/s")
print(f"2 threads / 1 thread: CPU per exchange x{med['2'][0] / med['1'][0]:.3f}, "
      f"rate x{med['2'][1] / med['1'][1]:.3f}")
PY
