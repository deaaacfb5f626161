#!/usr/bin/env bash
# Forwarder CPU per Data of Kite's AF_XDP Ethernet face against its AF_PACKET one, on one link
# in one run. Two network namespaces, A and B, joined by a veth pair (MTU 3500 by default: a
# veth takes an XDP program in driver mode up to MTU 3506 on 4 KiB pages, in generic mode
# above; Kite's AF_XDP path takes MTUs up to 3826). A runs `kite run --local-only --ether vethA`
# (AF_PACKET) and `kite perf server` on A's unix socket, which signs every Data it serves with
# DigestSha256 (a SHA-256 digest of the Data, no key), one signing thread (--threads 0). B runs
# the forwarder under test, `kite run --local-only --ether vethB` (af_packet) or `--xdp vethB`
# (af_xdp, Kite's XDP program and AF_XDP sockets), with a permanent unicast Ethernet face toward
# A's address and the route /bench/xdp through it, and `kite perf client` on B's unix socket
# (window WINDOW, 64) fetching new names from A for SECONDS. Both applications take shared
# memory from their forwarder (Kite's default). Per run, with B started afresh for it:
#   b_us_per_data  B's CPU (utime + stime of /proc/PID/stat, all its threads) over the client's
#                  run, divided by the Data the client received: µs of forwarder CPU per Data;
#                  b_user_us, b_sys_us: its user and system parts
#   a_us_per_data  the same for A (AF_PACKET in both variants: a control, and where part of
#                  B's receive path is charged, since a veth's receive runs in the sender's
#                  softirq)
#   data_per_sec   the client's throughput; frames_per_data: frames vethA sent per Data
#                  (1: no NDNLPv2 fragmentation)
# Rounds run every payload in every variant, the variants' order alternating round by round.
# B's `kite channel list` is kept once per variant and payload, after its first run (IO gives
# the path); the script stops if the af_xdp variant did not get AF_XDP or its Data did not come
# through the XDP program. With DIAG=1 (default) a separate diagnostic run per variant and
# payload, after the rounds, counts B's system calls per Data (`perf stat` of the
# syscalls:sys_enter_* tracepoints, or `strace -c -f` where perf cannot; strace slows B), not
# in the medians. With IDLE=S, B's idle CPU per variant after that: B started afresh, A and
# the server up, no client, 2 s to settle, then B's utime + stime over S seconds as a share
# of one core (xdp-…-idle.csv; the target is under 0.5 %). ROUNDS=0 with DIAG=0 runs only
# that, leaving the other files as they are.
# With OLD=path (another build, named by OLD_COMMIT, default "old"), a third variant,
# af_xdp_old, runs B's --xdp with that binary in the same rounds (A and the applications stay
# KITE's), for an A/B of two builds' AF_XDP path in one run; the order of the three rotates
# round by round. VARIANTS="af_xdp" leaves af_packet out (default "af_packet af_xdp").
# Variant af_xdp_2t is --xdp with two I/O threads running two forwarding shards inline
# (--io-threads 2 --threads 2 --inline): AF_XDP steering hands each Data from A to the I/O
# thread of the shard its PIT token names; the client's unix face lives on one of them, so its
# Interests for the other shard still cross. With QUEUES=N the veth has N receive and transmit
# queues (default 1), each with its AF_XDP sockets; DISPATCH_PREFIX=K sets B's
# forwarder.dispatch_prefix (default 2; 0, the whole name, spreads one client's names over
# both shards). The column b_crossed is B's kite_io_crossed_total summed over its I/O threads
# over the client's run (af_xdp_2t only). SHM=false runs B with --shm false, so the client
# keeps its unix socket and, with two I/O threads, its face moves to the thread of the shard
# its Interests go to (a shared-memory face stays where it was accepted).
# Writes bench/results/xdp-<commit>.csv (with OLD: xdp-ab-<old>-<commit>.csv; every run),
# the same name's -channels.txt and, with DIAG, -syscalls.csv; prints medians and the ratios
# af_xdp / af_packet (and af_xdp / af_xdp_old) per payload.
#   sudo bench/xdp.sh [SECONDS] [ROUNDS]        (defaults: 10 and 5)
# KITE=path uses that binary instead of building (COMMIT=name names the results for it
# instead of HEAD's commit); PAYLOADS="1000 3300" (octets of content per Data; its frame is
# about 110 octets longer), MTU=3500, WINDOW=64, DIAG=0|1, DIAG_SECONDS=5. Needs root, ip
# (iproute2) and a kernel with AF_XDP.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,52p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
secs=${1:-10}
rounds=${2:-5}
read -ra payloads <<<"${PAYLOADS:-1000 3300}"
mtu=${MTU:-3500}
window=${WINDOW:-64}
diag=${DIAG:-1}
diag_secs=${DIAG_SECONDS:-5}
idle_secs=${IDLE:-0}
(( EUID == 0 )) || { echo "xdp.sh: needs root (network namespaces, XDP)" >&2; exit 1; }
if [[ -z ${KITE:-} ]]; then
  cargo build --release --quiet -p kite
  KITE=target/release/kite
