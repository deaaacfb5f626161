#!/usr/bin/env bash
# Shared-memory faces against the unix socket, alternating round by round through one
# `kite run` (release build, one forwarding thread, inline):
# - `kite perf server` (DigestSha256, --threads 0) and `kite perf client` (window 64) at
#   P = 1000 and 8000 octets: Data/s, and the forwarder's CPU per exchange (utime + stime of
#   `kite run` from /proc over the client's run, divided by the Data it received);
# - `kite put` of a 100 MB file and `kite get` of it: goodput;
# - idle: ten `kite ping --server` applications connected, the daemon's CPU over 10 s.
# The socket side sets KITE_SHM=off in every tool; the daemon is the same.
# Writes bench/results/shm-<commit>.csv.
#   bench/shm.sh [SECONDS] [ROUNDS]     (defaults 5 and 3)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-3}
cargo build --release --quiet -p kite
kite=$PWD/target/release/kite
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out=bench/results/shm-$commit.csv
work=$(mktemp -d)
sock=$work/kite.sock
"$kite" run --local-only --threads 1 --socket "$sock" >"$work/kite.log" 2>&1 &
daemon=$!
cleanup() { kill -TERM "$daemon" 2>/dev/null || true; jobs -p | xargs -r kill 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
head -c 100000000 /dev/urandom > "$work/object"
hz=$(getconf CLK_TCK)

ticks() { awk '{print $14 + $15}' "/proc/$daemon/stat"; }
json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

perf_round() { # payload -> "data_per_sec cpu_us_per_exchange"
  "$kite" perf server /bench/perf --sign digest-sha256 --payload "$1" --threads 0 \
    --socket "$sock" >/dev/null 2>"$work/server.err" &
  local server=$!
  for _ in $(seq 100); do grep -q "kite perf server:" "$work/server.err" && break; sleep 0.1; done
  local before line after
  before=$(ticks)
  line=$("$kite" perf client /bench/perf --window 64 --duration "${secs}s" --socket "$sock" \
    --json 2>/dev/null | tail -1)
  after=$(ticks)
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  local received
  received=$(json_field "$line" received)
  echo "$(json_field "$line" data_per_sec) $(python3 -c "print(round(($after-$before)/$hz*1e6/max($received,1), 3))")"
}

get_round() { # -> goodput_mbps
  "$kite" put /bench/object "$work/object" --socket "$sock" >"$work/put.out" 2>/dev/null &
  local put=$!
  for _ in $(seq 300); do [[ -s $work/put.out ]] && break; sleep 0.1; done
  rm -f "$work/copy"
  local ok=0
  "$kite" get "$(head -1 "$work/put.out")" --socket "$sock" -o "$work/copy" 2>"$work/get.err" || ok=$?
  kill -TERM "$put" 2>/dev/null || true
  wait "$put" 2>/dev/null || true
  if [[ $ok != 0 ]] || ! cmp -s "$work/object" "$work/copy"; then
    echo "shm.sh: kite get failed or its copy differs:" >&2
    cat "$work/get.err" >&2
    echo nan
    return
  fi
  sed -n 's/^Goodput: \([0-9.]*\).*/\1/p' "$work/get.err"
}

idle_round() { # -> percent of a core over 10 s with ten idle applications
  local pids=() i
  for i in $(seq 10); do
    "$kite" ping --server "/bench/idle/$i" --socket "$sock" >/dev/null 2>&1 &
    pids+=($!)
  done
  sleep 2
  local before after
  before=$(ticks)
  sleep 10
  after=$(ticks)
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  python3 -c "print(round(($after-$before)/$hz/10*100, 3))"
}

{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# kite run --local-only --threads 1; perf: --payload P --threads 0 / --window 64 --duration ${secs}s; get: 100 MB"
  echo "round,mode,test,payload,value,cpu_us_per_exchange"
} > "$out"
for r in $(seq "$rounds"); do
  for mode in unix shm; do
    if [[ $mode == unix ]]; then export KITE_SHM=off; else unset KITE_SHM; fi
    for p in 1000 8000; do
      read -r rate cpu < <(perf_round "$p")
      echo "$r,$mode,perf,$p,$rate,$cpu" | tee -a "$out"
    done
    echo "$r,$mode,get,100000000,$(get_round)," | tee -a "$out"
    echo "$r,$mode,idle10,0,$(idle_round)," | tee -a "$out"
  done
done
unset KITE_SHM
echo "medians:"
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith('#'))][1:]
keys = sorted({(r[2], r[3], r[1]) for r in rows})
for test, p, mode in keys:
    vals = [float(r[4]) for r in rows if (r[2], r[3], r[1]) == (test, p, mode) and r[4] != 'nan']
    cpus = [float(r[5]) for r in rows if (r[2], r[3], r[1]) == (test, p, mode) and r[5]]
    extra = f", forwarder CPU {statistics.median(cpus):.3f} us/exchange" if cpus else ""
    med = f"{statistics.median(vals):.1f}" if vals else "none"
    print(f"{test} {p} {mode}: {med} (of {len(vals)}){extra}")
PY
echo "wrote $out"
