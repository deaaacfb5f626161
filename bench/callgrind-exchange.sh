#!/usr/bin/env bash
# Instructions per exchange of `kite bench fwd`, without the fixed start-up cost: callgrind of
# a SHORT and a LONG run, difference of instructions over difference of exchanges.
#   bench/callgrind-exchange.sh KITE [SHORT LONG] -- [bench fwd args...]
#   e.g. bench/callgrind-exchange.sh target/release/kite 3 9 -- --cs-capacity 1024 --payload 8000
set -euo pipefail
kite=$1 short=${2:-3} long=${3:-9}
shift $(( $# >= 3 ? 3 : $# ))
[ "${1:-}" = -- ] && shift
dir=$(mktemp -d)
run() {
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$1" "$kite" bench fwd "${@:2}" \
    --duration "$1s" --json 2>/dev/null | tail -1 | sed -n 's/.*"exchanges":\([0-9]*\).*/\1/p'
}
instr() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$dir/cg.$1"; }
xs=$(run "$short" "$@") xl=$(run "$long" "$@")
is=$(instr "$short") il=$(instr "$long")
echo "args: $*; ${short} s: ${xs} exchanges ${is} instr; ${long} s: ${xl} exchanges ${il} instr;" \
  "per exchange $(( (il - is) / (xl - xs) ))"
echo "profiles: $dir/cg.$short $dir/cg.$long"
