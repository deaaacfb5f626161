#!/usr/bin/env bash
# A long fuzzing campaign: every target (or those named) to a number of executions, from the
# committed seed corpus plus what earlier campaigns found, with per-target figures.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'USAGE'
Usage: scripts/fuzz-campaign.sh [OPTIONS] [TARGET...]
       scripts/fuzz-campaign.sh --report [--out DIR]

Runs each fuzz target (default: all of `cargo fuzz list`) to --runs executions with libFuzzer
(stable toolchain, no sanitizer, as scripts/fuzz.sh), --jobs targets at a time, then prints a
table of per-target figures, also written to DIR/summary.tsv:

  target  execs  exec/s  cov  ft  corpus_units  corpus_bytes  crashes  status

execs and exec/s are libFuzzer's final stats (stat::number_of_executed_units,
stat::average_exec_per_sec), or its last status line while a target still runs; cov (edges)
and ft (features) come from its last status line; corpus is what DIR/corpus/TARGET holds;
crashes counts inputs libFuzzer saved (crash-, timeout-, oom-, leak-) in DIR/artifacts/TARGET.
status is "done" when the target reached --runs, "stopped" when --max-time or a signal ended
it first, "crash" when it found a failing input, "running" while it runs.

New inputs go to DIR/corpus/TARGET (the committed fuzz/corpus/TARGET is read, never written),
so a later campaign with the same DIR continues from what this one found. A target whose
earlier run was stopped (--max-time, a signal, a reboot) continues too: its executions so far
are kept in DIR/logs/TARGET.before, the new run goes on to --runs in all, and execs counts
every run (exec/s, cov and ft are the latest run's).

Options:
  --runs N        executions per target (default 100000000, libFuzzer's -runs=)
  --jobs J        targets fuzzed at once (default 1; the machine is shared)
  --workers W     libFuzzer processes per target (default 1), on one shared corpus (each
                  reloads what the others add, libFuzzer's -reload): a slow target reaches
                  --runs W times sooner on W idle cores; its executions are summed over
                  the workers, whose logs are DIR/logs/TARGET.log, TARGET.w2.log, ...
  --max-time S    stop each target after S seconds even short of --runs (default: no limit)
  --out DIR       where logs, corpora, crashes and the summary go (default fuzz/campaign)
  --no-trace-compares
                  build without libFuzzer's comparison tracing (cargo fuzz
                  --no-trace-compares), into fuzz/target/no-trace-compares: two to three
                  times the executions per second, for campaigns that must reach --runs; the
                  mutations lose the operands of comparisons the code under test made
  --report        print the table for DIR from its logs (also while a campaign runs)
  -h, --help      this text

Example: scripts/fuzz-campaign.sh --jobs 1 --max-time 3600 lp name mgmt
USAGE
}

runs=100000000
jobs=1
workers=1
max_time=0
out=fuzz/campaign
report_only=false
trace_compares=true
targets=()
while (( $# > 0 )); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --max-time) max_time=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --report) report_only=true; shift ;;
    --no-trace-compares) trace_compares=false; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fuzz-campaign.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
for v in runs jobs workers max_time; do
  if ! [[ ${!v} =~ ^[0-9]+$ ]]; then
    echo "fuzz-campaign.sh: --${v/_/-} takes a whole number, not '${!v}'" >&2
    exit 2
  fi
done
if (( jobs < 1 || workers < 1 )); then
  echo "fuzz-campaign.sh: --jobs and --workers must be at least 1" >&2
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# A target's worker logs: TARGET.log, then TARGET.w2.log, TARGET.w3.log, ...
worker_logs() {
  local t=$1
  [[ -f "$out/logs/$t.log" ]] && echo "$out/logs/$t.log"
  find "$out/logs" -maxdepth 1 -name "$t.w*.log" 2>/dev/null | sort -V
}

# One worker log's "execs exec/s cov ft": libFuzzer's final stats (stat::number_of_executed_units,
# stat::average_exec_per_sec) when it wrote them, else its last status line.
log_figures() {
  local log=$1 last execs=0 rate=0 cov=0 ft=0 n r
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  if [[ -n $last ]]; then
    execs=$(sed -E 's/^#([0-9]+).*/\1/' <<<"$last")
    cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | awk '{print $2}' || true)
    ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | awk '{print $2}' || true)
    rate=$(grep -oE 'exec/s: [0-9]+' <<<"$last" | awk '{print $2}' || true)
  fi
  n=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  r=$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}' || true)
  echo "${n:-$execs} ${r:-${rate:-0}} ${cov:-0} ${ft:-0}"
}

