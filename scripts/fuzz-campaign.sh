#!/usr/bin/env bash
# Fuzz campaign: runs each libFuzzer harness of fuzz/ to a number of executions (default 10^7)
# over its seeds and a kept corpus, in runs of at most FUZZ_CHUNK executions, and writes one table
# row per run:
#   harness  execs  wall_s  cpu_s  execs_per_s  execs_per_cpu_s  new_corpus  crashes  source
# (execs_per_cpu_s is the fair rate on a shared machine, where a nice 19 process waits; source is
# the commit the harnesses were built from). The campaign resumes: a harness's executions are
# the sum of its rows of the same source in the table, so a stopped campaign started again
# (same FUZZ_WORK) goes on where its last finished run ended, over the corpus it had grown.
# Crashes, leaks, timeouts and out-of-memory inputs are kept under the crash directory as
# replay inputs: each becomes a test in tests/unit (docs/fuzzing.md); the script exits 1 if any.
#
# Usage: scripts/fuzz-campaign.sh [BUILD_DIR]   (default build/fuzz, made by `make fuzz`)
# Environment:
#   FUZZ_RUNS      executions per harness (default 10000000)
#   FUZZ_CHUNK     executions per libFuzzer run (default FUZZ_RUNS: one run); what a stopped
#                  campaign loses is at most the run in progress
#   FUZZ_MAX_SECONDS  a cap of wall seconds per run (default 0: none); a run stopped by it
#                  reports the executions it made
#   FUZZ_SOURCE    the commit the harnesses were built from (default: BUILD_DIR/../SOURCE if it
#                  exists, else the checkout's HEAD)
#   FUZZ_FORK      N > 0: libFuzzer's -fork=N (N worker processes, for many-core machines; crashes
#                  do not stop the run, -ignore_crashes=1); default 0: one process
#   FUZZ_ONLY      a regex on harness names (default all)
#   FUZZ_ORDER     harness names in the order to run them, space-separated (e.g. fastest first);
#                  the others follow in name order
#   FUZZ_WORK      where the grown corpora (corpus/<harness>), crashes (crashes/) and logs
#                  (logs/) are kept between campaigns (default build/fuzz-campaign)
#   FUZZ_TABLE     the table file, appended to (default $FUZZ_WORK/campaign.tsv)
#   ASAN_OPTIONS   default malloc_context_size=5:max_malloc_fill_size=0 (short allocation
#                  stacks, no fill of new blocks: about 25 % more executions a second; a crash
#                  is still caught and kept, and replays under any options)
# Run under nice -n 19 on a shared machine.
set -euo pipefail
export ASAN_OPTIONS="${ASAN_OPTIONS:-malloc_context_size=5:max_malloc_fill_size=0}"

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build/fuzz}"
runs="${FUZZ_RUNS:-10000000}"
chunk="${FUZZ_CHUNK:-$runs}"
max_seconds="${FUZZ_MAX_SECONDS:-0}"
fork="${FUZZ_FORK:-0}"
only="${FUZZ_ONLY:-.}"
work="${FUZZ_WORK:-$root/build/fuzz-campaign}"
table="${FUZZ_TABLE:-$work/campaign.tsv}"
mkdir -p "$work/corpus" "$work/crashes" "$work/logs"

shopt -s nullglob
all=()
for bin in "$build"/fuzz/fuzz_*_fuzz; do
  name="$(basename "$bin")"
  name="${name#fuzz_}"
  all+=("${name%_fuzz}")
