#!/usr/bin/env bash
# Kite and NDNd side by side: the same load (`kite bench daemon --forwarder SOCKET`: a consumer
# keeping 64 Interests outstanding, a producer answering each with fresh Data, both on unix
# sockets) through `kite run` and through NDNd v1.5.3, for 1000 B and 8000 B payloads and 1 and
# 2 forwarding threads, the two forwarders alternating round by round so both see the same
# machine noise. NDNd runs in a private network namespace (it binds UDP on every address).
# Writes bench/results/vs-ndnd-<commit>.csv and an SVG of the medians beside it.
#   bench/vs-ndnd.sh [SECONDS] [ROUNDS]     (defaults 5 and 3; needs root for the namespace)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-3}
cargo build --release --quiet -p kite
kite=$PWD/target/release/kite
ndnd=$(scripts/ndnd.sh)
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out=bench/results/vs-ndnd-$commit.csv
work=$(mktemp -d)
ns=kite-vs-ndnd-$$
# shellcheck source=bench/forwarders.sh
source bench/forwarders.sh
ip netns add "$ns"
trap cleanup EXIT

{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; NDNd $(basename "$ndnd")"
  echo "# command: kite bench daemon --forwarder SOCKET --window 64 --payload P --duration ${secs}s --json, ${rounds} rounds, forwarders alternating"
  echo "round,forwarder,threads,payload,exchanges_per_sec,nacks"
} > "$out"
for payload in 1000 8000; do
  for threads in 1 2; do
    for r in $(seq "$rounds"); do
      for fwd in kite ndnd; do
        "start_$fwd" "$threads"
        line=$("$kite" bench daemon --forwarder "$sock" --window 64 --payload "$payload" \
          --duration "${secs}s" --json 2>/dev/null | tail -1)
        stop
        rate=$(python3 -c 'import json,sys; print(int(json.loads(sys.argv[1])["exchanges_per_sec"]))' "$line")
        nacks=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["nacks"])' "$line")
        echo "$r,$fwd,$threads,$payload,$rate,$nacks" | tee -a "$out"
      done
    done
  done
done

python3 - "$out" "${out%.csv}.svg" "Kite vs NDNd through unix sockets ($commit)" <<'PY'
import csv, statistics, subprocess, sys, tempfile
src, svg, title = sys.argv[1:4]
rows = list(csv.DictReader(line for line in open(src) if not line.startswith("#")))
groups = {}
for r in rows:
    groups.setdefault((r["payload"], r["threads"], r["forwarder"]), []).append(int(r["exchanges_per_sec"]))
med = {k: statistics.median(v) for k, v in groups.items()}
bars = ["label,exchanges_per_sec"]
for payload, threads in sorted({(p, t) for p, t, _ in med}, key=lambda x: (int(x[0]), int(x[1]))):
    k, n = med[(payload, threads, "kite")], med[(payload, threads, "ndnd")]
    print(f"payload {payload} B, {threads} thread(s): Kite {k:.0f}/s, NDNd {n:.0f}/s, Kite/NDNd = {k / n:.2f}")
    bars += [f"Kite {payload} B {threads}t,{k}", f"NDNd {payload} B {threads}t,{n}"]
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("\n".join(bars) + "\n")
subprocess.run([sys.executable, "bench/bars.py", f.name, svg, title], check=True)
PY
