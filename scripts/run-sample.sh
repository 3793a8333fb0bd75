#!/usr/bin/env bash
# The main job on the bundled sample corpus; prints a short summary.
set -euo pipefail
simdup=$1
sample=$2
out=build/sample-run
rm -rf "$out"; mkdir -p "$out"
echo "== simdup fingerprint $sample"
"$simdup" fingerprint "$sample" > "$out/fingerprints.jsonl"
echo "fingerprinted $(wc -l < "$out/fingerprints.jsonl") documents -> $out/fingerprints.jsonl"
head -3 "$out/fingerprints.jsonl"