done
if [ ${#all[@]} -eq 0 ]; then
  echo "fuzz-campaign: no harnesses under $build/fuzz (run make fuzz)" >&2
  exit 2
fi
ordered=()
for name in ${FUZZ_ORDER:-} "${all[@]}"; do
  [[ " ${all[*]} " == *" $name "* ]] || continue
  [[ " ${ordered[*]:-} " == *" $name "* ]] && continue
  ordered+=("$name")
done

source="${FUZZ_SOURCE:-}"
[ -z "$source" ] && [ -s "$build/../SOURCE" ] && source="$(head -c 12 "$build/../SOURCE")"
[ -z "$source" ] && source="$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
if [ ! -s "$table" ]; then
  printf 'harness\texecs\twall_s\tcpu_s\texecs_per_s\texecs_per_cpu_s\tnew_corpus\tcrashes\tsource\n' \
    >"$table"
fi
# Executions a harness already has in the table from harnesses of this source.
done_runs() {
  awk -F'\t' -v n="$1" -v src="$source" '$1 == n && $9 == src { s += $2 } END { print s + 0 }' \
    "$table"
}
count_files() { find "$1" -maxdepth 1 -type f -name "${2:-*}" | wc -l; }
# Crash, leak, timeout and OOM artifacts; not slow-unit-*, which libFuzzer writes for an input
# slower than 10 s of wall time (a harness starved by other work writes them for fast inputs).
count_crashes() {
  find "$1" -maxdepth 1 -type f -name "$2-*" ! -name "$2-slow-unit-*" | wc -l
}

found=0
for name in "${ordered[@]}"; do
  [[ "$name" =~ $only ]] || continue
  seeds="$root/fuzz/corpus/$name"
  [ "$name" = http_parser ] && seeds="$root/fuzz/corpus/http"
  corpus="$work/corpus/$name"
  mkdir -p "$corpus"
  log="$work/logs/$name.log"
  while :; do
    have="$(done_runs "$name")"
    left=$((runs - have))
    [ "$left" -gt 0 ] || { echo "fuzz-campaign: $name has $have executions from $source"; break; }
    this=$((left < chunk ? left : chunk))
    before="$(count_files "$corpus")"
    crashes_before="$(count_crashes "$work/crashes" "$name")"
    args=(-runs="$this" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1
          -artifact_prefix="$work/crashes/$name-")
    [ "$max_seconds" -gt 0 ] && args+=(-max_total_time="$max_seconds")
    [ "$fork" -gt 0 ] && args+=(-fork="$fork" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    echo "fuzz-campaign: $name ($this runs, $have done$([ "$fork" -gt 0 ] && echo ", -fork=$fork"))"
    start="$(date +%s.%N)"
    # bash's `time` gives the user and system CPU seconds of the harness and its children.
    TIMEFORMAT='%U %S'
    { time "$build/fuzz/fuzz_${name}_fuzz" "${args[@]}" "$corpus" "$seeds" >"$log" 2>&1; } \
      2>"$work/logs/$name.time" || true
    end="$(date +%s.%N)"
    # One process prints its count in the final stats; fork mode only in its progress lines.
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    if [ -z "$execs" ]; then
      execs="$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)"
    fi
    execs="${execs:-0}"
    read -r user sys <"$work/logs/$name.time"
    new=$(($(count_files "$corpus") - before))
    crashes=$(($(count_crashes "$work/crashes" "$name") - crashes_before))
    found=$((found + crashes))
    awk -v n="$name" -v e="$execs" -v s="$start" -v t="$end" -v u="$user" -v y="$sys" \
        -v c="$new" -v k="$crashes" -v src="$source" 'BEGIN {
          wall = t - s; cpu = u + y
          rate = (wall > 0) ? e / wall : 0; cpu_rate = (cpu > 0) ? e / cpu : 0
          printf "%s\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%d\t%d\t%s\n", n, e, wall, cpu, rate, cpu_rate,
                 c, k, src
        }' | tee -a "$table"
    # A crash ends the harness's run early (one process): go on with the next harness; a run
    # that made no executions (a broken binary) must not loop.
    [ "$crashes" -gt 0 ] && break
    [ "$execs" -gt 0 ] || { echo "fuzz-campaign: $name made no executions: $log" >&2; break; }
    [ "$max_seconds" -gt 0 ] && break
  done
done

echo "fuzz-campaign: table in $table"
if [ "$found" -gt 0 ]; then
  echo "fuzz-campaign: $found crash input(s) kept in $work/crashes: make each a replay test" >&2
  exit 1
fi
