#!/usr/bin/env bash
# Goodput of `kite get` through a lossy chain of three forwarders, A — B — C, each `kite run`
# in a network namespace of its own, joined by veth pairs (1500-octet MTU). nftables drops
# LOSS percent of the frames arriving on every interface (netdev ingress, before IP: a lost
# frame may be one IP fragment of a datagram). `kite put` on C serves SIZE octets, `kite get`
# on A fetches them, and the copy is compared with cmp. Setups:
#   udp-path  UDP faces at their default MTU, the path's (1472 here): NDNLPv2 fragments per hop
#   udp-8800  UDP faces at MTU 8800 (NFD's default): Data leaves as IP fragments
#   udp-nogso UDP faces at the path's MTU, with the veths taking no segmented burst
#             (gso_max_segs 1): the kernel cuts bursts into datagrams before the veth, so
#             nftables drops single datagrams, as it drops single frames on Ethernet
#   ether     Ethernet faces (MTU 1500)
#   ether-lpr Ethernet faces with NDNLPv2 LpReliability on (hop-by-hop resending of lost frames)
# Every round runs every setup at every loss rate, so all see the same machine load; a fetch
# that fails (it gives up after 12 s without progress) or exceeds GET_TIMEOUT seconds (120)
# counts as 0 goodput.
# Content Stores do not admit Data, so every fetch crosses the whole chain.
# Writes bench/results/lossy-<commit>.csv (every fetch), lossy-<commit>-summary.csv
# (medians) and lossy-<commit>.svg (median goodput against loss rate).
#   sudo bench/lossy.sh [SIZE_MB] [ROUNDS]        (defaults: 30 and 5)
# KITE=path uses that binary instead of building; LOSSES="0 1 2 5" and SETUPS="udp-path
# udp-8800 ether ether-lpr" choose what runs; GET_ARGS adds flags to every `kite get`;
# PAUSE_MS=N stops B (SIGSTOP) for N ms, 150 ms into every fetch, as a host that takes the
# forwarder's core does; GET_KITE=path runs `kite get` from another binary than the daemons.
# Needs root, ip (iproute2) and nft (nftables).
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-30}
rounds=${2:-5}
losses=(${LOSSES:-0 1 2 5})
setups=(${SETUPS:-udp-path udp-8800 ether ether-lpr})
command -v nft >/dev/null || { echo "lossy.sh: needs nft (Debian package nftables)" >&2; exit 1; }
if [[ -z ${KITE:-} ]]; then
  cargo build --release --quiet -p kite
  KITE=target/release/kite
