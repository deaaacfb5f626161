#!/usr/bin/env bash
# Instructions `kite run` spends per flood Interest it refuses: the daemon runs under
# callgrind (one forwarding shard, inline) with the prefix /flood routed to a producer that
# never answers; `kite bench flood` sends Interests under it over UDP at RATE a second (new
# names, the longest lifetime), natively. Once the flood holds its share of the PIT, every
# Interest Kite reads from it is refused: answered with a Nack (Congestion) or dropped. Two
# runs, SHORT and LONG seconds of flood, each against a fresh daemon; the difference of
# instructions over the difference of refused Interests (Nacks sent plus Interests dropped
# for a full ring or a restrained face, from `kite face list`) leaves out start-up,
# shut-down and the Interests admitted before the PIT share was reached. Also per Interest the
# flooder sent (most never read: dropped by the kernel while the face is restrained).
#   bench/callgrind-flood.sh KITE [RATE] [SHORT LONG] [-- KITE-RUN-FLAGS...]
#   e.g. bench/callgrind-flood.sh target/release/kite 20000 4 8
# Prints the per-Interest figure and keeps the LONG run's profile for callgrind_annotate.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# -lt 1 ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit $(( $# < 1 ))
fi
pos=()
while (( $# > 0 )) && [[ $1 != -- ]]; do pos+=("$1"); shift; done
run_flags=()
if [[ ${1:-} == -- ]]; then shift; run_flags=("$@"); fi
kite=$(realpath "${pos[0]}") rate=${pos[1]:-20000} short=${pos[2]:-4} long=${pos[3]:-8}
command -v valgrind >/dev/null || { echo "callgrind-flood: valgrind is not installed" >&2; exit 1; }
dir=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
port=$((20000 + RANDOM % 20000))

# run SECONDS: one daemon under callgrind and one flooder; prints the Interests refused.
run() {
  local secs=$1 sock=$dir/kite-$1.sock
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$secs" \
    "$kite" run --threads 1 --socket "$sock" --udp "127.0.0.1:$port" --tcp "127.0.0.1:$((port + 1))" \
    "${run_flags[@]}" >"$dir/kite-$secs.log" 2>&1 &
  local daemon=$!
  pids=("$daemon")
  for _ in $(seq 600); do [[ -S $sock ]] && break; sleep 0.1; done
  [[ -S $sock ]] || { echo "callgrind-flood: the daemon did not start" >&2; cat "$dir/kite-$secs.log" >&2; exit 1; }
  "$kite" bench flood --socket "$sock" --udp "udp://127.0.0.1:$port" --rate "$rate" \
    --duration "${secs}s" >/dev/null 2>&1
  "$kite" face list --json --socket "$sock" | python3 -c '
import json, sys
faces = json.load(sys.stdin)
print(sum(f["counters"]["out_nacks"] + f["drops"]["in_queue_full"] for f in faces))'
  kill -TERM "$daemon"
  wait "$daemon" || true
}
instr() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$dir/cg.$1"; }

echo "callgrind-flood: UDP flood at $rate/s, ${short} s then ${long} s, kite run under callgrind ${run_flags[*]}" >&2
xs=$(run "$short")
xl=$(run "$long")
is=$(instr "$short") il=$(instr "$long")
if [[ -z $xs || -z $xl || $xl -le $xs ]]; then
  echo "callgrind-flood: the runs refused $xs and $xl Interests; the longer must refuse more" >&2
  exit 1
fi
echo "UDP flood at $rate/s; ${short} s: ${xs} refused ${is} instr; ${long} s: ${xl} refused ${il} instr;" \
  "per refused Interest $(( (il - is) / (xl - xs) )); per Interest sent $(( (il - is) / ((long - short) * rate) ))"
echo "profile: $dir/cg.$long"
