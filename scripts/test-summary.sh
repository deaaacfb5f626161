#!/usr/bin/env bash
# The last lines of scripts/test.sh: the tests that skipped, by name with their reasons, and
# `tests: N passed, M failed, K skipped`, from the output of `cargo test` (LOG) and the lines
# kite_testkit::skip appended to the file KITE_SKIP_LOG named (SKIPS). The test harness counts
# a test that skipped as passed; here it counts as skipped only.
#   scripts/test-summary.sh LOG SKIPS
# scripts/test.sh sources this file and calls test_summary.

test_summary() {
  local log=$1 skips=$2 passed failed skipped
  passed=$(grep -oE 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | grep -oE '[0-9]+ passed' \
    | awk '{s+=$1} END {print s+0}')
  failed=$(grep -oE 'test result: [a-zA-Z]+\. [0-9]+ passed; [0-9]+ failed' "$log" \
    | grep -oE '[0-9]+ failed' | awk '{s+=$1} END {print s+0}')
  skipped=0
  if [[ -s "$skips" ]]; then
    skipped=$(grep -c '^SKIPPED ' "$skips" || true)
  fi
  if (( skipped > 0 )); then
    echo "skipped (${skipped}):"
    grep '^SKIPPED ' "$skips" | sed 's/^SKIPPED /  /'
  fi
  passed=$(( passed > skipped ? passed - skipped : 0 ))
  echo "tests: ${passed} passed, ${failed} failed, ${skipped} skipped"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  if (( $# != 2 )); then
    echo "usage: scripts/test-summary.sh LOG SKIPS" >&2
    exit 2
  fi
  test_summary "$1" "$2"
fi