fi
KITE=$(realpath "$KITE")
GET_KITE=$(realpath "${GET_KITE:-$KITE}")
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out=bench/results/lossy-$commit${TAG:+-$TAG}.csv
tmp=$(mktemp -d)
ns=(kite-bench-a-$$ kite-bench-b-$$ kite-bench-c-$$)
pids=()
stop_daemons() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
cleanup() {
  stop_daemons
  for n in "${ns[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# The chain: A ab — ba B bc — cb C.
for n in "${ns[@]}"; do ip netns add "$n"; ip -n "$n" link set lo up; done
ip -n "${ns[0]}" link add ab address 02:00:00:00:01:0a type veth peer name ba address 02:00:00:00:01:0b netns "${ns[1]}"
ip -n "${ns[1]}" link add bc address 02:00:00:00:02:0b type veth peer name cb address 02:00:00:00:02:0c netns "${ns[2]}"
ends=("0 ab 10.77.1.1" "1 ba 10.77.1.2" "1 bc 10.77.2.1" "2 cb 10.77.2.2")
for e in "${ends[@]}"; do
  read -r i dev addr <<<"$e"
  ip -n "${ns[$i]}" addr add "$addr/24" dev "$dev"
  ip -n "${ns[$i]}" link set "$dev" up
done
sleep 1

# Drops $1 percent of the frames (all but ARP) arriving on every interface (B has two: each
# namespace is flushed once, then every interface gets its chain).
set_loss() {
  for n in "${ns[@]}"; do ip netns exec "$n" nft flush ruleset; done
  (( $1 > 0 )) || return 0
  for e in "${ends[@]}"; do
    read -r i dev _ <<<"$e"
    ip netns exec "${ns[$i]}" nft -f - <<EOF
table netdev lossy {
  chain in_$dev {
    type filter hook ingress device "$dev" priority 0;
    ether type != arp numgen random mod 100 < $1 drop
  }
}
EOF
  done
}

# Node $2's configuration for setup $1: faces both ways to its neighbours (so the MTU of
# each direction is the setup's), and the route of /lossy toward C.
config() {
  local setup=$1 i=$2 f="$tmp/node-$2.toml"
  local mtu_line=""
  [[ $setup == udp-8800 ]] && mtu_line="mtu = 8800"
  {
    echo "[face_system]"
    if [[ $setup == ether* ]]; then
      echo -e "[face_system.udp]\nlisten = []\n[face_system.tcp]\nlisten = []"
      case $i in
        0) echo -e "[face_system.ether]\ninterfaces = [\"ab\"]" ;;
        1) echo -e "[face_system.ether]\ninterfaces = [\"ba\", \"bc\"]" ;;
        2) echo -e "[face_system.ether]\ninterfaces = [\"cb\"]" ;;
      esac
    else
      echo -e "[face_system.udp]\nlisten = [\"0.0.0.0:6363\"]\n[face_system.tcp]\nlisten = []"
    fi
    echo -e "[tables.cs]\nadmit = false"
    local peers=()
    case $i in
      0) peers=("udp4://10.77.1.2:6363 ether://[02:00:00:00:01:0b] ab route") ;;
      1) peers=("udp4://10.77.1.1:6363 ether://[02:00:00:00:01:0a] ba -"
                "udp4://10.77.2.2:6363 ether://[02:00:00:00:02:0c] bc route") ;;
      2) peers=("udp4://10.77.2.1:6363 ether://[02:00:00:00:02:0b] cb -") ;;
    esac
    for p in "${peers[@]}"; do
      read -r udp eth dev route <<<"$p"
      local uri=$udp
      [[ $setup == ether* ]] && uri=$eth
      echo -e "[[face]]\nuri = \"$uri\"\npersistency = \"permanent\""
      [[ $setup == ether* ]] && echo "local_uri = \"dev://$dev\""
      [[ $setup == ether-lpr ]] && echo "lp_reliability = true"
      [[ -n $mtu_line ]] && echo "$mtu_line"
      [[ $route == route ]] && echo -e "[[route]]\nprefix = \"/lossy\"\nface = \"$uri\""
    done
  } >"$f"
  echo "$f"
}

start_chain() {
  local setup=$1 segs=65535
  [[ $setup == udp-nogso ]] && segs=1
  for e in "${ends[@]}"; do
    read -r i dev _ <<<"$e"
    ip -n "${ns[$i]}" link set dev "$dev" gso_max_segs "$segs"
  done
  for i in 0 1 2; do
    local cfg
    cfg=$(config "$setup" "$i")
    rm -f "$tmp/$i.sock"
    ip netns exec "${ns[$i]}" "$KITE" run --config "$cfg" --socket "$tmp/$i.sock" \
      2>>"$tmp/kite-$i.log" &
    pids+=("$!")
  done
  for i in 0 1 2; do
    for _ in $(seq 100); do [[ -S $tmp/$i.sock ]] && break; sleep 0.1; done
  done
  "$KITE" put --socket "$tmp/2.sock" /lossy "$tmp/object" >"$tmp/put.out" 2>>"$tmp/put.err" &
  pids+=("$!")
  for _ in $(seq 600); do [[ -s $tmp/put.out ]] && break; sleep 0.1; done
  # Until every face and route is up, the first Interests may be Nacked.
  local versioned
  versioned=$(head -1 "$tmp/put.out")
  for _ in $(seq 50); do
    "$KITE" get --socket "$tmp/0.sock" "$versioned" -o /dev/null --no-progress-timeout 2000 \
      2>/dev/null && break
    sleep 0.2
  done
}

head -c "$((size_mb * 1000 * 1000))" /dev/urandom >"$tmp/object"
echo "round,setup,loss_percent,ok,seconds,goodput_mbps,retransmissions,timeouts" >"$out"
for r in $(seq "$rounds"); do
  for setup in "${setups[@]}"; do
    set_loss 0
    start_chain "$setup"
    for loss in "${losses[@]}"; do
      set_loss "$loss"
      rm -f "$tmp/fetched"
      start=$(date +%s.%N)
      ok=1
      timeout "${GET_TIMEOUT:-120}" "$GET_KITE" get --socket "$tmp/0.sock" /lossy \
        -o "$tmp/fetched" ${GET_ARGS:-} 2>"$tmp/get.err" &
      get_pid=$!
      if [[ -n ${PAUSE_MS:-} ]]; then
        sleep 0.15
        kill -STOP "${pids[1]}"
        sleep "$(echo "scale=3; $PAUSE_MS / 1000" | bc)"
        kill -CONT "${pids[1]}"
      fi
      wait "$get_pid" && cmp -s "$tmp/object" "$tmp/fetched" || ok=0
      secs=$(echo "$(date +%s.%N) - $start" | bc)
      retx=$(sed -n 's/^Retransmissions: //p' "$tmp/get.err")
      timeouts=$(sed -n 's/^Timeouts: //p' "$tmp/get.err")
      goodput=0
      (( ok )) && goodput=$(echo "scale=3; $size_mb * 8 / $secs" | bc)
      (( ok )) || echo "lossy.sh: $setup at $loss %: $(tail -1 "$tmp/get.err")" >&2
      echo "$r,$setup,$loss,$ok,$secs,$goodput,${retx:-},${timeouts:-}" | tee -a "$out"
    done
    stop_daemons
  done
