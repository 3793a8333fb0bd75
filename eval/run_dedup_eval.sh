#!/usr/bin/env bash
# Quality of `simdup dedup` (all layers, batch mode) for k = 0..12, without and with
# --verify jaccard:0.8, on the English and Chinese evaluation corpora; scored with
# eval/score.py on the duplicates map (cluster view: every pair inside a cluster is predicted;
# representative view: each id -> duplicate_of link is predicted).
#
#   eval/run_dedup_eval.sh [SIMDUP] [EVAL_DIR]
#   env: KS (default "0 1 ... 12"), LANGS (default "en zh"), CLUSTERS (components|star),
#        DEDUP_ARGS (extra options for `simdup dedup`)
#
# Writes EVAL_DIR/dedup-results/<lang>.<variant>.k<K>.score.json and
# EVAL_DIR/dedup-results.<clusters>.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
simdup=${1:-${SIMDUP_BIN:-$root/build/release/cli/simdup}}
dir=${2:-$here/out}
ks=${KS:-0 1 2 3 4 5 6 7 8 9 10 11 12}
langs=${LANGS:-en zh}
clusters=${CLUSTERS:-components}
py=/usr/bin/python3
for lang in $langs; do
  if [ ! -s "$dir/$lang.jsonl" ] || [ ! -s "$dir/$lang.truth.tsv" ]; then
    "$py" "$here/generate.py" --out "$dir"
    break
  fi
done
res="$dir/dedup-results"
mkdir -p "$res"
report="$dir/dedup-results.$clusters.md"
{
  echo "# simdup dedup quality (batch, --clusters $clusters, all layers) vs exact 5-gram Jaccard >= 0.8"
  echo
  echo "extra options: \`${DEDUP_ARGS:-}\`"
} > "$report"
for lang in $langs; do
  corpus="$dir/$lang.jsonl"
  truth="$dir/$lang.truth.tsv"
  {
    echo
    echo "## $lang: $(wc -l < "$corpus") documents, $(($(wc -l < "$truth") - 1)) true pairs"
    echo
    echo "| k | verify | cluster P | cluster R | cluster F1 | repr. P | repr. F1 | seconds |"
    echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  } >> "$report"
  for k in $ks; do
    for variant in plain verify; do
      extra=(--verify off)
      [ "$variant" = verify ] && extra=(--verify jaccard:0.8)
      out="$res/$lang.$variant.k$k"
      start=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$simdup" dedup "$corpus" --out "$out" --quiet -k "$k" --clusters "$clusters" \
        "${extra[@]}" ${DEDUP_ARGS:-}
      end=$(date +%s.%N)
      "$py" "$here/score.py" "$truth" "$out/duplicates.jsonl" > "$out.score.json"
      rm -rf "$out"
      "$py" - "$out.score.json" "$k" "$variant" "$start" "$end" >> "$report" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c, r = s["cluster"], s["representative"]
secs = float(sys.argv[5]) - float(sys.argv[4])
v = "jaccard:0.8" if sys.argv[3] == "verify" else "-"
print(f"| {sys.argv[2]} | {v} | {c['precision']:.4f} | {c['recall']:.4f} | {c['f1']:.4f} | "
      f"{r['precision']:.4f} | {r['f1']:.4f} | {secs:.1f} |")
PY
    done
  done
done
cat "$report"
