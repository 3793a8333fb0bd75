#!/usr/bin/env bash
# Two builds of `simdup serve` side by side (e.g. main's release build as the baseline and a
# branch's): the same bench_service_load commands against each, every run on a fresh RocksDB
# store, back to back and alternating, ROUNDS times, so that a loaded machine weighs on both
# alike. Prints each run's documents/s, latency (p50, p99) and server CPU per document; compare
# the CPU per document when the machine is busy.
#
#   scripts/bench-service-ab.sh BASE_BUILD NEW_BUILD    (build directories holding cli/simdup)
#   env: ROUNDS (default 2), SECONDS_PER_RUN (default 10), PORT (default 18432),
#        LOADS (default "4:20 4:100 16:1": threads:batch of each command), LOAD (the
#        bench_service_load binary; default NEW_BUILD's)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BASE_BUILD NEW_BUILD" >&2; exit 2; }
base=$1 new=$2
load=${LOAD:-$new/bench/bench_service_load}
rounds=${ROUNDS:-2}
secs=${SECONDS_PER_RUN:-10}
port=${PORT:-18432}
loads=${LOADS:-4:20 4:100 16:1}
for f in "$base/cli/simdup" "$new/cli/simdup" "$load"; do
  [ -x "$f" ] || { echo "bench-service-ab: $f not found; build the release preset first" >&2; exit 2; }
done
work=$(mktemp -d /tmp/simdup-bench-ab.XXXXXX)
pid=
cleanup() {
  [ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

run() {  # NAME BUILD THREADS BATCH
  rm -rf "$work/db"
  "$2/cli/simdup" serve --data "$work/db" --listen "127.0.0.1:$port" >>"$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
    sleep 0.1
  done
  printf '%-4s ' "$1"
  "$load" --port "$port" --collection bench --threads "$3" --batch "$4" --seconds "$secs" \
    --op check-insert --server-pid "$pid" | tr '\n' ' '
  echo
  kill -TERM "$pid"
  wait "$pid" || true
  pid=
}

echo "== base $base, new $new; $(uptime | sed 's/.*load/load/')"
for r in $(seq 1 "$rounds"); do
  for l in $loads; do
    # Alternate which goes first, so neither always follows the other.
    if [ $((r % 2)) -eq 1 ]; then order="base new"; else order="new base"; fi
    for side in $order; do
      if [ "$side" = base ]; then build=$base; else build=$new; fi
      run "$side" "$build" "${l%%:*}" "${l##*:}"
    done
  done
done
