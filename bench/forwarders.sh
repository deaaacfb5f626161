# Shared by bench/vs-ndnd.sh and bench/tools-vs-ndnd.sh: start and stop Kite or NDNd v1.5.3 on
# a unix socket under $work, NDNd in the private network namespace $ns (it binds UDP on every
# address). The caller sets kite, ndnd, work and ns, creates the namespace, and calls stop.
# After start_kite/start_ndnd THREADS, $sock is the forwarder's socket and $pid its process.

pid=""
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; fi
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}

wait_socket() {
  for _ in $(seq 100); do
    [[ -S $1 ]] && return 0
    sleep 0.1
  done
  echo "$(basename "$0"): no socket at $1" >&2
  return 1
}

start_ndnd() { # threads
  cat > "$work/ndnd.yml" <<YML
core:
  log_level: WARN
faces:
  udp:
    enabled_unicast: false
    enabled_multicast: false
  tcp:
    enabled: false
  unix:
    enabled: true
    socket_path: $work/ndnd.sock
  websocket:
    enabled: false
fw:
  threads: $1
tables:
  rib:
    readvertise_nlsr: false
YML
  rm -f "$work/ndnd.sock"
  ip netns exec "$ns" "$ndnd" fw run "$work/ndnd.yml" >"$work/ndnd.log" 2>&1 &
  pid=$!
  wait_socket "$work/ndnd.sock"
  sock=$work/ndnd.sock
}

start_kite() { # threads
  rm -f "$work/kite.sock"
  "$kite" run --socket "$work/kite.sock" --local-only --threads "$1" >"$work/kite.log" 2>&1 &
  pid=$!
  wait_socket "$work/kite.sock"
  sock=$work/kite.sock
}

stop() {
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
}

