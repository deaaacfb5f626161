#!/usr/bin/env bash
# A web page's segmented fetch: NDNts in headless Chromium (tests/interop/ndnts/browser/) fetches
# a SIZE MB object (`kite put` on Kite's unix socket) over Kite's WebSocket face and over a
# WebTransport (HTTP/3 datagram) face, RUNS times each, alternating, every run's SHA-256
# checked against the file. Prints the median goodput and time per transport and writes them to
# bench/results/webtransport-<commit>.txt (MB = 10^6 octets; the time runs from the face being
# up to the last octet, RDR version discovery included; Chromium's start and the connection are
# not counted).
#
# The WebTransport face is --wt URL HASH: a face of the same `kite run` (started with the
# arguments after --, e.g. `-- --http3 127.0.0.1:4433`), its certificate trusted by its SHA-256
# (hex). Without --wt the WebTransport row is NDNd v1.5.3's HTTP/3 face, serving the same file
# with `ndnd put`, in a private network namespace (unshare -rn) with its own page server and
# Chromium: a figure for NDNd, labelled so, not for Kite; NDNd's WebSocket face is then measured
# too, so that the two transports are also compared on one forwarder.
#   bench/webtransport.sh [RUNS] [SIZE_MB] [--wt URL HASH] [-- KITE_RUN_ARGS...]
#   (defaults 5 and 100)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5
size_mb=100
wt_url=""
wt_hash=""
kite_args=()
positional=()
while (($#)); do
  case $1 in
    --wt) wt_url=$2 wt_hash=$3; shift 3 ;;
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
out=bench/results/webtransport-$commit.txt
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

ws_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$kite" run --local-only --socket "$work/kite.sock" --ws "127.0.0.1:$ws_port" "${kite_args[@]}" \
  2>"$work/kite.log" &
pids+=($!)
for _ in $(seq 150); do [[ -S $work/kite.sock ]] && break; sleep 0.1; done
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

fetch_once() { # TRANSPORT URL HASH LAUNCHER... -> "fetch_ms bytes sha256 retransmissions"
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
  # Chromium in a session of its own, so that its renderers stop with it.
  setsid "${launcher[@]}" chromium --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update \
    --user-data-dir="$work/profile" "$page?$query" >/dev/null 2>"$work/chromium.log" &
  local browser=$!
  wait_for "$s" result 600 || true
  kill -KILL -- "-$browser" 2>/dev/null || true
  wait "$browser" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$work/profile"
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const line = require("fs").readFileSync(process.argv[1], "utf8").split("\n").find((l) => l.includes("result"));
    const r = line ? JSON.parse(line).result : { ok: false, error: "no result" };
    if (!r.ok) { console.error(`webtransport.sh: the page failed: ${r.stage}: ${r.error}`); process.exit(1); }
    console.log(`${r.fetch_ms} ${r.bytes} ${r.sha256} ${r.interests - r.segments}`);' "$s"
}

declare -A times retxs
labels=("Kite WebSocket" "$wt_label")
(( ${#ns_launcher[@]} )) && labels+=("NDNd v1.5.3 WebSocket (NDNd's figure, not Kite's)")
for r in $(seq "$runs"); do
  for label in "${labels[@]}"; do
    case $label in
      "Kite WebSocket") res=$(fetch_once ws "ws://127.0.0.1:$ws_port/" "") ;;
      "$wt_label") res=$(fetch_once wt "$wt_url" "$wt_hash" "${ns_launcher[@]}") ;;
      *) res=$(fetch_once ws "ws://127.0.0.1:9696/" "" "${ns_launcher[@]}") ;;
    esac
    read -r ms bytes sha retx <<<"$res"
    if [[ $sha != "$want" || $bytes != $((size_mb * 1000000)) ]]; then
      echo "webtransport.sh: $label fetched $bytes octets, SHA-256 $sha, not the file's $want" >&2
      exit 1
    fi
    echo "run $r: $label: $(python3 -c "print(f'{$ms / 1000:.2f}')") s, $retx retransmitted" >&2
    times[$label]+="$ms "
    retxs[$label]+="$retx "
  done
done

{
  echo "# bench/webtransport.sh $runs $size_mb: a ${size_mb} MB segmented object (8000-octet segments, kite put; ndnd put for NDNd) fetched by NDNts @ndn/segmented-object in headless $(chromium --version 2>/dev/null | head -1)"
  echo "# commit $commit; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; median of $runs runs each, alternating; MB = 10^6 octets; retransmitted: Interests sent again (median)"
  echo "# kite run --ws 127.0.0.1:PORT ${kite_args[*]}; WebTransport: $wt_url"
  printf '%-52s %8s %8s %14s\n' transport MB/s seconds retransmitted
  for label in "${labels[@]}"; do
    # shellcheck disable=SC2086 # one argument per run
    python3 - "$label" "$size_mb" "${retxs[$label]}" ${times[$label]} <<'PY'
import statistics, sys
label, size = sys.argv[1], float(sys.argv[2])
retx = statistics.median(int(r) for r in sys.argv[3].split())
s = statistics.median(float(t) / 1000 for t in sys.argv[4:])
print(f"{label:<52} {size / s:>8.1f} {s:>8.2f} {retx:>14.0f}")
PY
  done
} | tee "$out"
echo "wrote $out" >&2
