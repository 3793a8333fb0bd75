#!/usr/bin/env bash
# Quality of the near-duplicate layer: `simdup fingerprint` + `simdup pairs --k K` for each K on
# the English and Chinese evaluation corpora, scored against the exact-Jaccard ground truth.
#
#   eval/run_eval.sh [SIMDUP] [EVAL_DIR]
#     SIMDUP    the simdup binary (default: $SIMDUP_BIN, else build/release/cli/simdup)
#     EVAL_DIR  corpora and truth from eval/generate.py (default eval/out; generated if missing)
#   env: KS="0 1 ... 12" (the k values), LANGS="en zh", FINGERPRINT_ARGS (extra options for
#        `simdup fingerprint`, e.g. a Chinese feature mode), PAIRS_ARGS (extra `simdup pairs`
#        options).
#
# Writes EVAL_DIR/results/<lang>.k<K>.pairs.jsonl and .score.json, and EVAL_DIR/results.md:
# one markdown table per language (k, predicted pairs, true positives, precision, recall, F1,
# seconds for `simdup pairs`). Prints the tables.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
simdup=${1:-${SIMDUP_BIN:-$root/build/release/cli/simdup}}
dir=${2:-$here/out}
ks=${KS:-0 1 2 3 4 5 6 7 8 9 10 11 12}
langs=${LANGS:-en zh}
py=/usr/bin/python3

if [ ! -x "$simdup" ]; then
  echo "run_eval: no simdup binary at $simdup (build it, or pass its path)" >&2
  exit 2
fi
for lang in $langs; do
  if [ ! -s "$dir/$lang.jsonl" ] || [ ! -s "$dir/$lang.truth.tsv" ]; then
    echo "run_eval: generating the evaluation corpora in $dir" >&2
    "$py" "$here/generate.py" --out "$dir"
    break
  fi
done

mkdir -p "$dir/results"
report="$dir/results.md"
{
  echo "# Near-duplicate quality: simdup fingerprint + simdup pairs"
  echo
  echo "Ground truth: pairs with exact Jaccard >= 0.8 of character 5-gram shingle sets"
  echo "(eval/truth.py). simdup: \`$("$simdup" --version 2>/dev/null || echo unknown)\`;"
  echo "fingerprint options: \`${FINGERPRINT_ARGS:-(defaults)}\`; pairs options: \`${PAIRS_ARGS:-}\`."
} > "$report"

for lang in $langs; do
  corpus="$dir/$lang.jsonl"
  truth="$dir/$lang.truth.tsv"
  fp="$dir/results/$lang.fingerprints.jsonl"
  docs=$(wc -l < "$corpus")
  truth_pairs=$(($(wc -l < "$truth") - 1))
  # shellcheck disable=SC2086
  "$simdup" fingerprint ${FINGERPRINT_ARGS:-} "$corpus" > "$fp"
  {
    echo
    echo "## $lang: $docs documents, $truth_pairs true pairs"
    echo
    echo "| k | predicted pairs | true positives | precision | recall | F1 | pairs seconds |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  } >> "$report"
  for k in $ks; do
    pairs="$dir/results/$lang.k$k.pairs.jsonl"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$simdup" pairs --k "$k" ${PAIRS_ARGS:-} "$fp" > "$pairs"
    end=$(date +%s.%N)
    "$py" "$here/score.py" "$truth" "$pairs" > "$dir/results/$lang.k$k.score.json"
    "$py" - "$dir/results/$lang.k$k.score.json" "$k" "$start" "$end" >> "$report" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
secs = float(sys.argv[4]) - float(sys.argv[3])
print(f"| {sys.argv[2]} | {s['predicted_pairs']} | {s['true_positives']} | "
      f"{s['precision']:.4f} | {s['recall']:.4f} | {s['f1']:.4f} | {secs:.2f} |")
PY
  done
done
cat "$report"
