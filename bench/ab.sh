#!/usr/bin/env bash
# Compares two `kite` binaries on one `kite bench` scenario (fwd or daemon), interleaved round
# by round so both see the same machine noise; prints each run and the medians and their ratio
# (new/old).
#   bench/ab.sh OLD_KITE NEW_KITE ROUNDS SECONDS fwd|daemon [bench args...]
set -euo pipefail
if [ $# -lt 5 ]; then
  echo "usage: bench/ab.sh OLD_KITE NEW_KITE ROUNDS SECONDS fwd|daemon [bench args...]" >&2
  exit 2
fi
old=$1 new=$2 rounds=$3 secs=$4
shift 4
rate() { "$1" bench "${@:2}" --duration "${secs}s" --json 2>/dev/null | tail -1 |
  sed -n 's/.*"exchanges_per_sec":\([0-9.]*\).*/\1/p'; }
a=() b=()
for r in $(seq "$rounds"); do
  a+=("$(rate "$old" "$@")")
  b+=("$(rate "$new" "$@")")
  echo "round $r: old ${a[-1]}  new ${b[-1]}" >&2
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ma=$(median "${a[@]}") mb=$(median "${b[@]}")
echo "args: $*; rounds ${rounds} x ${secs}s; median old ${ma}, new ${mb}, ratio $(awk -v x="$mb" -v y="$ma" 'BEGIN {printf "%.3f", x/y}')"
