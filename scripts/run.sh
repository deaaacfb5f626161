#!/usr/bin/env bash
# Builds Kite and shows its current main job on built-in defaults.
#
# The forwarder daemon (`kite run`) arrives with a later milestone; until then this builds the
# `kite` binary and shows the packet codec doing its job on real packets: it encodes an
# Interest, a Data and a Nack, wraps one in an NDNLPv2 frame, and decodes each back, field by
# field, and shows a malformed packet rejected with its reason. Any further arguments are
# passed to `kite decode` instead (e.g. a packet in hex).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  echo "run.sh: cargo is not installed. Kite needs a stable Rust toolchain (1.85 or newer)." >&2
  exit 1
fi

echo "==> building kite (release)"
cargo build --release --quiet -p kite
kite=target/release/kite

if (( $# > 0 )); then
  exec "$kite" decode "$@"
fi

show() {
  echo
  printf '$ kite encode'; printf ' %q' "$@"; echo
  local hex
  hex=$("$kite" encode "$@")
  echo "$hex"
  echo "\$ kite decode $hex" | cut -c1-100
  "$kite" decode "$hex"
}

show interest /example/video/seg=0 --can-be-prefix --must-be-fresh --nonce 305419896 --lifetime 4000 --hop-limit 64
show data /example/video/v=1732280000/seg=0 --content "hello from Kite" --freshness 10000 --final-block-id seg=0
show nack /example/missing --reason no-route --nonce 7

echo
echo "\$ kite decode 05070703080161   # a truncated Interest: rejected with the reason"
"$kite" decode 05070703080161 || true
echo
echo "Kite's codec works. Try: $kite decode --help, $kite encode --help"