done

python3 - "$out" "$size_mb" <<'EOF'
import csv, statistics, sys
src, size_mb = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(src)))
series = {}
for r in rows:
    series.setdefault(r["setup"], {}).setdefault(int(r["loss_percent"]), []).append(
        (float(r["goodput_mbps"]), int(r["ok"]), r["retransmissions"] or "-",
         r.get("timeouts") or "-"))
summary = src.replace(".csv", "-summary.csv")
with open(summary, "w") as f:
    f.write("setup,loss_percent,runs,completed,median_goodput_mbps,median_retransmissions,"
            "median_timeouts\n")
    for s, by_loss in series.items():
        for loss, runs in sorted(by_loss.items()):
            retx = [int(x[2]) for x in runs if x[2] != "-"]
            timeouts = [int(x[3]) for x in runs if x[3] != "-"]
            f.write(f"{s},{loss},{len(runs)},{sum(x[1] for x in runs)},"
                    f"{statistics.median(x[0] for x in runs):.1f},"
                    f"{statistics.median(retx) if retx else '-'},"
                    f"{statistics.median(timeouts) if timeouts else '-'}\n")
print(open(summary).read())
for s, base in series.items():
    if 0 in base and 1 in base:
        g0 = statistics.median(x[0] for x in base[0])
        g1 = statistics.median(x[0] for x in base[1])
        print(f"{s}: goodput at 1 % loss / at no loss = {g1 / g0 if g0 else 0:.2f}")
# An SVG line chart: median goodput against loss rate, one line per setup.
colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
losses = sorted({int(r["loss_percent"]) for r in rows})
top = max(statistics.median(x[0] for x in runs)
          for by in series.values() for runs in by.values()) * 1.1 or 1
left, width, height, top_y = 70, 560, 300, 40
def px(loss):
    return left + (losses.index(loss) / max(1, len(losses) - 1)) * width
def py(v):
    return top_y + height - v / top * height
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 170}" '
       f'height="{top_y + height + 60}" font-family="sans-serif" font-size="12">',
       '<rect width="100%" height="100%" fill="white"/>',
       f'<text x="{left + width / 2}" y="22" text-anchor="middle" font-size="14">'
       f'kite get, {size_mb} MB through A-B-C, median goodput vs frame loss</text>',
       f'<line x1="{left}" y1="{top_y + height}" x2="{left + width}" y2="{top_y + height}" stroke="black"/>',
       f'<line x1="{left}" y1="{top_y}" x2="{left}" y2="{top_y + height}" stroke="black"/>',
       f'<text x="{left + width / 2}" y="{top_y + height + 40}" text-anchor="middle">frame loss on every link (%)</text>',
       f'<text x="15" y="{top_y + height / 2}" transform="rotate(-90 15 {top_y + height / 2})" text-anchor="middle">goodput (Mbit/s)</text>']
for k in range(5):
    v = top * k / 4
    out.append(f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>')
    out.append(f'<line x1="{left}" y1="{py(v):.1f}" x2="{left + width}" y2="{py(v):.1f}" stroke="#ddd"/>')
for loss in losses:
    out.append(f'<text x="{px(loss):.1f}" y="{top_y + height + 18}" text-anchor="middle">{loss}</text>')
for n, (s, by_loss) in enumerate(series.items()):
    c = colors[n % len(colors)]
    pts = [(px(l), py(statistics.median(x[0] for x in runs))) for l, runs in sorted(by_loss.items())]
    out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="'
               + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
    for x, y in pts:
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{c}"/>')
    out.append(f'<text x="{left + width + 15}" y="{top_y + 20 + n * 18}" fill="{c}">{s}</text>')
out.append("</svg>")
open(src.replace(".csv", ".svg"), "w").write("\n".join(out))
EOF
echo "wrote $out"
