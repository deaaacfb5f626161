#!/usr/bin/env bash
# Builds Kite and starts the forwarder on its built-in defaults, then shows it doing its job:
# a python-ndn producer registers a prefix and a python-ndn consumer fetches Data through Kite
# over NFD's unix socket, exactly as with NFD. The forwarder keeps running until Ctrl-C.
#   scripts/run.sh              defaults: /run/nfd/nfd.sock (or a per-user fallback), UDP and
#                               TCP on 127.0.0.1:6363
#   scripts/run.sh ARGS...      extra options for `kite run` (see: kite run --help)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  echo "run.sh: cargo is not installed. Kite needs a stable Rust toolchain (1.88 or newer)." >&2
  exit 1
fi

echo "==> building kite (release)"
cargo build --release --quiet -p kite
kite=target/release/kite

echo "==> python-ndn (PyPI) in .venv, for the demo apps"
if ! .venv/bin/python -c 'import ndn' 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check 'python-ndn>=0.5.2,<0.6'
fi

log=$(mktemp)
# Job control puts kite in a process group of its own, so a Ctrl-C reaches this script
# alone, which passes exactly one signal on: kite takes a second signal as "exit now,
# without cleaning up".
set -m
"$kite" run "$@" 2> >(tee "$log" >&2) &
pid=$!
set +m
stop() {
  trap - EXIT INT TERM
  kill "-$1" "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$log"
}
trap 'stop INT; exit 130' INT
trap 'stop TERM; exit 143' TERM
trap 'stop TERM' EXIT

# The socket path is the one kite run announces ("forwarding ... on unix://PATH, ...").
socket=""
for _ in $(seq 1 50); do
  socket=$(grep -oE 'unix://[^ ,]+' "$log" | head -1 | sed 's|unix://||' || true)
  [[ -n "$socket" && -S "$socket" ]] && break
  kill -0 "$pid" 2>/dev/null || { echo "run.sh: kite run exited (see above)" >&2; exit 1; }
  sleep 0.1
done
[[ -S "$socket" ]] || { echo "run.sh: kite run did not open its socket" >&2; exit 1; }

echo
echo "==> a python-ndn producer and consumer through Kite ($socket)"
.venv/bin/python scripts/demo.py "$socket"
if "$kite" status --help >/dev/null 2>&1; then
  echo
  echo "\$ kite status --socket $socket"
  "$kite" status --socket "$socket" || true
  echo
  echo "\$ kite face list --socket $socket"
  "$kite" face list --socket "$socket" || true
fi
echo
echo "Kite is forwarding (pid $pid). Point NDN apps at $socket; stop with Ctrl-C."
wait "$pid"
