#!/usr/bin/env bash
# What CS matching costs one forwarding thread, A/B in one run: callgrind instructions per
# exchange of `kite bench fwd` (bench/callgrind-exchange.sh: the difference of a short and a
# long run, start-up left out) for an old and a new `kite` binary, in the scenarios that tell
# exact from prefix matching apart:
#   exact-miss    every Interest exact, answered by the producer (the CS full, evicting)
#   exact-hit     every Interest exact, answered by the CS
#   prefix-hit    every Interest CanBePrefix, answered by the CS with a longer Data
#   prefix-miss   every Interest CanBePrefix, answered by the producer with a longer Data
#   mixed-miss    one Interest in about 100 CanBePrefix, so the CS keeps its ordered index
#                 of names; the rest exact, answered by the producer
#   mixed-hit     the same, every Interest answered by the CS
# The CS holds 1024 entries (--cs-capacity 1024), so the miss scenarios evict one Data per
# Data cached from their first seconds on, as a forwarder's CS does in its steady state.
# Instruction counts do not depend on the machine's load; the producer signs nothing (its
# Data carry a fixed DigestSha256 value).
#   bench/cs-match-ab.sh OLD_KITE NEW_KITE [OUT]   (OUT: a results file to write as well)
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# -lt 2 ]]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit $(( $# < 2 ))
fi
old=$1 new=$2 out=${3:-}
here=$(dirname "$0")
scenarios=(
  "exact-miss|"
  "exact-hit|--cs-hit 100"
  "prefix-hit|--cs-hit 100 --prefix-match"
  "prefix-miss|--prefix-match"
  "mixed-miss|--prefix-every 100"
  "mixed-hit|--cs-hit 100 --prefix-every 100"
)
# Instructions per exchange, or "-" when the binary has no such scenario (an old one without
# --prefix-every).
per_exchange() {
  local n
  # shellcheck disable=SC2086 # $2 is a list of options
  n=$("$here/callgrind-exchange.sh" "$1" 1 3 -- --cs-capacity 1024 $2 2>/dev/null |
    sed -n 's/.*per exchange \([0-9]*\).*/\1/p') || true
  echo "${n:--}"
}
ratio() {
  if [[ $1 == - || $2 == - ]]; then echo -; else python3 -c "print(f'{$2/$1:.3f}')"; fi
}
report=$(mktemp)
trap 'rm -f "$report"' EXIT
{
  echo "# bench/cs-match-ab.sh: kite bench fwd --cs-capacity 1024 <args>, callgrind instructions per exchange"
  echo "# old: $($old --version 2>/dev/null | head -1) ($old); new: $($new --version 2>/dev/null | head -1) ($new); $(date -u +%F)"
  printf '%-12s %10s %10s %8s  %s\n' scenario old new new/old args
} >"$report"
for s in "${scenarios[@]}"; do
  label=${s%%|*} args=${s#*|}
  echo "cs-match-ab: $label ($args)" >&2
  a=$(per_exchange "$old" "$args")
  b=$(per_exchange "$new" "$args")
  declare "new_${label//-/_}=$b" "old_${label//-/_}=$a"
  printf '%-12s %10s %10s %8s  %s\n' "$label" "$a" "$b" "$(ratio "$a" "$b")" "$args" >>"$report"
done
{
  # An exact exchange on a router whose CS keeps its ordered index, against the old exact one.
  echo "new mixed-miss / old exact-miss: $(ratio "$old_exact_miss" "$new_mixed_miss")"
  echo "new mixed-hit / old exact-hit: $(ratio "$old_exact_hit" "$new_mixed_hit")"
  echo "new prefix-hit / new exact-hit: $(ratio "$new_exact_hit" "$new_prefix_hit")"
} >>"$report"
cat "$report"
if [[ -n $out ]]; then
  cp "$report" "$out"
fi
