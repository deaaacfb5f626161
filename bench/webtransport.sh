#!/usr/bin/env bash
# A web page's segmented fetch: NDNts in headless Chromium (tests/interop/ndnts/browser/) fetches
# a SIZE MB object (`kite put` on Kite's unix socket) over Kite's WebSocket face and over a
# WebTransport (HTTP/3 datagram) face, RUNS times each, alternating, every run's SHA-256
# checked against the file. Prints the median goodput and time per transport and writes them to
# bench/results/webtransport-<commit>.txt (MB = 10^6 octets; the time runs from the face being
# up to the last octet, RDR version discovery included; Chromium's start and the connection are
# not counted). Beside each row, the forwarder's CPU per Data: its user + system time (from
# /proc/PID/stat) over the fetch, divided by the segments fetched, which counts the spinning of
# an I/O thread that waits for a slow consumer (50 µs after work, then sched_yield); for Kite
# also its threads' busy time per Data (kite_thread_busy_seconds_total from --metrics: the
# turns that did work). A third Kite row fetches the
# same object with `kite get` over a UDP face of the same daemon (kite get's own socket), for
# the CPU per Data of a UDP face beside the browser's two.
#
# The WebTransport face is --wt kite: the same `kite run` with `--http3` on a free port, its
# self-signed certificate trusted by the SHA-256 hash it logs; or --wt URL HASH: a face of the
# same `kite run` (started with the arguments after --, e.g. `-- --http3 127.0.0.1:4433`), its
# certificate trusted by its SHA-256 (hex). Without --wt the WebTransport row is NDNd v1.5.3's HTTP/3 face, serving the same file
# with `ndnd put`, in a private network namespace (unshare -rn) with its own page server and
# Chromium: a figure for NDNd, labelled so, not for Kite; NDNd's WebSocket face is then measured
# too, so that the two transports are also compared on one forwarder.
# Beside those, all of Chromium's processes' CPU per Data over their whole run, and the UDP
# datagrams the kernel dropped for a full receive buffer during each fetch. WT_HIGHWATER=N
# sets the WebTransport session's datagrams.incomingHighWaterMark to N datagrams (the page's
# `highwater`: how many received datagrams Chromium queues for the page before it drops the
# oldest); OUT_TAG=T names the result webtransport-T-<commit>.txt.
#   bench/webtransport.sh [RUNS] [SIZE_MB] [--wt kite | --wt URL HASH] [-- KITE_RUN_ARGS...]
#   (defaults 5 and 100)
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
cd "$(dirname "$0")/.."
runs=5
size_mb=100
wt_url=""
wt_hash=""
kite_args=()
positional=()
while (($#)); do
  case $1 in
    --wt)
      if [[ ${2:-} == kite ]]; then wt_url=kite; shift 2; else wt_url=$2 wt_hash=$3; shift 3; fi ;;
    --) shift; kite_args=("$@"); break ;;
    *) positional+=("$1"); shift ;;
  esac
done
runs=${positional[0]:-$runs}
size_mb=${positional[1]:-$size_mb}

target=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --release --quiet -p kite
kite=$target/release/kite
command -v chromium >/dev/null || { echo "webtransport.sh: chromium is not installed" >&2; exit 1; }
ndnts=tests/interop/ndnts
if ! cmp -s "$ndnts/package-lock.json" "$ndnts/node_modules/.kite-installed-lock"; then
  (cd "$ndnts" && npm ci --engine-strict --no-audit --no-fund --loglevel=error)
  cp "$ndnts/package-lock.json" "$ndnts/node_modules/.kite-installed-lock"
fi
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates tests/interop/ndnts || echo "-dirty")
out=bench/results/webtransport${OUT_TAG:+-$OUT_TAG}-$commit.txt
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

wait_for() { # FILE PATTERN SECONDS: until FILE holds a line matching PATTERN
  for _ in $(seq $(($3 * 10))); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "webtransport.sh: no \"$2\" in $1 after $3 s: $(tail -5 "$1" 2>/dev/null)" >&2
  return 1
}

head -c $((size_mb * 1000000)) /dev/urandom > "$work/object"
want=$(sha256sum "$work/object" | cut -c1-64)
name=/bench/webtransport/object

