#!/usr/bin/env bash
# Instructions per exchange of the whole `kite run` daemon (I/O thread, input stage, forwarding
# plane, output), the stable counterpart of the CPU per exchange that bench/shm.sh measures:
# the daemon runs under callgrind (one forwarding thread, inline), `kite perf server`
# (DigestSha256, --threads 0) and `kite perf client` (window 64) run natively over shared
# memory or the unix socket. Two client runs, SHORT and LONG seconds, each against a fresh
# daemon; the difference of instructions over the difference of exchanges leaves out start-up
# and shut-down. Under callgrind the daemon is the bottleneck, so it never idles: its spins
# and polls barely count. The daemon runs with --cs-capacity 1024 unless other `kite run`
# flags follow `--`: the CS is then full, evicting one Data per new one, through both runs, as
# in a forwarder's steady state (with the default capacity the short run would not evict and
# the long one would, partly).
#   bench/callgrind-daemon.sh KITE [PAYLOAD] [shm|unix] [SHORT LONG] [-- KITE-RUN-FLAGS...]
#   e.g. bench/callgrind-daemon.sh target/release/kite 1000 shm 8 16
# Prints the per-exchange figure and keeps the LONG run's profile for callgrind_annotate.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# -lt 1 ]]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit $(( $# < 1 ))
fi
pos=()
while (( $# > 0 )) && [[ $1 != -- ]]; do pos+=("$1"); shift; done
run_flags=(--cs-capacity 1024)
if [[ ${1:-} == -- ]]; then shift; run_flags=("$@"); fi
kite=$(realpath "${pos[0]}") payload=${pos[1]:-1000} mode=${pos[2]:-shm} short=${pos[3]:-8} long=${pos[4]:-16}
command -v valgrind >/dev/null || { echo "callgrind-daemon: valgrind is not installed" >&2; exit 1; }
case $mode in
  shm) export KITE_SHM=on ;;
  unix) export KITE_SHM=off ;;
  *) echo "callgrind-daemon: mode is shm or unix, not $mode" >&2; exit 2 ;;
esac
dir=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT

# run SECONDS: one daemon under callgrind, one server and one client; prints the exchanges.
run() {
  local secs=$1 sock=$dir/kite-$1.sock
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$secs" \
    "$kite" run --local-only --threads 1 --socket "$sock" "${run_flags[@]}" >"$dir/kite-$secs.log" 2>&1 &
  local daemon=$!
  pids=("$daemon")
  for _ in $(seq 600); do [[ -S $sock ]] && break; sleep 0.1; done
  [[ -S $sock ]] || { echo "callgrind-daemon: the daemon did not start" >&2; cat "$dir/kite-$secs.log" >&2; exit 1; }
  "$kite" perf server /bench/perf --sign digest-sha256 --payload "$payload" --threads 0 \
    --socket "$sock" >/dev/null 2>"$dir/server-$secs.err" &
  pids+=("$!")
  for _ in $(seq 600); do grep -q "kite perf server:" "$dir/server-$secs.err" && break; sleep 0.1; done
  local json
  json=$("$kite" perf client /bench/perf --window 64 --duration "${secs}s" --socket "$sock" --json 2>/dev/null | tail -1)
  kill "${pids[1]}"
  wait "${pids[1]}" 2>/dev/null || true
  kill -TERM "$daemon"
  wait "$daemon" || true
  sed -n 's/.*"received":\([0-9]*\).*/\1/p' <<<"$json"
}
instr() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$dir/cg.$1"; }

echo "callgrind-daemon: $mode, $payload B, ${short} s then ${long} s under callgrind, kite run ${run_flags[*]}" >&2
xs=$(run "$short")
xl=$(run "$long")
is=$(instr "$short") il=$(instr "$long")
if [[ -z $xs || -z $xl || $xl -le $xs ]]; then
  echo "callgrind-daemon: the runs gave $xs and $xl exchanges; the longer must give more" >&2
  exit 1
fi
echo "$mode ${payload} B; ${short} s: ${xs} exchanges ${is} instr; ${long} s: ${xl} exchanges ${il} instr;" \
  "per exchange $(( (il - is) / (xl - xs) ))"
echo "profile: $dir/cg.$long"
