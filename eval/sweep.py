#!/usr/bin/python3
"""Sweeps `simdup dedup` options on one evaluation corpus and scores every run in both views.

    nice -n 10 /usr/bin/python3 eval/sweep.py SIMDUP CORPUS.jsonl TRUTH.tsv [--chinese]
        [--config 'LABEL=DEDUP OPTIONS' ...] [--out DIR] [--table results.md]

Each --config is one run of `simdup dedup CORPUS --out DIR/LABEL --quiet OPTIONS` (batch mode);
without --config, a default sweep of k, clustering and verification runs. For every run the
table gives: cluster-pair precision / recall / F1 and the representative view's precision
(eval/score.py), the kept-set view (true pairs left with both documents kept; drops whose exact
Jaccard with their representative is below 0.8, i.e. not a true pair, of all drops, and below
0.6: score.py --corpus), candidate pairs per
document and the share rejected by verification (summary.json), the near phase's seconds (all
pairs, verification, clusters), total seconds and MB/s. Runs are sequential; each run's
duplicates map is deleted after scoring. A JSON line per run is appended to DIR/sweep.jsonl.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import score  # noqa: E402

DEFAULT_CONFIGS = [
    f"k{k}-{c}-{v}=-k {k} --clusters {c} --verify {'jaccard:0.8' if v == 'verify' else 'off'}"
    for k in (3, 6, 8, 10, 12) for c in ("star", "components") for v in ("off", "verify")
]


def run_one(simdup: str, corpus: Path, truth: set, label: str, options: str, out: Path,
            chinese: bool) -> dict:
    target = out / label
    shutil.rmtree(target, ignore_errors=True)
    cmd = [simdup, "dedup", str(corpus), "--out", str(target), "--quiet", "--mode", "batch",
           *shlex.split(options)]
    start = time.monotonic()
    subprocess.run(cmd, check=True)
    seconds = time.monotonic() - start
    summary = json.loads((target / "summary.json").read_text())
    records = score.read_jsonl(target / "duplicates.jsonl")
    scored = score.score_duplicates(truth, records, None)
    kept = score.kept_view(truth, records, corpus, chinese)
    shutil.rmtree(target, ignore_errors=True)
    docs = summary["documents"]["read"]
    pairs = summary["pairs"]
    phases = summary["timings"]["phases"]
    return {
        "label": label, "options": options, "documents": docs,
        "cluster": scored["cluster"], "representative": scored["representative"], "kept": kept,
        "candidates_per_doc": pairs["candidates"] / docs if docs else 0.0,
        "rejected_share": pairs["rejected_by_verify"] / pairs["candidates"]
        if pairs["candidates"] else 0.0,
        "near_seconds": phases.get("near pairs, verification, clusters", 0.0),
        "seconds": seconds, "simdup_seconds": summary["timings"]["total_seconds"],
        "mb_per_second": summary["timings"]["mb_per_second"],
    }


HEADER = ("| run | options | cluster P | cluster R | cluster F1 | repr. P | both kept | drops < 0.8 "
          "| drops < 0.6 | cand./doc | rejected | near s | total s | MB/s |\n"
          "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: | ---: |")


def row(r: dict) -> str:
    c, k = r["cluster"], r["kept"]
    return (f"| {r['label']} | `{r['options']}` | {c['precision']:.3f} | {c['recall']:.3f} | "
            f"{c['f1']:.3f} | {r['representative']['precision']:.3f} | "
            f"{100 * k['true_pairs_both_kept_share']:.3f} % | {k['drops_below_0.8']} of {k['dropped']} | "
            f"{k.get('drops_below_0.6', '-')} | {r['candidates_per_doc']:.1f} | "
            f"{100 * r['rejected_share']:.0f} % | {r['near_seconds']:.1f} | "
            f"{r['simdup_seconds']:.1f} | {r['mb_per_second']:.0f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("simdup")
    ap.add_argument("corpus", type=Path)
    ap.add_argument("truth", type=Path)
    ap.add_argument("--chinese", action="store_true", help="the Chinese truth normalisation")
    ap.add_argument("--config", action="append", default=[], help="LABEL=OPTIONS (repeatable)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "sweep")
    ap.add_argument("--table", type=Path, help="also append the table to this markdown file")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    truth = score.read_truth(args.truth)
    docs = sum(1 for _ in open(args.corpus, encoding="utf-8"))
    title = (f"{args.corpus.name}: {docs} documents, {len(truth)} true pairs")
    lines = [f"#### {title}", "", HEADER]
    print("\n".join(lines), flush=True)
    for config in args.config or DEFAULT_CONFIGS:
        label, _, options = config.partition("=")
        r = run_one(args.simdup, args.corpus, truth, label, options, args.out, args.chinese)
        with open(args.out / "sweep.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps({"corpus": str(args.corpus), **r}) + "\n")
        lines.append(row(r))
        print(lines[-1], flush=True)
    if args.table:
        with open(args.table, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