free_port() { # tcp|udp: a port free on 127.0.0.1 now
  python3 -c 'import socket, sys; s = socket.socket(type=socket.SOCK_DGRAM if sys.argv[1] == "udp" else socket.SOCK_STREAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' "$1"
}
ws_port=$(free_port tcp)
udp_port=$(free_port udp)
metrics_port=$(free_port tcp)
if [[ $wt_url == kite ]]; then
  wt_port=$(free_port udp)
  kite_args+=(--http3 "127.0.0.1:$wt_port")
  wt_url=https://127.0.0.1:$wt_port/ndn
  wt_self_signed=1
fi
"$kite" run --socket "$work/kite.sock" --ws "127.0.0.1:$ws_port" --udp "127.0.0.1:$udp_port" \
  --tcp "127.0.0.1:$(free_port tcp)" --udp-multicast false --metrics "127.0.0.1:$metrics_port" \
  "${kite_args[@]}" 2>"$work/kite.log" &
pids+=($!)
kite_pid=$!
ndnd_pid=""
ticks=$(getconf CLK_TCK)
cpu_ticks() { # PID: its user + system time so far, in clock ticks
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}
kite_busy() { # Kite's threads' busy time so far, in seconds
  # The metrics are a snapshot taken at most once a second: wait for a fresh one. Idle time
  # adds nothing to busy time, and next to nothing to CPU time (the threads sleep in epoll).
  sleep 1.1
  curl -s "http://127.0.0.1:$metrics_port/metrics" |
    awk '/^kite_thread_busy_seconds_total/ { s += $2 } END { printf "%.6f\n", s }'
}
for _ in $(seq 150); do [[ -S $work/kite.sock ]] && break; sleep 0.1; done
if [[ -n ${wt_self_signed:-} ]]; then
  wait_for "$work/kite.log" 'sha256_hex="' 30
  wt_hash=$(grep -o 'sha256_hex="[0-9a-f]*"' "$work/kite.log" | tail -1 | cut -d'"' -f2)
fi
"$kite" put --socket "$work/kite.sock" "$name" "$work/object" >"$work/put.out" 2>"$work/put.log" &
pids+=($!)
wait_for "$work/put.out" "$name" 120

# The WebTransport face: --wt, or NDNd's in a namespace.
ns_launcher=()
if [[ -n $wt_url ]]; then
  wt_label="Kite WebTransport"
else
  wt_label="NDNd v1.5.3 WebTransport (NDNd's figure, not Kite's)"
  ndnd=$(scripts/ndnd.sh)
  unshare -rn sh -c 'ip link set lo up && echo up && exec sleep 86400' >"$work/ns.out" &
  pids+=($!)
  holder=$!
  wait_for "$work/ns.out" up 10
  ns_launcher=(nsenter -t "$holder" -U -n --preserve-credentials)
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 10 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
  wt_hash=$(openssl x509 -in "$work/cert.pem" -outform DER | sha256sum | cut -c1-64)
  wt_url=https://127.0.0.1:4433/ndn
  cat >"$work/ndnd.yml" <<EOF
core:
  log_level: WARN
faces:
  udp:
    enabled_unicast: false
    enabled_multicast: false
  http3:
    enabled: true
    bind: 127.0.0.1
    port: 4433
    tls_cert: $work/cert.pem
    tls_key: $work/key.pem
  tcp:
    enabled: false
  unix:
    enabled: true
    socket_path: $work/ndnd.sock
  websocket:
    enabled: true
    bind: 127.0.0.1
    port: 9696
fw:
  threads: 1
tables:
  rib:
    readvertise_nlsr: false
EOF
  "${ns_launcher[@]}" "$ndnd" fw run "$work/ndnd.yml" >"$work/ndnd.log" 2>&1 &
  pids+=($!)
  ndnd_pid=$!
  for _ in $(seq 150); do [[ -S $work/ndnd.sock ]] && break; sleep 0.1; done
  NDN_CLIENT_TRANSPORT=unix://$work/ndnd.sock "$ndnd" put "$name" <"$work/object" \
    >"$work/ndnd-put.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 600); do
    "$kite" peek "$name/32=metadata" --prefix --fresh --lifetime 500 --socket "$work/ndnd.sock" \
      >/dev/null 2>&1 && break
    sleep 0.1
  done