fi
KITE=$(realpath "$KITE")
commit=${COMMIT:-$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")}
name=xdp-$commit
read -ra variants_all <<<"${VARIANTS:-af_packet af_xdp}"
if [[ -n ${OLD:-} ]]; then
  OLD=$(realpath "$OLD")
  name=xdp-ab-${OLD_COMMIT:-old}-$commit
  variants_all+=(af_xdp_old)
fi
out=bench/results/$name.csv
channels=bench/results/$name-channels.txt
syscalls=bench/results/$name-syscalls.csv
idle=bench/results/$name-idle.csv
tmp=$(mktemp -d)
ns_a=kite-xdp-a-$$
ns_b=kite-xdp-b-$$
mac_a=02:00:00:00:0a:01
mac_b=02:00:00:00:0b:01
prefix=/bench/xdp
hz=$(getconf CLK_TCK)
a_pid=""
b_pid=""
server_pid=""
stop() { # pid: SIGTERM, then wait for it
  [[ -n ${1:-} ]] || return 0
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  stop "$server_pid"
  stop "$b_pid"
  stop "$a_pid"
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

ip netns add "$ns_a"
ip netns add "$ns_b"
ip -n "$ns_a" link set lo up
ip -n "$ns_b" link set lo up
queues=${QUEUES:-1}
ip -n "$ns_a" link add vethA address "$mac_a" numrxqueues "$queues" numtxqueues "$queues" \
  type veth peer name vethB address "$mac_b" numrxqueues "$queues" numtxqueues "$queues" netns "$ns_b"
ip -n "$ns_a" link set vethA mtu "$mtu" up
ip -n "$ns_b" link set vethB mtu "$mtu" up
cat >"$tmp/a.toml" <<EOF
[[face]]
uri = "ether://[$mac_b]"
local_uri = "dev://vethA"
persistency = "permanent"
EOF
cat >"$tmp/b.toml" <<EOF
[[face]]
uri = "ether://[$mac_a]"
local_uri = "dev://vethB"
persistency = "permanent"
[[route]]
prefix = "$prefix"
face = "ether://[$mac_a]"
[forwarder]
dispatch_prefix = ${DISPATCH_PREFIX:-2}
[metrics]
listen = "127.0.0.1:9465"
EOF

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
uticks() { awk '{print $14}' "/proc/$1/stat"; } # user time alone
tx_frames_a() { # frames vethA has sent
  ip -n "$ns_a" -s -j link show vethA | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])'
}
json_field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
vethb_channel() { # B's vethB channel in `kite channel list --json`: io_path, drops or xdp_ndn
  "$KITE" channel list --socket "$tmp/b.sock" --json | python3 -c '
import json, sys
c = next(c for c in json.load(sys.stdin) if c["local_uri"] == "dev://vethB")
f = sys.argv[1]
print(sum(c["drops"].values()) if f == "drops" else (c["xdp"] or {}).get("ndn", 0)
      if f == "xdp_ndn" else c["io_path"])' "$1"
}
wait_log() { # file, text: waits up to 10 s for text in the log
  for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  echo "xdp.sh: no \"$2\" in $1 after 10 s:" >&2
  cat "$1" >&2
  exit 1
}

start_a() {
  ip netns exec "$ns_a" "$KITE" run --local-only --ether vethA --config "$tmp/a.toml" \
    --socket "$tmp/a.sock" >/dev/null 2>"$tmp/a.log" &
  a_pid=$!
  wait_log "$tmp/a.log" "configured face created"
}

