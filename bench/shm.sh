#!/usr/bin/env bash
# Shared-memory faces against the unix socket, alternating round by round through one
# `kite run` (release build, one forwarding thread, inline):
# - `kite perf server` (DigestSha256, --threads 0) and `kite perf client` (window 64) at
#   P = 1000 and 8000 octets: Data/s, and the CPU per exchange (utime + stime divided by the
#   Data the client received) of the forwarder (`kite run`, from /proc over the client's run),
#   of the server (likewise) and of the client (its rusage), and the forwarder's busy time per
#   exchange (the I/O threads' `busy` seconds from /status.json: turns that did work, its
#   spins and sleeps left out; wall-clock time, so a turn preempted by other load counts whole,
#   and the document is refreshed at most once a second: for runs of several seconds on an
#   otherwise idle machine);
# - the forwarding plane's own floor at the same payloads: `kite bench fwd` in-process (no
#   sockets, no rings), its CPU per exchange (rusage over exchanges, FIB set-up included);
# - `kite put` of a 100 MB file and `kite get` of it: goodput;
# - idle: ten `kite ping --server` applications connected, the daemon's CPU over 10 s.
# The socket side sets KITE_SHM=off in every tool; the daemon is the same.
# Writes bench/results/shm-<commit>.csv and a bar chart of the `kite perf` medians, .svg.
#   bench/shm.sh [SECONDS] [ROUNDS]     (defaults 5 and 3)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-3}
cargo build --release --quiet -p kite
kite=$PWD/target/release/kite
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out=bench/results/shm-$commit.csv
work=$(mktemp -d)
sock=$work/kite.sock
mport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$kite" run --local-only --threads 1 --socket "$sock" --metrics "127.0.0.1:$mport" >"$work/kite.log" 2>&1 &
daemon=$!
cleanup() { kill -TERM "$daemon" 2>/dev/null || true; jobs -p | xargs -r kill 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
head -c 100000000 /dev/urandom > "$work/object"
hz=$(getconf CLK_TCK)

ticks() { awk '{print $14 + $15}' "/proc/${1:-$daemon}/stat"; }
# Runs a command; prints its standard output, then its CPU seconds (utime + stime) on a last line.
cpu_of() { python3 -c '
import resource, subprocess, sys
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(out.strip().splitlines()[-1] if out.strip() else "{}")
print(r.ru_utime + r.ru_stime)' "$@"; }
json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

busy() { # the I/O threads' busy seconds, summed
  python3 -c '
import json, sys, urllib.request
doc = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/status.json", timeout=5))
print(sum(t["busy"] for t in doc["io_threads"]))' "$mport"
}

us_per() { python3 -c "print(round($1 * 1e6 / max($2, 1), 3))"; } # seconds, count -> µs each

perf_round() { # payload -> "data_per_sec fwd_us server_us client_us fwd_busy_us" (per exchange)
  "$kite" perf server /bench/perf --sign digest-sha256 --payload "$1" --threads 0 \
    --socket "$sock" >/dev/null 2>"$work/server.err" &
  local server=$!
  for _ in $(seq 100); do grep -q "kite perf server:" "$work/server.err" && break; sleep 0.1; done
  local before sbefore bbefore out after safter bafter
  bbefore=$(busy); before=$(ticks); sbefore=$(ticks "$server")
  out=$(cpu_of "$kite" perf client /bench/perf --window 64 --duration "${secs}s" --socket "$sock" --json)
  after=$(ticks); safter=$(ticks "$server"); bafter=$(busy)
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  local line received
  line=$(head -1 <<<"$out")
  received=$(json_field "$line" received)
  echo "$(json_field "$line" data_per_sec) $(us_per "($after-$before)/$hz" "$received")" \
    "$(us_per "($safter-$sbefore)/$hz" "$received") $(us_per "$(tail -1 <<<"$out")" "$received")" \
    "$(us_per "($bafter-$bbefore)" "$received")"
}

floor_round() { # payload -> "exchanges_per_sec cpu_us_per_exchange" of `kite bench fwd`
  # Two runs, of SECONDS and twice as long: the difference of their CPU over the difference
  # of their exchanges leaves out the set-up (FIB, Content Store warm-up).
  local short long
  short=$(cpu_of "$kite" bench fwd --payload "$1" --duration "${secs}s" --json)
  long=$(cpu_of "$kite" bench fwd --payload "$1" --duration "$((2 * secs))s" --json)
  local n1 n2
  n1=$(json_field "$(head -1 <<<"$short")" exchanges)
  n2=$(json_field "$(head -1 <<<"$long")" exchanges)
  echo "$(json_field "$(head -1 <<<"$long")" exchanges_per_sec)" \
    "$(us_per "($(tail -1 <<<"$long") - $(tail -1 <<<"$short"))" "$n2 - $n1")"
}

get_round() { # -> goodput_mbps
  "$kite" put /bench/object "$work/object" --socket "$sock" >"$work/put.out" 2>/dev/null &
  local put=$!
  for _ in $(seq 300); do [[ -s $work/put.out ]] && break; sleep 0.1; done
  rm -f "$work/copy"
  local ok=0
  "$kite" get "$(head -1 "$work/put.out")" --socket "$sock" -o "$work/copy" 2>"$work/get.err" || ok=$?
  kill -TERM "$put" 2>/dev/null || true
  wait "$put" 2>/dev/null || true
  if [[ $ok != 0 ]] || ! cmp -s "$work/object" "$work/copy"; then
    echo "shm.sh: kite get failed or its copy differs:" >&2
    cat "$work/get.err" >&2
    echo nan
    return
  fi
  sed -n 's/^Goodput: \([0-9.]*\).*/\1/p' "$work/get.err"
}

idle_round() { # -> percent of a core over 10 s with ten idle applications
  local pids=() i
  for i in $(seq 10); do
    "$kite" ping --server "/bench/idle/$i" --socket "$sock" >/dev/null 2>&1 &
    pids+=($!)
  done
  sleep 2
  local before after
  before=$(ticks)
  sleep 10
  after=$(ticks)
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  python3 -c "print(round(($after-$before)/$hz/10*100, 3))"
}

{
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# kite run --local-only --threads 1; perf: --payload P --threads 0 / --window 64 --duration ${secs}s; get: 100 MB"
  echo "# cpu columns: CPU (utime + stime) per exchange in µs; floor: kite bench fwd in-process, runs of ${secs} and $((2 * secs)) s, difference"
  echo "# fwd_busy_us: the forwarder's I/O threads' busy time per exchange in µs (/status.json)"
  echo "round,mode,test,payload,value,cpu_us_per_exchange,server_cpu_us,client_cpu_us,fwd_busy_us"
} > "$out"
for r in $(seq "$rounds"); do
  for p in 1000 8000; do
    read -r rate cpu < <(floor_round "$p")
    echo "$r,inproc,floor,$p,$rate,$cpu,,," | tee -a "$out"
  done
  for mode in unix shm; do
    if [[ $mode == unix ]]; then export KITE_SHM=off; else unset KITE_SHM; fi
    for p in 1000 8000; do
      read -r rate cpu scpu ccpu busy < <(perf_round "$p")
      echo "$r,$mode,perf,$p,$rate,$cpu,$scpu,$ccpu,$busy" | tee -a "$out"
    done
    echo "$r,$mode,get,100000000,$(get_round),,,," | tee -a "$out"
    echo "$r,$mode,idle10,0,$(idle_round),,,," | tee -a "$out"
  done
done
unset KITE_SHM
echo "medians:"
python3 - "$out" "${out%.csv}.svg" "kite perf over the unix socket and shared memory, medians ($commit)" <<'PY'
import csv, statistics, subprocess, sys, tempfile
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith('#'))][1:]
keys = sorted({(r[2], r[3], r[1]) for r in rows})
med = {}
for test, p, mode in keys:
    sel = [r for r in rows if (r[2], r[3], r[1]) == (test, p, mode)]
    def median(col):
        v = [float(r[col]) for r in sel if r[col] not in ('', 'nan')]
        return statistics.median(v) if v else None
    med[test, p, mode] = median(4)
    cols = [("CPU us/exchange", 5), ("server", 6), ("client", 7), ("forwarder busy", 8)]
    extra = "".join(f", {n} {median(c):.3f}" for n, c in cols if median(c) is not None)
    value = "none" if med[test, p, mode] is None else f"{med[test, p, mode]:.1f}"
    print(f"{test} {p} {mode}: {value} (of {len(sel)}){extra}")
for test, p, _ in sorted({k for k in keys if k[2] == 'shm'}):
    s, u = med.get((test, p, 'shm')), med.get((test, p, 'unix'))
    if s and u:
        print(f"{test} {p}: shm / unix x{s / u:.2f}")
bars = ["label,exchanges_per_sec"]
for p in sorted({p for t, p, _ in med if t == 'perf'}, key=int):
    bars += [f"{mode} {p} B,{med['perf', p, mode]}" for mode in ('unix', 'shm') if med.get(('perf', p, mode))]
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("\n".join(bars) + "\n")
subprocess.run([sys.executable, "bench/bars.py", f.name, sys.argv[2], sys.argv[3]], check=True)
PY
echo "wrote $out and ${out%.csv}.svg"
