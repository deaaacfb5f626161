#!/usr/bin/env bash
# UDP throughput of two `kite` binaries, interleaved round by round: each binary's `kite run`
# (defaults, a UDP listener on loopback) is loaded by `kite bench daemon --forwarder
# udp://...`, whose consumer (window 64) and producer are two UDP peers, each with a face of
# its own; the load generator is NEW_KITE's for both. Prints each run and the medians and
# their ratio (new/old) per payload; writes bench/results/udp-faces-<commit>.csv.
#   bench/udp-faces.sh OLD_KITE NEW_KITE [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 rounds=${3:-5} secs=${4:-5}
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out=bench/results/udp-faces-$commit.csv
tmp=$(mktemp -d)
daemon=""
cleanup() {
  [[ -n $daemon ]] && kill "$daemon" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
port=$((20000 + RANDOM % 20000))
{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; old $old, new $new"
  echo "# command: bench/udp-faces.sh OLD NEW $rounds $secs (kite run --udp 127.0.0.1:PORT; $new bench daemon --forwarder udp://127.0.0.1:PORT --control SOCKET --window 64 --payload P --duration ${secs}s)"
  echo "round,binary,payload,exchanges_per_sec"
} >"$out"
for r in $(seq "$rounds"); do
  for payload in 1000 8000; do
    for which in old new; do
      bin=$old
      [[ $which == new ]] && bin=$new
      rm -f "$tmp/nfd.sock"
      "$bin" run --socket "$tmp/nfd.sock" --udp "127.0.0.1:$port" --tcp "127.0.0.1:$((port + 1))" \
        2>"$tmp/kite.log" &
      daemon=$!
      for _ in $(seq 100); do [[ -S $tmp/nfd.sock ]] && break; sleep 0.1; done
      line=$("$new" bench daemon --forwarder "udp://127.0.0.1:$port" --control "$tmp/nfd.sock" \
        --window 64 --payload "$payload" --duration "${secs}s" --json 2>"$tmp/bench.err" | tail -1) ||
        { cat "$tmp/bench.err" >&2; exit 1; }
      kill "$daemon" 2>/dev/null || true
      wait "$daemon" 2>/dev/null || true
      daemon=""
      rate=$(python3 -c 'import json,sys; print(int(json.loads(sys.argv[1])["exchanges_per_sec"]))' "$line")
      echo "$r,$which,$payload,$rate" | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
for p in sorted({r["payload"] for r in rows}, key=int):
    m = {w: statistics.median(int(r["exchanges_per_sec"]) for r in rows
                              if r["payload"] == p and r["binary"] == w) for w in ("old", "new")}
    print(f"payload {p}: median old {m['old']:.0f}, new {m['new']:.0f} exchanges/s, "
          f"new/old x{m['new'] / m['old']:.3f}")
PY
echo "wrote $out" >&2
