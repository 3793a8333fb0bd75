#!/usr/bin/env bash
# `simdup dedup` at its defaults beside `simdup fingerprint` of the same file: the wall time of
# each (best of RUNS, alternating, process start and exit included), their ratio, and the
# dedup job's own phase times and candidate counts from summary.json. Issue 35's target: dedup
# at most 3x fingerprint on a real English file with many duplicates.
#
#   bench/e2e/dedup_vs_fingerprint.sh [SIMDUP] [FILE.jsonl] [RUNS]
#     SIMDUP  default build/release/cli/simdup; FILE default eval/out/large-en/en.jsonl
#             (eval/generate.py --profile large --lang en, docs/data.md); RUNS default 3
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
simdup=${1:-$root/build/release/cli/simdup}
file=${2:-$root/eval/out/large-en/en.jsonl}
runs=${3:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
now() { date +%s.%N; }
best_fp=999999 best_dd=999999
for _ in $(seq "$runs"); do
  t0=$(now)
  "$simdup" fingerprint "$file" > /dev/null
  t1=$(now)
  "$simdup" dedup "$file" --out "$out/dedup" --force --quiet
  t2=$(now)
  best_fp=$(awk -v a="$best_fp" -v b="$(awk -v x="$t0" -v y="$t1" 'BEGIN{print y-x}')" \
    'BEGIN{print (b < a) ? b : a}')
  best_dd=$(awk -v a="$best_dd" -v b="$(awk -v x="$t1" -v y="$t2" 'BEGIN{print y-x}')" \
    'BEGIN{print (b < a) ? b : a}')
done
mb=$(awk -v b="$(stat -c %s "$file")" 'BEGIN{printf "%.1f", b / 1e6}')
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file: $file ($mb MB), best of $runs"
awk -v f="$best_fp" -v d="$best_dd" -v mb="$mb" 'BEGIN{
  printf "fingerprint  %6.2f s  %6.1f MB/s\n", f, mb / f;
  printf "dedup        %6.2f s  %6.1f MB/s\n", d, mb / d;
  printf "ratio        %6.2f x  (dedup / fingerprint)\n", d / f}'
/usr/bin/python3 - "$out/dedup/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
p, t = s["pairs"], s["timings"]
docs = s["documents"]["read"]
cand = p["candidates"]
print(f"last dedup run: {docs} documents, {cand} candidates ({cand / docs:.2f} per document), "
      f"{p['rejected_by_verify']} rejected ({100 * p['rejected_by_verify'] / max(cand, 1):.0f} %)")
for name, sec in t["phases"].items():
    print(f"    {name:<40} {sec:6.2f} s")
PY
