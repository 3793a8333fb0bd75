#!/usr/bin/env bash
# Fuzz smoke run: each libFuzzer harness of fuzz/ for a few seconds over its seed corpus
# (fuzz/corpus/<name>), for CI. New inputs go to a scratch directory, never into the repo's
# corpus; a crash fails the script and its input is kept under $FUZZ_ARTIFACTS.
#
# Usage: scripts/fuzz-smoke.sh [BUILD_DIR]   (default build/fuzz, made by `make fuzz`)
# Environment: FUZZ_SECONDS per harness (default 5), FUZZ_ARTIFACTS (default a temp dir),
#              FUZZ_ONLY (a regex on harness names, e.g. 'reader'), FUZZ_CORPUS (a directory
#              that keeps each harness's grown corpus between runs, for campaigns; default a
#              temp dir), FUZZ_STATS (a file that gets "harness runs seconds" per harness).
# Campaigns to a number of executions per harness: scripts/fuzz-campaign.sh (docs/fuzzing.md).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build/fuzz}"
seconds="${FUZZ_SECONDS:-5}"
only="${FUZZ_ONLY:-.}"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/simdup-fuzz-smoke.XXXXXX")"
artifacts="${FUZZ_ARTIFACTS:-$scratch/artifacts}"
mkdir -p "$artifacts"
corpora="${FUZZ_CORPUS:-$scratch/corpus}"
trap 'rm -rf "$scratch/corpus"' EXIT

shopt -s nullglob
harnesses=("$build"/fuzz/fuzz_*_fuzz)
if [ ${#harnesses[@]} -eq 0 ]; then
  echo "fuzz-smoke: no harnesses under $build/fuzz (run make fuzz)" >&2
  exit 2
fi

failed=()
start=$SECONDS
for bin in "${harnesses[@]}"; do
  name="$(basename "$bin")"
  name="${name#fuzz_}"
  name="${name%_fuzz}"
  [[ "$name" =~ $only ]] || continue
  corpus="$name"
  [ "$name" = http_parser ] && corpus=http
  seeds="$root/fuzz/corpus/$corpus"
  if [ ! -d "$seeds" ]; then
    echo "fuzz-smoke: $name has no seed corpus $seeds" >&2
    failed+=("$name")
    continue
  fi
  mkdir -p "$corpora/$name"
  log="$scratch/$name.log"
  if "$bin" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$name-" "$corpora/$name" "$seeds" >"$log" 2>&1; then
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
    echo "fuzz-smoke: $name ok (${runs:-?} runs in ${seconds}s)"
    if [ -n "${FUZZ_STATS:-}" ]; then echo "$name ${runs:-0} $seconds" >>"$FUZZ_STATS"; fi
  else
    echo "fuzz-smoke: $name FAILED; log tail (artifacts in $artifacts):" >&2
    tail -n 40 "$log" >&2
    failed+=("$name")
  fi
done

echo "fuzz-smoke: $((SECONDS - start))s in all"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz-smoke: failed: ${failed[*]}" >&2
  exit 1
fi