fi

urlencode() { node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "$1"; }

udp_rcvbuf_drops() { # the host's UDP datagrams dropped so far for a full receive buffer
  awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { print $6 }' /proc/net/snmp
}

session_ticks() { # SID: user + system clock ticks of the live processes of session SID
  # /proc/PID/stat after the command's name: state ppid pgrp session ... utime (12th) stime.
  # One cat for all: a process that ends meanwhile is only missing from the sum.
  cat /proc/[0-9]*/stat 2>/dev/null |
    sed 's/^.*) //' | awk -v sid="$1" '$4 == sid { t += $12 + $13 } END { print t + 0 }'
}

fetch_once() { # TRANSPORT URL HASH LAUNCHER... -> "fetch_ms bytes sha256 retransmissions segments browser_ticks highwater"
  local transport=$1 url=$2 hash=$3
  shift 3
  local launcher=("$@")
  local s="$work/serve.out"
  : >"$s"
  "${launcher[@]}" node "$ndnts/browser/serve.mjs" >"$s" 2>"$work/serve.log" &
  local server=$!
  wait_for "$s" listening 30
  local page
  page=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]).listening)' "$s")
  local query
  query="transport=$transport&url=$(urlencode "$url")&name=$(urlencode "$name")&mode=object"
  [[ -n $hash ]] && query+="&hash=$hash"
  [[ $transport == wt && -n ${WT_HIGHWATER:-} ]] && query+="&highwater=$WT_HIGHWATER"
  # Chromium in a session of its own, so that its renderers stop with it.
  setsid "${launcher[@]}" chromium --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update \
    --user-data-dir="$work/profile" "$page?$query" >/dev/null 2>"$work/chromium.log" &
  local browser=$!
  wait_for "$s" result 600 || true
  local browser_ticks
  browser_ticks=$(session_ticks "$browser")
  kill -KILL -- "-$browser" 2>/dev/null || true
  wait "$browser" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$work/profile"
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const line = require("fs").readFileSync(process.argv[1], "utf8").split("\n").find((l) => l.includes("result"));
    const r = line ? JSON.parse(line).result : { ok: false, error: "no result" };
    if (!r.ok) { console.error(`webtransport.sh: the page failed: ${r.stage}: ${r.error}`); process.exit(1); }
    console.log(`${r.fetch_ms} ${r.bytes} ${r.sha256} ${r.interests - r.segments} ${r.segments} ${process.argv[2]} ${r.highwater ?? "-"}`);' "$s" "$browser_ticks"
}

get_udp() { # -> "fetch_ms bytes sha256 - segments - -": kite get over a UDP face of the daemon
  local t0 t1
  t0=$(date +%s%N)
  "$kite" get --socket "udp://127.0.0.1:$udp_port" -o "$work/got" "$name" 2>"$work/get.log"
  t1=$(date +%s%N)
  local bytes
  bytes=$(stat -c %s "$work/got")
  echo "$(( (t1 - t0) / 1000000 )) $bytes $(sha256sum "$work/got" | cut -c1-64) - $(( (bytes + 7999) / 8000 )) - -"
}