start_server() { # payload
  stop "$server_pid"
  "$KITE" perf server "$prefix" --payload "$1" --threads 0 --socket "$tmp/a.sock" \
    >/dev/null 2>"$tmp/server.err" &
  server_pid=$!
  wait_log "$tmp/server.err" "kite perf server:"
}

b_crossed() { # B's kite_io_crossed_total over its I/O threads (0 without the series)
  ip netns exec "$ns_b" python3 -c '
import urllib.request
m = urllib.request.urlopen("http://127.0.0.1:9465/metrics", timeout=5).read().decode()
print(sum(int(l.split()[-1]) for l in m.splitlines() if l.startswith("kite_io_crossed_total{")))'
}

start_b() { # variant (af_packet, af_xdp, af_xdp_2t or af_xdp_old); sets b_pid and b_io, its channel's I/O path
  local flag=--ether bin=$KITE threads=()
  [[ $1 == af_xdp* ]] && flag=--xdp
  [[ $1 == af_xdp_old ]] && bin=$OLD
  [[ $1 == af_xdp_2t ]] && threads=(--io-threads 2 --threads 2 --inline)
  rm -f "$tmp/b.sock"
  ip netns exec "$ns_b" "$bin" run --local-only "$flag" vethB "${threads[@]}" --shm "${SHM:-true}" --config "$tmp/b.toml" \
    --socket "$tmp/b.sock" >/dev/null 2>"$tmp/b.log" &
  b_pid=$!
  wait_log "$tmp/b.log" "configured route added"
  b_io=$(vethb_channel io_path)
  if [[ $1 == af_xdp* && $b_io != af_xdp* ]] || [[ $1 == af_packet && $b_io != af_packet ]]; then
    echo "xdp.sh: B's $1 variant runs on \"$b_io\"; its log:" >&2
    cat "$tmp/b.log" >&2
    exit 1
  fi
}

stop_b() {
  stop "$b_pid"
  b_pid=""
  if ip -n "$ns_b" -d link show dev vethB | grep -q prog/xdp; then
    echo "xdp.sh: an XDP program is left on vethB after B stopped" >&2
    exit 1
  fi
}

client() { # seconds -> the client's JSON line
  "$KITE" perf client "$prefix" --window "$window" --duration "${1}s" --socket "$tmp/b.sock" \
    --json 2>"$tmp/client.err"
}

us_per() { python3 -c "print(round($1 * 1e6 / max($2, 1), 3))"; } # seconds, count -> µs each

run() { # round payload variant: appends one row to the CSV and prints it
  local r=$1 p=$2 v=$3
  start_b "$v"
  client 1 >/dev/null # warm-up: faces, PIT, the applications' shared memory
  local b0 u0 a0 f0 c0 line b1 u1 a1 f1 c1 received drops
  b0=$(ticks "$b_pid"); u0=$(uticks "$b_pid"); a0=$(ticks "$a_pid"); f0=$(tx_frames_a)
  c0=$(b_crossed)
  line=$(client "$secs")
  b1=$(ticks "$b_pid"); u1=$(uticks "$b_pid"); a1=$(ticks "$a_pid"); f1=$(tx_frames_a)
  c1=$(b_crossed)
  received=$(json_field "$line" received)
  drops=$(vethb_channel drops)
  if ! grep -q "^== $v $p " "$channels"; then
    { echo "== $v $p B, after round $r: kite channel list"; "$KITE" channel list --socket "$tmp/b.sock"; echo; } >>"$channels"
  fi
  # The af_xdp variant's Data must have come through the XDP program (its NDN verdicts count
  # every NDN frame it handed to the AF_XDP sockets since B started).
  if [[ $v == af_xdp* ]] && (( $(vethb_channel xdp_ndn) < received )); then
    echo "xdp.sh: B's XDP program handed over $(vethb_channel xdp_ndn) NDN frames for $received Data" >&2
    exit 1
  fi
  stop_b
  echo "$r,$p,$v,$(json_field "$line" seconds),$received,$(json_field "$line" data_per_sec),$(python3 -c "print(($b1 - $b0) / $hz)"),$(us_per "($b1 - $b0) / $hz" "$received"),$(us_per "($u1 - $u0) / $hz" "$received"),$(us_per "($b1 - $b0 - $u1 + $u0) / $hz" "$received"),$(us_per "($a1 - $a0) / $hz" "$received"),$(python3 -c "print(round(($f1 - $f0) / max($received, 1), 4))"),$drops,$((c1 - c0)),${b_io//,/;}" >>"$out"
  tail -1 "$out"
}

