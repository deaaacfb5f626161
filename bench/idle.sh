#!/usr/bin/env bash
# Idle cost of the daemon: starts a release `kite run` with unix, UDP and TCP listeners on
# loopback, connects one python-ndn app (a producer that stays registered), lets it settle, then
# measures over SECONDS (default 30) the CPU the daemon used (utime + stime of all its threads,
# from /proc) and each thread's context switches (its wake-ups). Target: under 0.5% of one core.
# Writes bench/results/idle-<commit>.txt and exits 1 when the target is missed.
#   bench/idle.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-30}
target_pct=0.5
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out="bench/results/idle-${commit}.txt"
python=${KITE_PYTHON:-$PWD/.venv/bin/python}
"$python" -c 'import ndn' 2>/dev/null || { echo "idle.sh: python-ndn is needed (run scripts/test.sh once, or set KITE_PYTHON)" >&2; exit 1; }

cargo build --release --quiet -p kite
kite=target/release/kite
dir=$(mktemp -d)
free_port() { "$python" -c "import socket,sys; s=socket.socket(socket.AF_INET, getattr(socket, sys.argv[1])); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])" "$1"; }
udp=$(free_port SOCK_DGRAM)
tcp=$(free_port SOCK_STREAM)

"$kite" run --socket "$dir/nfd.sock" --udp "127.0.0.1:$udp" --tcp "127.0.0.1:$tcp" 2>"$dir/kite.log" &
kite_pid=$!
app_pid=""
cleanup() {
  [[ -n "$app_pid" ]] && kill "$app_pid" 2>/dev/null || true
  kill "$kite_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 100); do [[ -S "$dir/nfd.sock" ]] && break; sleep 0.05; done
"$python" tests/interop/pyndn_daemon.py serve "$dir/nfd.sock" /idle >"$dir/app.out" &
app_pid=$!
for _ in $(seq 100); do grep -q ready "$dir/app.out" 2>/dev/null && break; sleep 0.05; done
sleep 2

hz=$(getconf CLK_TCK)
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$kite_pid/stat"; }
switches() {
  for t in /proc/"$kite_pid"/task/*; do
    printf '%s %s\n' "$(cat "$t/comm")" \
      "$(awk '/ctxt_switches/ { s += $2 } END { print s }' "$t/status")"
  done | sort
}
t0=$(ticks); s0=$(switches); start=$(date +%s.%N)
sleep "$secs"
t1=$(ticks); s1=$(switches); end=$(date +%s.%N)

calc() { awk "BEGIN { print $1 }"; }
wall=$(calc "$end - $start")
pct=$(calc "($t1 - $t0) / $hz / $wall * 100")
verdict=$(calc "($pct < $target_pct) ? 1 : 0")
{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores"
  echo "# command: ${kite} run --socket <tmp> --udp 127.0.0.1:${udp} --tcp 127.0.0.1:${tcp}; one python-ndn producer connected"
  printf 'window_s %.2f\n' "$wall"
  echo "cpu_ticks $((t1 - t0)) (CLK_TCK ${hz})"
  printf 'cpu_percent_of_one_core %.3f\n' "$pct"
  echo "target_percent ${target_pct}"
  echo "wakeups_per_second_by_thread (context switches):"
  join <(echo "$s0") <(echo "$s1") | while read -r name a b; do
    printf '  %s %.2f\n' "$name" "$(calc "($b - $a) / $wall")"
  done
  [[ "$verdict" == 1 ]] && echo "result PASS" || echo "result FAIL"
} | tee "$out"
[[ "$verdict" == 1 ]]
