#!/usr/bin/env bash
# Runs every fuzz target for a bounded time from the committed seed corpus.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   FUZZ_JOBS=N scripts/fuzz.sh ...   targets fuzzed at once (default: the number of cores)
# Uses cargo-fuzz on the stable toolchain without sanitizers (-s none); new inputs go to a
# scratch directory so the committed corpus stays as it is. A crash fails the run and leaves
# the input in fuzz/artifacts/TARGET/. For long campaigns see scripts/fuzz-campaign.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-30}
shift || true
if ! [[ $secs =~ ^[0-9]+$ ]] || (( secs < 1 || secs > 600 )); then
  echo "fuzz.sh: SECONDS_PER_TARGET must be a whole number from 1 to 600, not '$secs'" >&2
  exit 2
fi
jobs=${FUZZ_JOBS:-$(nproc)}
if ! [[ $jobs =~ ^[0-9]+$ ]] || (( jobs < 1 )); then
  echo "fuzz.sh: FUZZ_JOBS must be a whole number of at least 1, not '$jobs'" >&2
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

# One target; its exit status goes to $scratch/TARGET.rc.
fuzz_one() {
  local t=$1 status=0
  mkdir -p "$scratch/$t"
  (cd fuzz && cargo fuzz run -s none "$t" "$scratch/$t" "corpus/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1) >"$scratch/$t.log" 2>&1 \
    || status=$?
  echo "$status" >"$scratch/$t.rc"
}

echo "==> fuzzing ${#targets[@]} targets for ${secs}s each, $jobs at a time"
for t in "${targets[@]}"; do
  while (( $(jobs -rp | wc -l) >= jobs )); do
    wait -n || true
  done
  fuzz_one "$t" &
done
wait

failed=()
for t in "${targets[@]}"; do
  echo "==> $t"
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' "$scratch/$t.log" || true
  if [[ $(cat "$scratch/$t.rc") != 0 ]]; then
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$scratch/$t.log" >&2 \
      || tail -20 "$scratch/$t.log" >&2
    echo "fuzz target $t failed: the input is in fuzz/artifacts/$t/" >&2
    failed+=("$t")
  fi
done
if (( ${#failed[@]} > 0 )); then
  echo "fuzzing: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzzing: ${#targets[@]} targets, ${secs}s each, no crash"
