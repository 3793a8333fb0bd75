#!/usr/bin/env bash
# Incremental dedup against earlier runs (docs/incremental.md): CORPUS split into three dumps in
# input order; dump 1 alone, dump 2 --against run 1, dump 3 --against runs 1 and 2; scored in the
# kept-set view (eval/score.py) beside one run over the whole corpus, with the same options.
#
#   eval/run_incremental_eval.sh CORPUS TRUTH [SIMDUP] [--chinese]
#   env: DEDUP_ARGS (extra options for every `simdup dedup`), WORK (default: a temporary dir)
#
# Prints a Markdown table: documents kept, true pairs left with both documents kept (count and
# share), drops that are not true pairs (below 0.8 and below 0.6, exact Jaccard), the
# against-drops whose verified Jaccard is below the threshold, dump 3's wall time with and
# without the indexes, and the index bytes per kept document.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
corpus=${1:?CORPUS}
truth=${2:?TRUTH}
simdup=${3:-$root/build/release/cli/simdup}
chinese=${4:-}
py=/usr/bin/python3
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
# shellcheck disable=SC2206
args=(-q ${DEDUP_ARGS:-})

lines=$(wc -l < "$corpus")
third=$(((lines + 2) / 3))
split -l "$third" -d -a 1 "$corpus" "$work/dump."
for i in 0 1 2; do mv "$work/dump.$i" "$work/dump$((i + 1)).jsonl"; done

seconds() { "$py" -c 'import sys,time; print(f"{time.time()-float(sys.argv[1]):.2f}")' "$1"; }
rm -rf "$work"/single "$work"/run1 "$work"/run2 "$work"/run3 "$work"/alone3
"$simdup" dedup "$corpus" --out "$work/single" "${args[@]}"
"$simdup" dedup "$work/dump1.jsonl" --out "$work/run1" "${args[@]}"
"$simdup" dedup "$work/dump2.jsonl" --against "$work/run1" --out "$work/run2" "${args[@]}"
start=$(date +%s.%N)
"$simdup" dedup "$work/dump3.jsonl" --against "$work/run1" --against "$work/run2" \
  --out "$work/run3" "${args[@]}"
against_s=$(seconds "$start")
start=$(date +%s.%N)
"$simdup" dedup "$work/dump3.jsonl" --out "$work/alone3" "${args[@]}"
alone_s=$(seconds "$start")
# One duplicates map for the three runs. Cluster ids are ordinals of each run: prefixed with the
# run; a document dropped against an earlier run joins its earlier document's cluster.
"$py" - "$work" > "$work/union.duplicates.jsonl" <<'PY'
import json, sys
from pathlib import Path
work = Path(sys.argv[1])
cluster_of = {}
for run in ("run1", "run2", "run3"):
    for line in open(work / run / "duplicates.jsonl"):
        r = json.loads(line)
        rep = str(r["duplicate_of"])
        if r.get("against"):
            r["cluster"] = cluster_of.setdefault(rep, "id:" + rep)
        else:
            r["cluster"] = f"{run}:{r['cluster']}"
            cluster_of.setdefault(rep, r["cluster"])
        cluster_of[str(r["id"])] = r["cluster"]
        print(json.dumps(r))
PY

"$py" "$here/score.py" "$truth" "$work/single/duplicates.jsonl" --corpus "$corpus" $chinese \
  > "$work/single.score.json"
"$py" "$here/score.py" "$truth" "$work/union.duplicates.jsonl" --corpus "$corpus" $chinese \
  > "$work/union.score.json"

"$py" - "$work" "$against_s" "$alone_s" <<'PY'
import json, sys
from pathlib import Path
work, against_s, alone_s = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
def kept(run):
    return json.load(open(work / run / "summary.json"))["documents"]["kept"]
threshold = json.load(open(work / "run1" / "summary.json"))["parameters"]["verify"]
threshold = threshold["jaccard"] if threshold else None
low = 0
against = 0
for run in ("run2", "run3"):
    for line in open(work / run / "duplicates.jsonl"):
        r = json.loads(line)
        if "against" not in r:
            continue
        against += 1
        if threshold and r["layer"] == "near" and r.get("jaccard", 0) < threshold:
            low += 1
rows = []
for name, score, kept_n in (("one run", "single", kept("single")),
                            ("three dumps", "union", sum(kept(r) for r in ("run1", "run2", "run3")))):
    k = json.load(open(work / f"{score}.score.json"))["kept"]
    rows.append((name, kept_n, k["true_pairs_both_kept"], 100 * k["true_pairs_both_kept_share"],
                 k["drops_below_0.8"],
                 k.get("drops_below_0.6", "?")))
idx = [json.load(open(work / r / "summary.json"))["index"] for r in ("run1", "run2")]
other = max(i["other_bytes_per_document"] for i in idx)
verif = max(i["verification_bytes_per_document"] for i in idx)
ids = max(i["id_bytes_per_document"] for i in idx)
print("| run | kept | true pairs both kept | share % | drops < 0.8 | drops < 0.6 |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    print("| %s | %d | %d | %.3f | %s | %s |" % r)
print()
print(f"dropped against earlier runs: {against}; near ones verified below the threshold: {low}")
print(f"dump 3: {alone_s} s alone, {against_s} s against runs 1 and 2")
print(f"index per kept document: {other:.1f} B beyond the id ({ids:.1f} B) and the "
      f"verification data ({verif:.1f} B)")
PY
