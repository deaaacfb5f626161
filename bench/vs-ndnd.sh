#!/usr/bin/env bash
# Kite and NDNd side by side: the same load (`kite bench daemon --forwarder`: a consumer keeping
# 64 Interests outstanding, a producer answering each with fresh Data) through `kite run` and
# through NDNd v1.5.3, for 1000 B and 8000 B payloads, 1 and 2 forwarding threads, and two
# transports: unix (both apps on the unix socket) and udp (each app on its own on-demand UDP
# face over loopback, the producer's prefix registered for its face by FaceId through the unix
# socket; both forwarders' UDP MTU is 8800, so each Data is one datagram). The two forwarders
# alternate round by round so both see the same machine noise. Both forwarders and the load
# generator run in one private network namespace (NDNd binds UDP on every address).
# Writes bench/results/vs-ndnd-<commit>.csv (Data/s, goodput, Nacks, Interests given up as lost
# and, of those, answered late) and an SVG of the medians beside it.
#   bench/vs-ndnd.sh [SECONDS] [ROUNDS] [TRANSPORTS]
#   (defaults 5, 3 and "unix udp"; needs root for the namespace)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-3}
transports=${3:-unix udp}
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
ip -n "$ns" link set lo up

json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; NDNd $(basename "$ndnd")"
  echo "# command: kite bench daemon --forwarder SOCKET|udp://127.0.0.1:6363 [--control SOCKET] --window 64 --payload P --duration ${secs}s --json, ${rounds} rounds, forwarders alternating"
  echo "round,forwarder,transport,threads,payload,exchanges_per_sec,goodput_mbit_per_sec,nacks,lost,late"
} > "$out"
for payload in 1000 8000; do
  for threads in 1 2; do
    for transport in $transports; do
      udp_port=""
      [[ $transport == udp ]] && udp_port=6363
      for r in $(seq "$rounds"); do
        for fwd in kite ndnd; do
          "start_$fwd" "$threads"
          target=(--forwarder "$sock")
          [[ $transport == udp ]] && target=(--forwarder "udp://127.0.0.1:$udp_port" --control "$sock")
          line=$(ip netns exec "$ns" "$kite" bench daemon "${target[@]}" --window 64 \
            --payload "$payload" --duration "${secs}s" --json 2>"$work/bench.err" | tail -1) \
            || { cat "$work/bench.err" >&2; exit 1; }
          stop
          rate=$(python3 -c 'import json,sys; print(int(json.loads(sys.argv[1])["exchanges_per_sec"]))' "$line")
          echo "$r,$fwd,$transport,$threads,$payload,$rate,$(json_field "$line" goodput_mbit_per_sec),$(json_field "$line" nacks),$(json_field "$line" lost),$(json_field "$line" late)" | tee -a "$out"
        done
      done
    done
  done
done

python3 - "$out" "${out%.csv}.svg" "Kite vs NDNd through unix sockets and UDP faces ($commit)" <<'PY'
import csv, statistics, subprocess, sys, tempfile
src, svg, title = sys.argv[1:4]
rows = list(csv.DictReader(line for line in open(src) if not line.startswith("#")))
groups = {}
for r in rows:
    key = (r["transport"], r["payload"], r["threads"], r["forwarder"])
    groups.setdefault(key, []).append(r)
med = {k: statistics.median(int(r["exchanges_per_sec"]) for r in v) for k, v in groups.items()}
good = {k: statistics.median(float(r["goodput_mbit_per_sec"]) for r in v) for k, v in groups.items()}
lost = {k: sum(int(r["lost"]) for r in v) for k, v in groups.items()}
bars = ["label,exchanges_per_sec"]
cases = sorted({k[:3] for k in med}, key=lambda c: (c[0] != "unix", int(c[1]), int(c[2])))
for transport, payload, threads in cases:
    k, n = (transport, payload, threads, "kite"), (transport, payload, threads, "ndnd")
    print(f"{transport} {payload} B, {threads} thread(s): Kite {med[k]:.0f}/s ({good[k]:.0f} Mbit/s, {lost[k]} lost), "
          f"NDNd {med[n]:.0f}/s ({good[n]:.0f} Mbit/s, {lost[n]} lost), Kite/NDNd = {med[k] / med[n]:.2f}")
    bars += [f"Kite {transport} {payload}B {threads}t,{med[k]}", f"NDNd {transport} {payload}B {threads}t,{med[n]}"]
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("\n".join(bars) + "\n")
subprocess.run([sys.executable, "bench/bars.py", f.name, svg, title], check=True)
PY
