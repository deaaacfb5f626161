#!/usr/bin/env bash
# Runs every fuzz target for a bounded time from the committed seed corpus.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Uses cargo-fuzz on the stable toolchain without sanitizers (-s none); new inputs go to a
# scratch directory so the committed corpus stays as it is. A crash fails the run and leaves
# the input in fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-30}
shift || true
if ! [[ $secs =~ ^[0-9]+$ ]] || (( secs < 1 || secs > 600 )); then
  echo "fuzz.sh: SECONDS_PER_TARGET must be a whole number from 1 to 600, not '$secs'" >&2
  exit 2
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "==> installing cargo-fuzz"
  cargo install --locked cargo-fuzz
fi

targets=("$@")
if (( ${#targets[@]} == 0 )); then
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi

(cd fuzz && cargo fuzz build -s none)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in "${targets[@]}"; do
  echo "==> fuzzing $t for ${secs}s"
  mkdir -p "$scratch/$t"
  log="$scratch/$t.log"
  status=0
  (cd fuzz && cargo fuzz run -s none "$t" "$scratch/$t" "corpus/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1) >"$log" 2>&1 || status=$?
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' "$log" || true
  if (( status != 0 )); then
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" >&2 || tail -20 "$log" >&2
    echo "fuzz target $t failed: the input is in fuzz/artifacts/$t/" >&2
    exit 1
  fi
done
echo "fuzzing: ${#targets[@]} targets, ${secs}s each, no crash"
