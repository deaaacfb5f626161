#!/usr/bin/env bash
# What NDNLPv2 LpReliability does to goodput over a lossy link: two `kite run` daemons in two
# network namespaces joined by a veth pair, each namespace dropping LOSS % of the UDP
# datagrams it receives on port 6363 (an nftables input rule: `numgen random mod 100 < LOSS
# drop`; dropped on output, the sender's sendmmsg would fail instead), a UDP face each way with `--lp-reliability on` or `off`, a `kite put` of a random
# object on B and a `kite get` of it from A. For each loss rate the modes are interleaved
# round by round (the daemons are restarted for each fetch, so nothing is served from a
# cache); reports the median goodput, time, and `kite get`'s own retransmissions and the
# link's (A's and B's faces together) of each. Needs root (ip netns, nft).
# Writes bench/results/lp-reliability-<commit>.csv.
#   bench/lp-reliability.sh [OCTETS] [ROUNDS] [LOSSES...]
# KITE=path uses that binary instead of building.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-10000000}
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
losses=("$@")
[[ ${#losses[@]} -gt 0 ]] || losses=(0 1 5)
if [[ -z ${KITE:-} ]]; then
  cargo build --release --quiet -p kite
  KITE=target/release/kite
fi
KITE=$(realpath "$KITE")
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out=bench/results/lp-reliability-$commit.csv
tmp=$(mktemp -d)
ns_a=kite-lpr-a-$$
ns_b=kite-lpr-b-$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

ip netns add "$ns_a"
ip netns add "$ns_b"
ip link add va netns "$ns_a" type veth peer name vb netns "$ns_b"
ip -n "$ns_a" addr add 10.77.0.1/24 dev va
ip -n "$ns_b" addr add 10.77.0.2/24 dev vb
for n in "$ns_a" "$ns_b"; do ip -n "$n" link set lo up; done
ip -n "$ns_a" link set va up
ip -n "$ns_b" link set vb up

object=$tmp/object
head -c "$size" /dev/urandom >"$object"
want=$(sha256sum "$object" | cut -d' ' -f1)

# Starts `kite run` in namespace $1 on socket $2, listening on UDP $3.
daemon() {
  ip netns exec "$1" "$KITE" run --socket "$2" --udp "$3:6363" --tcp 127.0.0.1:6363 \
    2>>"$tmp/kite.log" &
  pids+=($!)
  for _ in $(seq 100); do [[ -S $2 ]] && break; sleep 0.1; done
}

# The face toward $3 on the daemon at socket $1, with reliability $2; its FaceId.
face() {
  "$KITE" face create "udp4://$3:6363" --lp-reliability "$2" --socket "$1" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["face_id"])'
}

# Link retransmissions counted on face $2 of the daemon at socket $1.
link_retx() {
  "$KITE" face show "$2" --socket "$1" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["lp_reliability_counters"]["retransmitted"])'
}

# One fetch: loss rate $1 (percent), reliability $2 (on/off); prints a CSV row.
measure() {
  local loss=$1 mode=$2
  for n in "$ns_a" "$ns_b"; do
    ip netns exec "$n" nft -f - <<EOF
table inet loss
delete table inet loss
table inet loss {
  chain out {
    type filter hook input priority 0;
    udp dport 6363 numgen random mod 100 < $loss drop
  }
}
EOF
  done
  local sa=$tmp/a.sock sb=$tmp/b.sock
  daemon "$ns_a" "$sa" 10.77.0.1
  daemon "$ns_b" "$sb" 10.77.0.2
  local fa fb
  fa=$(face "$sa" "$mode" 10.77.0.2)
  fb=$(face "$sb" "$mode" 10.77.0.1)
  "$KITE" route add /bench "$fa" --socket "$sa" >/dev/null
  "$KITE" put /bench/object "$object" --socket "$sb" >"$tmp/put.out" 2>/dev/null &
  local put=$!
  pids+=("$put")
  for _ in $(seq 300); do [[ -s $tmp/put.out ]] && break; sleep 0.1; done
  local started ended
  started=$(date +%s.%N)
  "$KITE" get /bench/object -o "$tmp/got" --socket "$sa" 2>"$tmp/get.err"
  ended=$(date +%s.%N)
  [[ $(sha256sum "$tmp/got" | cut -d' ' -f1) == "$want" ]] || { echo "corrupt fetch" >&2; exit 1; }
  local secs retx link
  secs=$(echo "$ended - $started" | bc -l)
  retx=$(sed -n 's/^Retransmissions: //p' "$tmp/get.err")
  link=$(($(link_retx "$sa" "$fa") + $(link_retx "$sb" "$fb")))
  kill "$put" 2>/dev/null || true
  wait "$put" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  rm -f "$sa" "$sb" "$tmp/put.out" "$tmp/got"
  printf '%s,%s,%s,%.3f,%.1f,%s,%s\n' "$loss" "$mode" "$round" "$secs" \
    "$(echo "$size * 8 / $secs / 1000000" | bc -l)" "$retx" "$link"
}

echo "loss_percent,lp_reliability,round,seconds,goodput_mbit_s,get_retransmissions,link_retransmissions" >"$out"
for loss in "${losses[@]}"; do
  for round in $(seq "$rounds"); do
    for mode in ${MODES:-off on}; do
      measure "$loss" "$mode" | tee -a "$out"
    done
  done
done

python3 - "$out" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"\nmedians over rounds ({sys.argv[1]}):")
print("loss%  reliability  goodput Mbit/s  seconds  get-retx  link-retx")
for loss in dict.fromkeys(r["loss_percent"] for r in rows):
    for mode in ("off", "on"):
        rs = [r for r in rows if r["loss_percent"] == loss and r["lp_reliability"] == mode]
        med = lambda k: statistics.median(float(r[k]) for r in rs)
        print(f"{loss:>5}  {mode:>11}  {med('goodput_mbit_s'):>14.1f}  {med('seconds'):>7.2f}"
              f"  {med('get_retransmissions'):>8.0f}  {med('link_retransmissions'):>9.0f}")
EOF
