#!/usr/bin/env bash
# The main job on the bundled sample corpus: `simdup dedup` (default settings) into
# build/sample-run, then the short human summary and a few duplicate decisions; the full report
# is build/sample-run/report.html.
set -euo pipefail
simdup=$1
sample=$2
out=build/sample-run
echo "== simdup dedup $sample --out $out --force"
"$simdup" dedup "$sample" --out "$out" --force   # replaces the previous run's result
echo "== first duplicates ($out/duplicates.jsonl)"
head -5 "$out/duplicates.jsonl"
echo "== open $out/report.html in a browser for the charts and side-by-side samples"
