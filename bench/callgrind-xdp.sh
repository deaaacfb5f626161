#!/usr/bin/env bash
# Instructions and CPU per exchange of the whole `kite run` daemon forwarding between two
# AF_XDP Ethernet faces. Three network namespaces in a line, A — B — C, joined by veth pairs
# (MTU 1500): A runs `kite run --local-only --ether ab` with a permanent face toward B and
# `kite perf client` (window 64) on A's unix socket; C runs `kite run --local-only --ether cb`
# and `kite perf server` (DigestSha256, --threads 0) on C's; B, the daemon measured, runs
# `kite run --local-only --threads 1 --xdp ba --xdp bc` (one forwarding shard, inline) with a
# permanent face toward C and the route, its face toward A made on demand. A and C use
# AF_PACKET.
#   instructions  B under callgrind, two client runs of SHORT and LONG seconds, each against
#                 a fresh B warmed by a 2 s run: callgrind's counters are zeroed as the
#                 measured run starts and dumped as it ends (callgrind_control), so start-up,
#                 warm-up and shut-down are left out, and so is how fast B ran (the earlier
#                 way, the difference of two whole runs over the difference of their
#                 exchanges, went wrong when other work on the cores made the two warm-ups
#                 differ). Each run's instructions over its exchanges, and both together.
#                 Under callgrind B is the bottleneck, so it never idles. B's Content Store
#                 holds CS_CAPACITY entries (1024 unless set; 0: the daemon's default), as
#                 in bench/callgrind-daemon.sh, so it evicts throughout and its buffers go
#                 round as in a steady state: with the default 65536 it only fills during
#                 the runs, and every copy it keeps comes from malloc.
#   CPU           B natively, ROUNDS client runs of SECONDS: B's utime + stime
#                 (/proc/PID/stat) over the run divided by the Data the client received; the
#                 median, with its user and system parts. A veth's receive runs in the
#                 sender's softirq, so part of B's receive path is charged to A and C, and
#                 part of theirs to B.
#   sudo bench/callgrind-xdp.sh [PAYLOAD] [SHORT LONG] [SECONDS ROUNDS]   (1000, 4 8, 8 5)
# KITE=path uses that binary instead of building (COMMIT=name names the results). Writes
# bench/results/callgrind-xdp-<commit>.txt. KEEP=dir keeps B's callgrind profiles there
# (cg.SHORT.1 and cg.LONG.1 are the measured runs; callgrind_annotate --inclusive=yes).
# Needs root, ip (iproute2), valgrind and a kernel with AF_XDP.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
payload=${1:-1000} short=${2:-4} long=${3:-8} secs=${4:-8} rounds=${5:-5}
cs=${CS_CAPACITY:-1024} cs_flags=()
(( cs > 0 )) && cs_flags=(--cs-capacity "$cs")
(( EUID == 0 )) || { echo "callgrind-xdp.sh: needs root (network namespaces, XDP)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "callgrind-xdp.sh: valgrind is not installed" >&2; exit 1; }
if [[ -z ${KITE:-} ]]; then
  cargo build --release --quiet -p kite
  KITE=target/release/kite
fi
KITE=$(realpath "$KITE")
commit=${COMMIT:-$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")}
out=bench/results/callgrind-xdp-$commit.txt
tmp=$(mktemp -d)
ns=(kite-cgx-a-$$ kite-cgx-b-$$ kite-cgx-c-$$)
mac_ab=02:00:00:00:0c:0a mac_ba=02:00:00:00:0c:0b mac_bc=02:00:00:00:0c:1b mac_cb=02:00:00:00:0c:1c
prefix=/bench/cgx
hz=$(getconf CLK_TCK)
pids=()
cleanup() {
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  for n in "${ns[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

for n in "${ns[@]}"; do ip netns add "$n"; ip -n "$n" link set lo up; done
ip -n "${ns[0]}" link add ab address "$mac_ab" type veth peer name ba address "$mac_ba" netns "${ns[1]}"
ip -n "${ns[1]}" link add bc address "$mac_bc" type veth peer name cb address "$mac_cb" netns "${ns[2]}"
ip -n "${ns[0]}" link set ab up
ip -n "${ns[1]}" link set ba up
ip -n "${ns[1]}" link set bc up
ip -n "${ns[2]}" link set cb up
route_toml() { # MAC DEV: a permanent face toward MAC on DEV, and the route through it
  cat <<EOF
[[face]]
uri = "ether://[$1]"
local_uri = "dev://$2"
persistency = "permanent"
[[route]]
prefix = "$prefix"
face = "ether://[$1]"
EOF
}
route_toml "$mac_ba" ab >"$tmp/a.toml"
route_toml "$mac_cb" bc >"$tmp/b.toml"

wait_for() { # file, text: waits up to 120 s (callgrind starts slowly)
  for _ in $(seq 1200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "callgrind-xdp.sh: no \"$2\" in $1:" >&2
  cat "$1" >&2
  exit 1
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
uticks() { awk '{print $14}' "/proc/$1/stat"; }

ip netns exec "${ns[0]}" "$KITE" run --local-only --ether ab --config "$tmp/a.toml" \
  --socket "$tmp/a.sock" >/dev/null 2>"$tmp/a.log" &
pids+=("$!")
ip netns exec "${ns[2]}" "$KITE" run --local-only --ether cb --socket "$tmp/c.sock" \
  >/dev/null 2>"$tmp/c.log" &
pids+=("$!")
wait_for "$tmp/a.log" "configured route added"
wait_for "$tmp/c.log" "NFD management"
"$KITE" perf server "$prefix" --sign digest-sha256 --payload "$payload" --threads 0 \
  --socket "$tmp/c.sock" >/dev/null 2>"$tmp/server.err" &
pids+=("$!")
wait_for "$tmp/server.err" "kite perf server:"

b_pid=""
start_b() { # [valgrind args...]: starts B (under valgrind when given), sets b_pid
  rm -f "$tmp/b.sock"
  ip netns exec "${ns[1]}" "$@" "$KITE" run --local-only --threads 1 --xdp ba --xdp bc "${cs_flags[@]}" \
    --config "$tmp/b.toml" --socket "$tmp/b.sock" >/dev/null 2>"$tmp/b.log" &
  b_pid=$!
  wait_for "$tmp/b.log" "configured route added"
  if ! grep -q 'channel on af_xdp.*interface="ba"' "$tmp/b.log" ||
    ! grep -q 'channel on af_xdp.*interface="bc"' "$tmp/b.log"; then
    echo "callgrind-xdp.sh: B's interfaces are not on AF_XDP:" >&2
    cat "$tmp/b.log" >&2
    exit 1
  fi
}
stop_b() { kill -TERM "$b_pid"; wait "$b_pid" || true; b_pid=""; }
client() { # seconds -> Data received
  "$KITE" perf client "$prefix" --window 64 --duration "${1}s" --socket "$tmp/a.sock" --json \
    2>/dev/null | tail -1 | sed -n 's/.*"received":\([0-9]*\).*/\1/p'
}

cg_run() { # seconds -> Data received; B's profile of the measured run in $tmp/cg.SECONDS.1
  start_b valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1"
  client 2 >/dev/null # B's face toward A, the PIT and CS warmed
  callgrind_control -z "$b_pid" >/dev/null
  local n
  n=$(client "$1")
  callgrind_control -d "$b_pid" >/dev/null
  stop_b
  echo "$n"
}
instr() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$tmp/cg.$1.1"; }

{
  echo "# commit $commit; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; $(uname -r); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# A — B — C over veths (MTU 1500); B: kite run --local-only --threads 1 --xdp ba --xdp bc ${cs_flags[*]}"
  echo "# A, C: kite run --local-only --ether (AF_PACKET); kite perf client --window 64 on A, kite perf server --sign digest-sha256 --payload $payload --threads 0 on C"
} | tee "$out"
xs=$(cg_run "$short")
xl=$(cg_run "$long")
is=$(instr "$short") il=$(instr "$long")
if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$tmp"/cg.* "$KEEP/"; fi
echo "callgrind: $xs exchanges in ${short} s, $xl in ${long} s; instructions $is, $il" | tee -a "$out"
python3 -c "print(f'per run: {$is / max($xs, 1):.0f}, {$il / max($xl, 1):.0f}')" | tee -a "$out"
python3 -c "print(f'instructions per exchange (B, whole daemon, two AF_XDP faces, $payload B): {($is + $il) / max($xs + $xl, 1):.0f}')" | tee -a "$out"

echo "round,received,b_us_per_data,b_user_us,b_sys_us" >>"$out"
for r in $(seq "$rounds"); do
  start_b
  client 1 >/dev/null
  b0=$(ticks "$b_pid"); u0=$(uticks "$b_pid")
  n=$(client "$secs")
  b1=$(ticks "$b_pid"); u1=$(uticks "$b_pid")
  stop_b
  python3 -c "
n = max($n, 1); t = ($b1 - $b0) / $hz; u = ($u1 - $u0) / $hz
print(f'$r,$n,{t * 1e6 / n:.3f},{u * 1e6 / n:.3f},{(t - u) * 1e6 / n:.3f}')" | tee -a "$out"
done
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if l[0].isdigit() or l.startswith("round")))
m = {k: statistics.median(float(r[k]) for r in rows) for k in ("b_us_per_data", "b_user_us", "b_sys_us")}
line = (f"median B CPU per exchange: {m['b_us_per_data']:.3f} µs (user {m['b_user_us']:.3f}, "
        f"system {m['b_sys_us']:.3f}) of {len(rows)} runs")
print(line)
open(sys.argv[1], "a").write(line + "\n")
PY
echo "wrote $out"
