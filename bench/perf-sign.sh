#!/usr/bin/env bash
# NDNperf's Table 1 on this machine: `kite perf server` signing every Data with each kind
# (8192 B payload, N signing threads) and `kite perf client` (window 64) through `kite run`,
# plus a cached row (the server signs 4096 names once; the client cycles through them, so the
# forwarder's Content Store and the server's memory answer). Columns: kind, Data/s, goodput
# Mbps, server signing cores (wall time inside sign calls / client duration), the signing
# threads' CPU-seconds per second, and signed Data per CPU-second of a signing thread (the
# per-core signing rate, free of time spent preempted on a busy machine). Writes
# bench/results/perf-sign-<commit>.csv.
#   bench/perf-sign.sh [SECONDS] [SIGNING_THREADS]
# KITE=path uses that binary instead of building; KINDS="ecdsa-p256 ..." limits the rows.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
threads=${2:-2}
if [[ -z ${KITE:-} ]]; then
  cargo build --release --quiet -p kite
  KITE=target/release/kite
fi
commit=$(git rev-parse --short HEAD)
out=bench/results/perf-sign-$commit.csv
tmp=$(mktemp -d)
"$KITE" run --local-only --socket "$tmp/nfd.sock" 2>"$tmp/kite.log" &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [[ -S $tmp/nfd.sock ]] && break; sleep 0.1; done

# One row: label, server flags, client flags.
row() {
  local label=$1 sflags=$2 cflags=$3
  "$KITE" perf server "/perf/$label" --payload 8192 --threads "$threads" --socket "$tmp/nfd.sock" \
    $sflags >"$tmp/server.out" 2>"$tmp/server.err" &
  local server=$!
  for _ in $(seq 300); do grep -q "kite perf server:" "$tmp/server.err" && break; sleep 0.1; done
  local json
  json=$("$KITE" perf client "/perf/$label" --window 64 --duration "${secs}s" --socket "$tmp/nfd.sock" \
    $cflags --json 2>/dev/null | tail -1)
  if ! kill -TERM $server 2>/dev/null; then
    echo "perf-sign: the $label server had stopped:" >&2; cat "$tmp/server.err" >&2
  fi
  wait $server || true
  local sign_secs cpu_secs per_cpu
  sign_secs=$(sed -n 's/.*(\([0-9.]*\) s signing in all.*/\1/p' "$tmp/server.out")
  cpu_secs=$(sed -n 's/.*signing threads used \([0-9.]*\) CPU-s.*/\1/p' "$tmp/server.out")
  per_cpu=$(sed -n 's/.* \([0-9]*\) signed Data per CPU-second.*/\1/p' "$tmp/server.out")
  python3 - "$label" "$json" "${sign_secs:-0}" "${cpu_secs:-0}" "${per_cpu:-0}" <<'PY' | tee -a "$out"
import json, sys
label, j = sys.argv[1], json.loads(sys.argv[2])
sign, cpu, per_cpu = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
s = j['seconds']
print(f"{label},{j['data_per_sec']:.0f},{j['goodput_mbps']:.1f},{sign / s:.2f},{cpu / s:.2f},{per_cpu}")
PY
}

echo "kind,data_per_sec,goodput_mbps,server_signing_cores,signer_cpu_per_sec,signed_per_cpu_sec" | tee "$out"
for kind in ${KINDS:-digest-sha256 hmac-sha256 ecdsa-p256 ecdsa-p384 rsa-1024 rsa-2048 rsa-3072 ed25519 null}; do
  row "$kind" "--sign $kind" ""
done
row cached "--sign ecdsa-p256 --cached" "--names 4096"
echo "wrote $out" >&2