# The figures of one target from its logs and directories, as one tab-separated line: executions
# and rates summed over its workers, coverage of the worker that reached the most.
figures() {
  local t=$1 execs="-" rate="-" cov="-" ft="-" status="-" units=0 bytes=0 crashes=0
  local logs
  mapfile -t logs < <(worker_logs "$t")
  if (( ${#logs[@]} > 0 )); then
    local log e r c f
    execs=$(before "$t") rate=0 cov=0 ft=0
    for log in "${logs[@]}"; do
      read -r e r c f < <(log_figures "$log")
      execs=$((execs + e)) rate=$((rate + r))
      (( c > cov )) && cov=$c
      (( f > ft )) && ft=$f
    done
    if [[ -f "$out/logs/$t.status" ]]; then
      status=$(cat "$out/logs/$t.status")
    else
      status=running
    fi
  fi
  if [[ -d "$out/corpus/$t" ]]; then
    units=$(find "$out/corpus/$t" -type f | wc -l)
    bytes=$(find "$out/corpus/$t" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')
  fi
  if [[ -d "$out/artifacts/$t" ]]; then
    crashes=$(find "$out/artifacts/$t" -type f \( -name 'crash-*' -o -name 'timeout-*' \
      -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$execs" "$rate" "$cov" "$ft" \
    "$units" "$bytes" "$crashes" "$status"
}

# Executions of a target's earlier, stopped runs.
before() {
  cat "$out/logs/$1.before" 2>/dev/null || echo 0
}

# Executions of a target's last run, summed over its workers.
last_run_execs() {
  local log sum=0 e _
  while read -r log; do
    read -r e _ < <(log_figures "$log")
    sum=$((sum + e))
  done < <(worker_logs "$1")
  echo "$sum"
}

report() {
  local ts=()
  if (( ${#targets[@]} > 0 )); then
    ts=("${targets[@]}")
  elif [[ -d "$out/logs" ]]; then
    mapfile -t ts < <(find "$out/logs" -name '*.log' ! -name '*.w[0-9]*.log' -printf '%f\n' | sed 's/\.log$//' | sort)
  fi
  {
    printf 'target\texecs\texec/s\tcov\tft\tcorpus_units\tcorpus_bytes\tcrashes\tstatus\n'
    for t in "${ts[@]}"; do figures "$t"; done
  } >"$out/summary.tsv"
  column -t -s $'\t' "$out/summary.tsv"
}

if $report_only; then
  report
  exit 0
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "==> installing cargo-fuzz"
  cargo install --locked cargo-fuzz
fi
if (( ${#targets[@]} == 0 )); then
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi
if $trace_compares; then
  (cd fuzz && cargo fuzz build -s none)
  bin=$(pwd)/fuzz/target/x86_64-unknown-linux-gnu/release
else
  # Its own target directory: other instrumentation flags rebuild every dependency.
  (cd fuzz && cargo fuzz build -s none --no-trace-compares --target-dir target/no-trace-compares)
  bin=$(pwd)/fuzz/target/no-trace-compares/x86_64-unknown-linux-gnu/release
fi
mkdir -p "$out/logs"

# One target: --workers libFuzzer processes to --runs executions in all; the status file says
# how it ended.
run_target() {
  local t=$1
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
  # An earlier run that did not finish (stopped, or no status: killed) counts towards --runs.
  local last
  last=$(cat "$out/logs/$t.status" 2>/dev/null || echo killed)
  if [[ -f "$out/logs/$t.log" && $last != done && $last != crash ]]; then
    echo $(($(before "$t") + $(last_run_execs "$t"))) >"$out/logs/$t.before.new"
    mv "$out/logs/$t.before.new" "$out/logs/$t.before"
  else
    rm -f "$out/logs/$t.before"
  fi
  rm -f "$out/logs/$t.status" "$out/logs/$t".w*.log
  local left=$((runs - $(before "$t")))
  if (( left <= 0 )); then
    echo done >"$out/logs/$t.status"
    echo "==> $t: done after $(before "$t") executions in earlier runs"
    return
  fi
  local each=$(((left + workers - 1) / workers))
  local args=(-runs="$each" -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$out/artifacts/$t/")
  (( max_time > 0 )) && args+=(-max_total_time="$max_time")
  local w pids=() log
  for ((w = 1; w <= workers; w++)); do
    log=$out/logs/$t.log
    (( w > 1 )) && log=$out/logs/$t.w$w.log
    "$bin/$t" "${args[@]}" "$out/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1 &
    pids+=("$!")
  done
  # libFuzzer exits 72 when interrupted (SIGINT, SIGTERM): that run was stopped, not a crash.
  local pid rc crashed=false
  for pid in "${pids[@]}"; do
    rc=0
    wait "$pid" || rc=$?
    (( rc != 0 && rc != 72 )) && crashed=true
  done
  local n
  n=$(last_run_execs "$t")
  if $crashed; then
    echo crash >"$out/logs/$t.status"
  elif (( n >= left )); then
    echo done >"$out/logs/$t.status"
  else
    echo stopped >"$out/logs/$t.status"
  fi
  echo "==> $t: $(cat "$out/logs/$t.status") after $(($(before "$t") + n)) executions"
}

echo "==> fuzzing ${#targets[@]} targets to $runs executions, $jobs at a time, $workers workers each, into $out"
for t in "${targets[@]}"; do
  while (( $(jobs -rp | wc -l) >= jobs )); do
    wait -n || true
  done
  run_target "$t" &
done
wait
report
