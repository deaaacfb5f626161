#!/usr/bin/env bash
# Kite's tools side by side: the same tools through `kite run` and through NDNd v1.5.3 (one
# forwarding thread each), forwarders alternating round by round:
# - `kite perf server` (DigestSha256, payload P, signing in its reading thread: --threads 0,
#   no hand-off between threads on a machine of two cores) and `kite perf client`
#   (window 64) for P = 1000 and 8000 octets: Data/s;
# - `kite put` of a 100 MB file and `kite get` of it: goodput.
# Writes bench/results/tools-vs-ndnd-<commit>.csv and an SVG of the perf medians beside it.
#   bench/tools-vs-ndnd.sh [SECONDS] [ROUNDS]     (defaults 5 and 3; needs root for the namespace)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-3}
cargo build --release --quiet -p kite
kite=$PWD/target/release/kite
ndnd=$(scripts/ndnd.sh)
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out=bench/results/tools-vs-ndnd-$commit.csv
work=$(mktemp -d)
ns=kite-tools-vs-ndnd-$$
# shellcheck source=bench/forwarders.sh
source bench/forwarders.sh
ip netns add "$ns"
trap cleanup EXIT
head -c 100000000 /dev/urandom > "$work/object"

json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

perf_round() { # payload -> "data_per_sec timeouts"
  "$kite" perf server /bench/perf --sign digest-sha256 --payload "$1" --threads 0 \
    --socket "$sock" >/dev/null 2>"$work/server.err" &
  local server=$!
  for _ in $(seq 100); do grep -q "kite perf server:" "$work/server.err" && break; sleep 0.1; done
  local line
  line=$("$kite" perf client /bench/perf --window 64 --duration "${secs}s" --socket "$sock" \
    --json 2>/dev/null | tail -1)
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  echo "$(json_field "$line" data_per_sec) $(json_field "$line" timeouts)"
}

get_round() { # -> "goodput_mbps timeouts"
  "$kite" put /bench/object "$work/object" --socket "$sock" >"$work/put.out" 2>/dev/null &
  local put=$!
  for _ in $(seq 300); do [[ -s $work/put.out ]] && break; sleep 0.1; done
  "$kite" get "$(head -1 "$work/put.out")" --socket "$sock" -o "$work/copy" 2>"$work/get.err"
  kill -TERM "$put" 2>/dev/null || true
  wait "$put" 2>/dev/null || true
  cmp -s "$work/object" "$work/copy" || { echo "tools-vs-ndnd.sh: the copy differs" >&2; exit 1; }
  echo "$(sed -n 's/^Goodput: \([0-9.]*\).*/\1/p' "$work/get.err") $(sed -n 's/^Timeouts: //p' "$work/get.err")"
}

{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; NDNd $(basename "$ndnd"); 1 forwarding thread"
  echo "# perf: kite perf server --sign digest-sha256 --payload P --threads 0 / kite perf client --window 64 --duration ${secs}s --json"
  echo "# get: kite put of 100 MB (8000-octet segments) / kite get (CUBIC, default window)"
  echo "round,forwarder,test,payload,value,timeouts"
} > "$out"
for r in $(seq "$rounds"); do
  for fwd in kite ndnd; do
    for payload in 1000 8000; do
      "start_$fwd" 1
      read -r rate timeouts <<<"$(perf_round "$payload")"
      stop
      echo "$r,$fwd,perf_data_per_sec,$payload,$rate,$timeouts" | tee -a "$out"
    done
    "start_$fwd" 1
    read -r mbps timeouts <<<"$(get_round)"
    stop
    echo "$r,$fwd,get_goodput_mbps,100000000,$mbps,$timeouts" | tee -a "$out"
  done
done

python3 - "$out" "${out%.csv}.svg" "kite perf through Kite vs NDNd ($commit)" <<'PY'
import csv, statistics, subprocess, sys, tempfile
src, svg, title = sys.argv[1:4]
rows = list(csv.DictReader(line for line in open(src) if not line.startswith("#")))
groups = {}
for r in rows:
    groups.setdefault((r["test"], r["payload"], r["forwarder"]), []).append(float(r["value"]))
med = {k: statistics.median(v) for k, v in groups.items()}
bars = ["label,exchanges_per_sec"]
for test, payload in sorted({(t, p) for t, p, _ in med}):
    k, n = med[(test, payload, "kite")], med[(test, payload, "ndnd")]
    print(f"{test} {payload}: Kite {k:.0f}, NDNd {n:.0f}, Kite/NDNd = {k / n:.2f}")
    if test == "perf_data_per_sec":
        bars += [f"Kite {payload} B,{k}", f"NDNd {payload} B,{n}"]
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("\n".join(bars) + "\n")
subprocess.run([sys.executable, "bench/bars.py", f.name, svg, title], check=True)
PY