# Syscalls of B over one client run of DIAG_SECONDS: "syscall,calls" lines, then the client's JSON.
events=(epoll_wait epoll_pwait poll ppoll sched_yield sendto recvfrom sendmsg recvmsg sendmmsg
  recvmmsg write writev read futex)
diag_tool=none
if [[ $diag == 1 ]]; then
  if perf stat -x, -e syscalls:sys_enter_sched_yield -o /dev/null -- true 2>/dev/null; then
    diag_tool=perf
  elif command -v strace >/dev/null; then
    diag_tool=strace
  else
    echo "xdp.sh: neither perf (with syscall tracepoints) nor strace: no syscall diagnostic" >&2
  fi
fi
diag_run() { # payload variant: appends its rows to the syscalls CSV and prints them
  local p=$1 v=$2 line
  start_b "$v"
  client 1 >/dev/null
  if [[ $diag_tool == perf ]]; then
    local ev="task-clock,raw_syscalls:sys_enter"
    for s in "${events[@]}"; do ev+=",syscalls:sys_enter_$s"; done
    line=$(perf stat -x, -e "$ev" -o "$tmp/perf.txt" -p "$b_pid" -- \
      "$KITE" perf client "$prefix" --window "$window" --duration "${diag_secs}s" \
      --socket "$tmp/b.sock" --json 2>/dev/null)
    # task-clock is in ms: kept as µs of CPU in the calls column.
    awk -F, '/task-clock/ {printf "task_clock_us,%d\n", $1 * 1000}
      /raw_syscalls:sys_enter/ {print "all," $1}
      /syscalls:sys_enter_/ {sub("syscalls:sys_enter_", "", $3); print $3 "," $1}' \
      "$tmp/perf.txt" >"$tmp/counts"
  else
    strace -c -f -q -p "$b_pid" -o "$tmp/strace.txt" &
    local st=$!
    sleep 0.5
    line=$(client "$diag_secs")
    kill -INT "$st"
    wait "$st" || true
    awk '$NF == "total" {print "all," $4} $1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" {print $NF "," $4}' \
      "$tmp/strace.txt" >"$tmp/counts"
  fi
  stop_b
  local received
  received=$(json_field "$line" received)
  while IFS=, read -r name calls; do
    echo "$p,$v,$diag_tool,$received,$name,$calls,$(python3 -c "print(round($calls / max($received, 1), 4))")" | tee -a "$syscalls"
  done <"$tmp/counts"
}