declare -A times retxs cpus busys browsers drops
udp_label="Kite UDP (kite get, for the CPU per Data)"
labels=("Kite WebSocket" "$wt_label" "$udp_label")
(( ${#ns_launcher[@]} )) && labels+=("NDNd v1.5.3 WebSocket (NDNd's figure, not Kite's)")
for r in $(seq "$runs"); do
  for label in "${labels[@]}"; do
    # The forwarder serving this row: Kite's, or NDNd's for its rows.
    fwd=$kite_pid
    [[ $label == NDNd* ]] && fwd=$ndnd_pid
    before=$(cpu_ticks "$fwd")
    busy_before=$(kite_busy)
    drops_before=$(udp_rcvbuf_drops)
    case $label in
      "Kite WebSocket") res=$(fetch_once ws "ws://127.0.0.1:$ws_port/" "") ;;
      "$wt_label") res=$(fetch_once wt "$wt_url" "$wt_hash" "${ns_launcher[@]}") ;;
      "$udp_label") res=$(get_udp) ;;
      *) res=$(fetch_once ws "ws://127.0.0.1:9696/" "" "${ns_launcher[@]}") ;;
    esac
    after=$(cpu_ticks "$fwd")
    busy_after=$(kite_busy)
    drops_after=$(udp_rcvbuf_drops)
    read -r ms bytes sha retx segments browser_ticks highwater <<<"$res"
    if [[ $sha != "$want" || $bytes != $((size_mb * 1000000)) ]]; then
      echo "webtransport.sh: $label fetched $bytes octets, SHA-256 $sha, not the file's $want" >&2
      exit 1
    fi
    cpu=$(python3 -c "print(f'{($after - $before) * 1e6 / $ticks / $segments:.2f}')")
    busy=-
    [[ $label == Kite* ]] && busy=$(python3 -c "print(f'{($busy_after - $busy_before) * 1e6 / $segments:.2f}')")
    # In this network namespace only: NDNd's rows run in their own.
    dropped=-
    [[ $label == Kite* ]] && dropped=$((drops_after - drops_before))
    browser=-
    [[ $browser_ticks != - ]] && browser=$(python3 -c "print(f'{$browser_ticks * 1e6 / $ticks / $segments:.2f}')")
    echo "run $r: $label: $(python3 -c "print(f'{$ms / 1000:.2f}')") s, $retx retransmitted, $dropped UDP datagrams dropped for a full receive buffer, forwarder $cpu µs CPU per Data, Kite busy $busy µs per Data, browser $browser µs CPU per Data (incomingHighWaterMark $highwater)" >&2
    times[$label]+="$ms "
    retxs[$label]+="$retx "
    cpus[$label]+="$cpu "
    busys[$label]+="$busy "
    browsers[$label]+="$browser "
    drops[$label]+="$dropped "
  done
done

{
  echo "# bench/webtransport.sh $runs $size_mb: a ${size_mb} MB segmented object (8000-octet segments, kite put; ndnd put for NDNd) fetched by NDNts @ndn/segmented-object in headless $(chromium --version 2>/dev/null | head -1)"
  echo "# commit $commit; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; median of $runs runs each, alternating; MB = 10^6 octets; retransmitted: Interests sent again (median)"
  echo "# kite run --ws 127.0.0.1:PORT --udp 127.0.0.1:PORT ${kite_args[*]}; WebTransport: $wt_url"
  echo "# CPU µs/Data: the serving forwarder's user + system CPU over the fetch per segment (clock ticks of 1/$ticks s; spinning included); busy µs/Data: Kite's kite_thread_busy_seconds_total over the fetch per segment; browser µs/Data: all of Chromium's processes' user + system CPU over their whole run (start and page load included) per segment; UDP drops: the kernel's UDP datagrams dropped for a full receive buffer (RcvbufErrors) during the fetch, in this network namespace (median)"
  [[ -n ${WT_HIGHWATER:-} ]] && echo "# WebTransport page: datagrams.incomingHighWaterMark = $WT_HIGHWATER (WT_HIGHWATER)"
  printf '%-52s %8s %8s %14s %10s %12s %13s %16s\n' transport MB/s seconds retransmitted "UDP drops" "CPU µs/Data" "busy µs/Data" "browser µs/Data"
  for label in "${labels[@]}"; do
    # shellcheck disable=SC2086 # one argument per run
    python3 - "$label" "$size_mb" "${retxs[$label]}" "${cpus[$label]}" "${busys[$label]}" "${browsers[$label]}" "${drops[$label]}" ${times[$label]} <<'PY'
import statistics, sys
label, size = sys.argv[1], float(sys.argv[2])
def median(arg, fmt):
    v = [float(x) for x in arg.split() if x != "-"]
    return format(statistics.median(v), fmt) if v else "-"
retx, cpu, busy = median(sys.argv[3], ".0f"), median(sys.argv[4], ".2f"), median(sys.argv[5], ".2f")
browser, dropped = median(sys.argv[6], ".2f"), median(sys.argv[7], ".0f")
s = statistics.median(float(t) / 1000 for t in sys.argv[8:])
print(f"{label:<52} {size / s:>8.1f} {s:>8.2f} {retx:>14} {dropped:>10} {cpu:>12} {busy:>13} {browser:>16}")
PY
  done
} | tee "$out"
echo "wrote $out" >&2
