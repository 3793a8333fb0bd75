#!/usr/bin/env bash
# The service benchmark of docs/service.md ("Performance") in one command: starts `simdup serve`
# on a fresh RocksDB store on loopback, preloads it, measures check-insert in batches of 100 and
# single, and read-only checks, prints memory, then times a restart; then the same against a
# throwaway redis-server when one is installed.
#
#   scripts/bench-service.sh [BUILD_DIR]      (default build/release)
#   env: PRELOAD (default 10000000), REDIS_PRELOAD (default 1000000), PORT (default 18431),
#        SECONDS_PER_PHASE (default 10), WORK (default: a new temporary directory)
set -euo pipefail
build=${1:-build/release}
simdup=$build/cli/simdup
load=$build/bench/bench_service_load
preload=${PRELOAD:-10000000}
redis_preload=${REDIS_PRELOAD:-1000000}
port=${PORT:-18431}
secs=${SECONDS_PER_PHASE:-10}
work=${WORK:-$(mktemp -d /tmp/simdup-bench-service.XXXXXX)}
for f in "$simdup" "$load"; do
  [ -x "$f" ] || { echo "bench-service: $f not found; build the release preset first" >&2; exit 2; }
done

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

wait_healthy() {  # PORT
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$1/healthz" >/dev/null && return 0
    sleep 0.1
  done
  echo "bench-service: server on port $1 did not start" >&2
  return 1
}

memory() {  # PID INDEXED
  awk -v n="$2" '/VmRSS|VmHWM/ { printf "%s %.0f MB = %.1f B/doc\n", $1, $2 / 1024, $2 * 1024 / n }' \
    "/proc/$1/status"
}

phases() {  # PORT PRELOAD [EXTRA...]: preload, then the measured phases with EXTRA appended
  local port=$1 preload=$2
  shift 2
  "$load" --port "$port" --collection bench --preload "$preload" --threads 4 --seconds 1 --batch 100
  echo "-- check-insert, batches of 100"
  "$load" --port "$port" --collection bench --threads 4 --seconds "$secs" --batch 100 "$@"
  echo "-- check-insert, single documents, 16 connections"
  "$load" --port "$port" --collection bench --threads 16 --seconds "$secs" --batch 1 "$@"
  echo "-- check (read only), 16 connections"
  "$load" --port "$port" --collection bench --threads 16 --seconds "$secs" --op check "$@"
}

echo "== RocksDB store in $work/db (uptime: $(uptime | sed 's/.*load/load/'))"
"$simdup" serve --data "$work/db" --listen "127.0.0.1:$port" 2>"$work/serve.log" &
pid=$!
pids+=("$pid")
wait_healthy "$port"
phases "$port" "$preload" --server-pid "$pid"
indexed=$(curl -s "http://127.0.0.1:$port/v1/bench/stats" |
  /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["documents"])')
echo "indexed documents: $indexed"
memory "$pid" "$indexed"
start=$(date +%s.%N)
kill -TERM "$pid"
wait "$pid" || true
stopped=$(date +%s.%N)
"$simdup" serve --data "$work/db" --listen "127.0.0.1:$port" 2>>"$work/serve.log" &
pid=$!
pids+=("$pid")
wait_healthy "$port"
ready=$(date +%s.%N)
echo "restart: shutdown $(echo "$stopped - $start" | bc) s, start until /healthz $(echo "$ready - $stopped" | bc) s"
memory "$pid" "$indexed"
kill -TERM "$pid"
wait "$pid" || true

if ! command -v redis-server >/dev/null; then
  echo "== Redis: redis-server not installed, skipped"
  exit 0
fi
rport=$((port + 1))
sport=$((port + 2))
echo "== Redis store (redis-server on port $rport, no persistence)"
redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  >"$work/redis.log" 2>&1 &
pids+=("$!")
for _ in $(seq 1 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$simdup" serve --store "redis://127.0.0.1:$rport" --listen "127.0.0.1:$sport" \
  2>>"$work/serve.log" &
pid=$!
pids+=("$pid")
wait_healthy "$sport"
phases "$sport" "$redis_preload"
redis-cli -p "$rport" info memory | grep '^used_memory:'
redis-cli -p "$rport" dbsize
