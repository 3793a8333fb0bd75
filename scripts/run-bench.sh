#!/usr/bin/env bash
# Runs the micro-benchmarks and every end-to-end harness of a build directory.
set -euo pipefail
dir=${1:-build/release}
if [ -x "$dir/bench/simdup_bench" ]; then
  "$dir/bench/simdup_bench" --benchmark_counters_tabular=true
fi
for harness in "$dir"/bench/bench_*; do
  [ -x "$harness" ] || continue
  # The service harness is a client: scripts/bench-service.sh starts the servers it needs.
  [ "$(basename "$harness")" = bench_service_load ] && continue
  echo "== $(basename "$harness")"
  "$harness"
done
echo "== bench_service_load (scripts/bench-service.sh)"
bash "$(dirname "$0")/bench-service.sh" "$dir"
