#!/usr/bin/env bash
# What a flood costs an ordinary consumer: `kite perf client` goodput through `kite run` alone,
# then while one face floods (`kite bench flood`: Interests nobody answers, new names, the
# longest InterestLifetime, as fast as the socket takes them, over unix or UDP), interleaved
# round by round so every mode sees the same machine load. Reports the median Data/s of each
# mode, the ratio flooded/alone, and the Nacks (Congestion: no room) the consumer got. The
# daemon is restarted for each measurement, so no flood's PIT entries carry over.
# Writes bench/results/flood-<commit>.csv (flood-<commit>-pinned.csv with PIN=1).
#   bench/flood.sh [SECONDS] [ROUNDS]
# FLOOD_RATE=N paces each flooder to N Interests/s (default 0: as fast as its socket takes them).
# KITE=path uses that binary instead of building; FLOODS="unix udp udp2" picks the flooded
# modes (udp2: two UDP flooders, each its own socket and prefix, default "unix udp udp2").
#
# Unpinned (the default), every process runs where the scheduler puts it: on a machine of few
# cores the flooder takes a core the forwarder, the producer and the consumer would use, so
# the ratio counts the flooder's own CPU as well as what Kite spends on the flood. PIN=1
# measures what the flood costs the forwarder alone, as if it came from another machine: Kite,
# `kite perf server` and `kite perf client` share CPU SERVE_CPU (default 0), the flooder runs on
# CPU FLOOD_CPU (default 1), in every mode including alone. Over loopback the kernel's receive path for
# the flood (the UDP socket lookup, queueing or dropping each datagram; the unix socket's
# copy) runs in the sender's context, so on the flooder's CPU; Kite pays for what it reads.
# PIN=both runs the whole measurement unpinned, then pinned.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${PIN:-} == both ]]; then
  PIN=0 "$0" "$@"
  PIN=1 exec "$0" "$@"
fi
secs=${1:-10}
rounds=${2:-5}
if [[ -z ${KITE:-} ]]; then
  cargo build --release --quiet -p kite
  KITE=target/release/kite
fi
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
pin=${PIN:-0}
rate=${FLOOD_RATE:-0}
serve_cpu=${SERVE_CPU:-0}
flood_cpu=${FLOOD_CPU:-1}
serve=()
flooder=()
suffix=""
if [[ $pin == 1 ]]; then
  serve=(taskset -c "$serve_cpu")
  flooder=(taskset -c "$flood_cpu")
  suffix="-pinned"
fi
out=bench/results/flood-$commit$suffix.csv
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
port=$((20000 + RANDOM % 20000))

# One measurement: mode is "alone" or the flood's transport.
measure() {
  local mode=$1
  "${serve[@]}" "$KITE" run --socket "$tmp/nfd.sock" --udp "127.0.0.1:$port" --tcp "127.0.0.1:$((port + 1))" \
    2>"$tmp/kite.log" &
  local daemon=$!
  pids+=("$daemon")
  for _ in $(seq 100); do [[ -S $tmp/nfd.sock ]] && break; sleep 0.1; done
  "${serve[@]}" "$KITE" perf server /perf --payload 1000 --threads 0 --sign digest-sha256 \
    --socket "$tmp/nfd.sock" >/dev/null 2>"$tmp/server.err" &
  local server=$!
  pids+=("$server")
  for _ in $(seq 300); do grep -q "kite perf server:" "$tmp/server.err" && break; sleep 0.1; done
  local floods=()
  if [[ $mode != alone ]]; then
    local via=() n=1
    [[ $mode == udp* ]] && via=(--udp "udp://127.0.0.1:$port")
    [[ $mode == udp2 ]] && n=2
    for f in $(seq "$n"); do
      "${flooder[@]}" "$KITE" bench flood --socket "$tmp/nfd.sock" --prefix "/flood$f" "${via[@]}" \
        --rate "$rate" --duration "$((secs + 3))s" --json >"$tmp/flood$f.out" 2>&1 &
      floods+=("$!")
      pids+=("$!")
    done
    sleep 1 # the flood reaches its share of the PIT and the rings before the consumer starts
  fi
  local json
  json=$("${serve[@]}" "$KITE" perf client /perf --window 64 --duration "${secs}s" --socket "$tmp/nfd.sock" \
    --json 2>/dev/null | tail -1)
  for f in "${floods[@]}"; do wait "$f" || true; done
  # What Kite did with the flood: Nacks it sent (all faces but the consumer's are the
  # flooders' and the producers'), Interests it dropped unread for a full ring.
  local nacked dropped
  read -r nacked dropped < <("$KITE" face list --json --socket "$tmp/nfd.sock" 2>/dev/null | python3 -c '
import json, sys
faces = json.load(sys.stdin)
print(sum(f["counters"]["out_nacks"] for f in faces), sum(f["drops"]["in_queue_full"] for f in faces))' || echo "0 0")
  kill "$server" "$daemon" 2>/dev/null || true
  wait "$server" "$daemon" 2>/dev/null || true
  local flooded=0
  for f in $(seq "${#floods[@]}"); do
    flooded=$((flooded + $(tail -1 "$tmp/flood$f.out" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["interests_per_sec"]))')))
  done
  python3 - "$r" "$mode" "$json" "$flooded" "$nacked" "$dropped" <<'PY' | tee -a "$out"
import json, sys
r, mode, j, flood, nacked, dropped = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), *sys.argv[4:]
print(f"{r},{mode},{j['data_per_sec']:.0f},{j['nacks']},{j['congestion_nacks']},{j['timeouts']},{flood},{nacked},{dropped}")
PY
}

{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores"
  pinning="unpinned"
  [[ $pin == 1 ]] && pinning="pinned: kite run, perf server and client on CPU $serve_cpu, flooder on CPU $flood_cpu"
  echo "# $pinning"
  echo "# command: PIN=$pin FLOOD_RATE=$rate FLOODS=\"${FLOODS:-unix udp udp2}\" bench/flood.sh $secs $rounds (kite run defaults; perf server /perf --payload 1000 --threads 0; perf client --window 64 --duration ${secs}s; kite bench flood, lifetime 2^64-1 ms)"
  echo "round,mode,data_per_sec,nacks,congestion_nacks,timeouts,flood_interests_per_sec,kite_out_nacks,kite_in_queue_full"
} > "$out"
modes="alone ${FLOODS:-unix udp udp2}"
for r in $(seq 1 "$rounds"); do
  for mode in $modes; do
    measure "$mode"
  done
done
python3 - "$out" $modes <<'PY'
import csv, statistics, sys
src, *modes = sys.argv[1:]
rows = list(csv.DictReader(line for line in open(src) if not line.startswith("#")))
med = {m: statistics.median(int(r["data_per_sec"]) for r in rows if r["mode"] == m) for m in modes}
for m in modes:
    rs = [r for r in rows if r["mode"] == m]
    line = f"{m}: median {med[m]:.0f} Data/s"
    if m != "alone":
        line += (f" = x{med[m] / med['alone']:.2f} of alone; flood median "
                 f"{statistics.median(int(r['flood_interests_per_sec']) for r in rs):.0f} Interests/s")
    line += (f"; consumer Nacks {sum(int(r['nacks']) for r in rs)} "
             f"(Congestion {sum(int(r['congestion_nacks']) for r in rs)}), "
             f"timeouts {sum(int(r['timeouts']) for r in rs)} over {len(rs)} rounds")
    print(line)
PY
echo "wrote $out" >&2
