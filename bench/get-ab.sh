#!/usr/bin/env bash
# Compares two `kite get` clients fetching one 100 MB object through one release `kite run`
# (--local-only --threads 1), over shared memory and over the unix socket, interleaved round by
# round so both see the same machine noise. The daemon and `kite put` are NEW's; the daemon's
# CS is warmed first by three fetches (so the rounds see a full CS that evicts, not one that
# faults its pages in). Prints each round (goodput in Mbit/s, the client's CPU seconds from
# /usr/bin/time) and the medians; checks every copy against the object.
#   bench/get-ab.sh OLD_KITE NEW_KITE [ROUNDS]     (default 5)
set -euo pipefail
if [[ $# -lt 2 || $1 == -h || $1 == --help ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit $(( $# < 2 ))
fi
old=$(realpath "$1") new=$(realpath "$2") rounds=${3:-5}
[[ -x /usr/bin/time ]] || { echo "get-ab.sh: /usr/bin/time is not installed" >&2; exit 1; }
work=$(mktemp -d)
sock=$work/kite.sock
"$new" run --local-only --threads 1 --socket "$sock" >"$work/kite.log" 2>&1 &
daemon=$!
trap 'kill "$daemon" 2>/dev/null || true; jobs -p | xargs -r kill 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
[[ -S $sock ]] || { echo "get-ab.sh: the daemon did not start" >&2; cat "$work/kite.log" >&2; exit 1; }
head -c 100000000 /dev/urandom >"$work/object"

one() { # KITE shm|unix -> "goodput cpu_seconds"
  local shm=on
  [[ $2 == unix ]] && shm=off
  KITE_SHM=$shm "$new" put /bench/object "$work/object" --socket "$sock" >"$work/put.out" 2>/dev/null &
  local put=$!
  for _ in $(seq 300); do [[ -s $work/put.out ]] && break; sleep 0.1; done
  KITE_SHM=$shm /usr/bin/time -f "%U %S" -o "$work/time" \
    "$1" get "$(head -1 "$work/put.out")" --socket "$sock" -o "$work/copy" 2>"$work/get.err"
  kill "$put"
  wait "$put" 2>/dev/null || true
  cmp -s "$work/copy" "$work/object" || { echo "get-ab.sh: the copy differs" >&2; exit 1; }
  echo "$(sed -n 's/^Goodput: \([0-9.]*\).*/\1/p' "$work/get.err") $(awk '{print $1 + $2}' "$work/time")"
}

for _ in 1 2 3; do one "$new" shm >/dev/null; done
echo "round client mode goodput_mbps cpu_s"
for r in $(seq "$rounds"); do
  for c in old new; do
    for m in shm unix; do
      bin=$old
      [[ $c == new ]] && bin=$new
      echo "$r $c $m $(one "$bin" "$m")"
    done
  done
done | tee "$work/rounds"
python3 - "$work/rounds" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("round")]
for m in ("shm", "unix"):
    for c in ("old", "new"):
        g = [float(r[3]) for r in rows if r[1] == c and r[2] == m]
        t = [float(r[4]) for r in rows if r[1] == c and r[2] == m]
        print(f"median {c} {m}: {statistics.median(g):.0f} Mbit/s, client CPU {statistics.median(t):.3f} s")
PY
