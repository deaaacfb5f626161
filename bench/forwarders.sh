# Shared by bench/vs-ndnd.sh and bench/tools-vs-ndnd.sh: start and stop Kite or NDNd v1.5.3 on
# a unix socket under $work, both in the private network namespace $ns (NDNd binds UDP on every
# address). The caller sets kite, ndnd, work and ns, creates the namespace, and calls stop.
# With $udp_port set, each also listens for UDP on 127.0.0.1:$udp_port of the namespace (its
# loopback must be up), with an MTU of 8800 octets for UDP faces (Kite's and NFD's default;
# NDNd's own is 1420), so 8000-octet Data fits one datagram on both.
# After start_kite/start_ndnd THREADS, $sock is the forwarder's socket and $pid its process.

pid=""
udp_port=${udp_port:-}
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
    enabled_unicast: $([[ -n $udp_port ]] && echo true || echo false)
    enabled_multicast: false
    port_unicast: ${udp_port:-6363}
    default_mtu: 8800
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
  local listen=(--local-only)
  if [[ -n $udp_port ]]; then listen=(--udp "127.0.0.1:$udp_port" --tcp "127.0.0.1:$udp_port"); fi
  ip netns exec "$ns" "$kite" run --socket "$work/kite.sock" "${listen[@]}" --threads "$1" \
    >"$work/kite.log" 2>&1 &
  pid=$!
  wait_socket "$work/kite.sock"
  sock=$work/kite.sock
}

stop() {
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
}

