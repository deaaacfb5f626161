#!/usr/bin/env bash
# Where the daemon's context switches come from, per exchange, with one I/O thread and with
# two: the load of bench/io-threads.sh (`kite run --local-only --threads 2`, two
# `kite bench daemon --forwarder` clients, window 64, 1000 B), with `perf record -e
# sched:sched_switch -g` on the daemon for 3 s of it. Each switch is counted by the kernel
# function that gave up the core: `do_epoll_wait` (the thread slept; an eventfd write or a
# socket woke it), `__x64_sys_sched_yield` (an idle poll yielded the core), and
# `exit_to_user_mode_loop` (preempted on its way out of a system call, mostly by a thread its
# write or read woke). PIN=1 runs the daemon on CPU 1 and the clients on CPU 0. Needs perf
# and the rights to trace the daemon.
#   bench/io-threads-switches.sh [KITE_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
kite=${1:-}
if [[ -z $kite ]]; then
  cargo build --release --quiet -p kite
  kite=target/release/kite
fi
daemon_cpu=()
client_cpu=()
if [[ ${PIN:-0} == 1 ]]; then
  daemon_cpu=(taskset -c 1)
  client_cpu=(taskset -c 0)
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in 1 2; do
  sock=$dir/kite-$n.sock
  "${daemon_cpu[@]}" "$kite" run --local-only --socket "$sock" --threads 2 --io-threads "$n" \
    --log warn 2>"$dir/daemon.log" &
  pid=$!
  for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.05; done
  for c in 1 2; do
    "${client_cpu[@]}" "$kite" bench daemon --forwarder "$sock" --duration 4s --json \
      >"$dir/client-$c.json" 2>/dev/null &
  done
  sleep 0.5
  perf record -q -e sched:sched_switch -g -o "$dir/switches.data" -p "$pid" -- sleep 3 \
    >/dev/null 2>&1
  wait %2 %3
  kill -INT $pid
  wait $pid || true
  # The clients ran 4 s; the 3 s recorded are counted at their mean rate.
  exchanges=$(python3 - "$dir/client-1.json" "$dir/client-2.json" <<'PY'
import json, sys
runs = [json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:]]
print(sum(r["exchanges_per_sec"] for r in runs) * 3)
PY
)
  echo "io_threads=$n: $(printf '%.0f' "$exchanges") exchanges in 3 s; switches per exchange:"
  perf script -i "$dir/switches.data" -F trace,ip,sym 2>/dev/null | awk -v ex="$exchanges" '
    /prev_state=/ { want = 1; total++; next }
    want && /do_epoll_wait|__x64_sys_sched_yield|exit_to_user_mode_loop|futex/ {
      c[$2]++; want = 0
    }
    END {
      for (k in c) printf "  %-26s %.4f\n", k, c[k] / ex
      printf "  %-26s %.4f\n", "all switches", total / ex
    }'
done
