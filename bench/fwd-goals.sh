#!/usr/bin/env bash
# One forwarding thread's goals (FIB size, prefix vs exact CS match) as ratios taken within one
# run: each round runs every scenario once, one after the other, so slow and fast spells of this
# shared machine fall on all of them alike.
# Prints each scenario's rates and median, then each goal's ratio (median of the per-round
# ratios, and ratio of the medians), and writes both to bench/results/fwd-goals-<commit>.txt.
# The "floor" scenario is `--passthrough`: the exchange without the tables, i.e. the most any
# table design can reach on this machine.
#   bench/fwd-goals.sh [ROUNDS] [SECONDS_PER_RUN]   (defaults 7 and 3)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-7}
secs=${2:-3}
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo "-dirty")
out="bench/results/fwd-goals-${commit}.txt"
cargo build --release --quiet -p kite
kite=target/release/kite

scenarios=(
  "fib1e4 --fib 10000"
  "fib1e6 --fib 1000000"
  "floor --fib 10000 --passthrough"
  "prefix-hit0 --fib 10000 --prefix-match"
  "exact-hit50 --fib 10000 --cs-hit 50"
  "prefix-hit50 --fib 10000 --cs-hit 50 --prefix-match"
  "exact-hit90 --fib 10000 --cs-hit 90"
  "prefix-hit90 --fib 10000 --cs-hit 90 --prefix-match"
)

rates=$(mktemp)
trap 'rm -f "$rates"' EXIT
for r in $(seq "$rounds"); do
  for s in "${scenarios[@]}"; do
    read -r label args <<<"$s"
    # shellcheck disable=SC2086 # args is a list of options
    rate=$("$kite" bench fwd $args --duration "${secs}s" --json 2>/dev/null | tail -1 |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["exchanges_per_sec"])')
    echo "$r $label $rate" >> "$rates"
    echo "round $r/$rounds: $label $rate exchanges/s" >&2
  done
done

python3 - "$rates" "$commit" "$rounds" "$secs" <<'PY' | tee "$out"
import collections, statistics, sys
path, commit, rounds, secs = sys.argv[1:]
by_round = collections.defaultdict(dict)
for line in open(path):
    r, label, rate = line.split()
    by_round[r][label] = float(rate)
labels = list(next(iter(by_round.values())))
med = {l: statistics.median(x[l] for x in by_round.values()) for l in labels}
print(f"# commit {commit}; bench/fwd-goals.sh {rounds} {secs}: kite bench fwd <args> --duration {secs}s, "
      f"{rounds} interleaved rounds")
print("scenario,median_exchanges_per_sec,rates")
for l in labels:
    rates = " ".join(f"{x[l]:.0f}" for x in by_round.values())
    print(f"{l},{med[l]:.0f},{rates}")
goals = [
    ("FIB 10^6 / FIB 10^4 (goal >= 0.95)", "fib1e4", "fib1e6"),
    ("prefix / exact, 0 % hits (goal >= 0.90)", "fib1e4", "prefix-hit0"),
    ("prefix / exact, 50 % hits (goal >= 0.90)", "exact-hit50", "prefix-hit50"),
    ("prefix / exact, 90 % hits (goal >= 0.90)", "exact-hit90", "prefix-hit90"),
    ("floor (no tables) / FIB 10^4", "fib1e4", "floor"),
]
print("goal,median_of_round_ratios,ratio_of_medians")
for name, a, b in goals:
    per_round = statistics.median(x[b] / x[a] for x in by_round.values())
    print(f"{name},{per_round:.3f},{med[b] / med[a]:.3f}")
print(f"2 M exchanges/s at FIB 10^6 (goal): {med['fib1e6']:.0f}; "
      f"the floor without tables: {med['floor']:.0f}")
PY