(( rounds == 0 )) || {
  echo "# commit ${commit}; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; $(uname -r); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# A: kite run --local-only --ether vethA, kite perf server $prefix --payload P --threads 0 (DigestSha256); veth MTU $mtu, $queues queue(s)"
  echo "# B: kite run --local-only --ether|--xdp vethB (af_xdp_2t: --io-threads 2 --threads 2 --inline), dispatch_prefix ${DISPATCH_PREFIX:-2}, --shm ${SHM:-true}, kite perf client --window $window --duration ${secs}s; ${rounds} rounds"
  [[ -z ${OLD:-} ]] || echo "# af_xdp_old: B is $OLD (${OLD_COMMIT:-old}) with --xdp"
  echo "# *_us_per_data: utime + stime of the forwarder over the client's run / Data received, µs"
  echo "round,payload,variant,seconds,received,data_per_sec,b_cpu_sec,b_us_per_data,b_user_us,b_sys_us,a_us_per_data,frames_per_data,b_channel_drops,b_crossed,io_path"
} >"$out"
(( rounds == 0 )) || : >"$channels"
start_a
for r in $(seq "$rounds"); do
  for p in "${payloads[@]}"; do
    start_server "$p"
    # The variants' order rotates round by round.
    k=$(( (r - 1) % ${#variants_all[@]} ))
    variants=("${variants_all[@]:k}" "${variants_all[@]:0:k}")
    for v in "${variants[@]}"; do
      run "$r" "$p" "$v"
    done
  done
done
if [[ $diag_tool != none ]]; then
  echo "payload,variant,tool,received,syscall,calls,per_data" >"$syscalls"
  for p in "${payloads[@]}"; do
    start_server "$p"
    for v in "${variants_all[@]}"; do
      diag_run "$p" "$v"
    done
  done
fi
if (( idle_secs > 0 )); then
  echo "variant,seconds,b_cpu_sec,pct_of_a_core" >"$idle"
  start_server "${payloads[0]}"
  for v in "${variants_all[@]}"; do
    start_b "$v"
    sleep 2
    b0=$(ticks "$b_pid")
    sleep "$idle_secs"
    b1=$(ticks "$b_pid")
    stop_b
    echo "$v,$idle_secs,$(python3 -c "print(($b1 - $b0) / $hz)"),$(python3 -c "print(round(($b1 - $b0) / $hz / $idle_secs * 100, 3))")" | tee -a "$idle"
  done
fi
(( rounds > 0 )) || exit 0

python3 - "$out" "$syscalls" "$diag_tool" <<'PY'
import csv, os, statistics, sys
src, sys_src, tool = sys.argv[1:4]
rows = list(csv.DictReader(l for l in open(src) if not l.startswith("#")))
med = lambda xs: statistics.median(xs) if xs else float("nan")
print("medians (B: the forwarder under test; A: its AF_PACKET peer, a control):")
for p in sorted({r["payload"] for r in rows}, key=int):
    m = {}
    present = [v for v in ("af_packet", "af_xdp", "af_xdp_2t", "af_xdp_old") if any(r["variant"] == v for r in rows)]
    for v in present:
        sel = [r for r in rows if r["payload"] == p and r["variant"] == v]
        m[v] = {k: med([float(r[k]) for r in sel]) for k in
                ("b_us_per_data", "b_user_us", "b_sys_us", "a_us_per_data", "data_per_sec",
                 "frames_per_data", "b_crossed")}
        print(f"  {p} B {v:10}: B {m[v]['b_us_per_data']:.3f} µs/Data (user {m[v]['b_user_us']:.3f}, "
              f"system {m[v]['b_sys_us']:.3f}), A {m[v]['a_us_per_data']:.3f} "
              f"µs/Data, {m[v]['data_per_sec']:.0f} Data/s, {m[v]['frames_per_data']:.3f} frames/Data, "
              f"{m[v]['b_crossed']:.0f} crossed "
              f"(of {len(sel)})")
        if m[v]["frames_per_data"] > 1.05:
            print(f"  warning: {p} B Data take more than one frame (NDNLPv2 fragmentation)")
    # Paired by round: both variants of a round saw the same machine load.
    pairs = {}
    for r in rows:
        if r["payload"] == p:
            pairs.setdefault(r["round"], {})[r["variant"]] = r
    for num, den in (("af_xdp", "af_packet"), ("af_xdp_2t", "af_xdp"), ("af_xdp", "af_xdp_old"),
                     ("af_xdp_old", "af_packet")):
        if num not in m or den not in m:
            continue
        paired = [float(x[num]["b_us_per_data"]) / float(x[den]["b_us_per_data"])
                  for x in pairs.values() if num in x and den in x]
        x, k = m[num], m[den]
        print(f"  {p} B {num} / {den}: B CPU per Data x{x['b_us_per_data'] / k['b_us_per_data']:.3f} "
              f"(median of per-round ratios x{med(paired):.3f}), A+B x"
              f"{(x['b_us_per_data'] + x['a_us_per_data']) / (k['b_us_per_data'] + k['a_us_per_data']):.3f}, "
              f"Data/s x{x['data_per_sec'] / k['data_per_sec']:.3f}")
if tool != "none" and os.path.exists(sys_src):
    print(f"B's system calls per Data ({tool}, a separate diagnostic run per variant):")
    d = list(csv.DictReader(open(sys_src)))
    for p in sorted({r["payload"] for r in d}, key=int):
        for v in ("af_packet", "af_xdp", "af_xdp_2t", "af_xdp_old"):
            sel = [r for r in d if r["payload"] == p and r["variant"] == v
                   and float(r["per_data"]) >= 0.001]
            text = ", ".join(f"{r['syscall']} {float(r['per_data']):.3f}" for r in sel
                             if r["syscall"] != "task_clock_us")
            cpu = [r for r in sel if r["syscall"] == "task_clock_us"]
            cpu = f" ({float(cpu[0]['per_data']):.2f} µs task-clock/Data)" if cpu else ""
            print(f"  {p} B {v:10}: {text}{cpu}")
PY
if [[ $diag_tool != none ]]; then echo "wrote $out, $channels and $syscalls"; else echo "wrote $out and $channels"; fi
