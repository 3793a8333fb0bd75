#!/usr/bin/python3
"""Precision, recall and F1 of predicted near-duplicate pairs against the ground truth.

    /usr/bin/python3 eval/score.py TRUTH.tsv PREDICTED.jsonl [--layers near,exact]

TRUTH.tsv: `a<TAB>b[<TAB>jaccard]` per line (a header line `a<TAB>b...` and `#` comments are
skipped), unordered pairs of document ids, as eval/generate.py writes them.

PREDICTED.jsonl, either format (--format, or detected from the first record; an empty file is
an empty pairs list):
  pairs       `{"a": id, "b": id, ...}` as `simdup pairs` writes: predicted pairs as listed.
  duplicates  `{"id": id, "duplicate_of": id, "cluster": c, "layer": ...}` as `simdup dedup`
              writes. Two views are scored:
                cluster         every pair of documents in the same cluster (the members with
                                this cluster value and their representatives) is predicted;
                representative  each (id, duplicate_of) link is a predicted pair. Its recall is
                                the share of true pairs whose documents share a cluster, i.e. the
                                same recall as the cluster view; its precision counts only the
                                links, which is what a user who keeps representatives relies on.
              --layers keeps only records of those layers (e.g. `near` for the near layer).
              And the kept-set view (`kept`): true pairs left with both documents kept (neither
              is an `id` of the map), and the dropped documents whose exact Jaccard (the
              truth's) with their representative is below 0.8 and below 0.6. Jaccards under
              0.8 are not in the truth file: with --corpus (the corpus, and --chinese for the
              Chinese normalisation) they are computed by eval/truth.py; without it only the
              count below 0.8 is given.
Ids are compared as strings, so 7 and "7" are the same document. A pair of a document with
itself is ignored. Prints one JSON object. Exit status 0, or 2 on a usage or input error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


class InputError(Exception):
    pass


def _key(a: object, b: object) -> tuple[str, str] | None:
    sa, sb = str(a), str(b)
    if sa == sb:
        return None
    return (sa, sb) if sa < sb else (sb, sa)


def kept_view(truth: set[tuple[str, str]], records: list[dict], corpus: Path | None,
              chinese: bool) -> dict:
    """True pairs with both documents kept; drops far from their representative."""
    dropped = {str(r["id"]): str(r["duplicate_of"]) for r in records
               if str(r["id"]) != str(r["duplicate_of"])}
    both_kept = sum(1 for a, b in truth if a not in dropped and b not in dropped)
    far = [(d, rep) for d, rep in dropped.items() if _key(d, rep) not in truth]
    out: dict[str, object] = {
        "dropped": len(dropped), "true_pairs_both_kept": both_kept,
        "true_pairs_both_kept_share": round(both_kept / len(truth), 6) if truth else 0.0,
        "drops_below_0.8": len(far)}
    if corpus is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import truth as exact  # noqa: E402  (numpy; only needed for this view)
        want = {x for pair in far for x in pair}
        texts: dict[str, str] = {}
        with open(corpus, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                if str(rec.get("id")) in want:
                    texts[str(rec["id"])] = rec.get("text", "")
        ids = sorted(texts)
        sets = dict(zip(ids, exact.shingle_sets(exact.normalize_all([texts[i] for i in ids],
                                                                    chinese))))
        below = [exact.jaccard(sets[d], sets[r]) for d, r in far if d in sets and r in sets]
        out["drops_below_0.6"] = sum(1 for j in below if j < 0.6)
        out["drops_below_0.4"] = sum(1 for j in below if j < 0.4)
    return out


def read_truth(path: Path) -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#") or (n == 1 and line.startswith("a\tb")):
                continue
            cols = line.split("\t")
            if len(cols) < 2:
                raise InputError(f"{path}:{n}: expected `a<TAB>b`, got {line[:80]!r}")
            k = _key(cols[0], cols[1])
            if k:
                pairs.add(k)
    return pairs


def read_jsonl(path: Path) -> list[dict]:
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{path}:{n}: malformed JSON: {e.msg}") from None
            if not isinstance(rec, dict):
                raise InputError(f"{path}:{n}: expected a JSON object")
            out.append(rec)
    return out


def metrics(tp: int, predicted: int, truth: int) -> dict[str, float | int]:
    precision = tp / predicted if predicted else 1.0
    recall = tp / truth if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"truth_pairs": truth, "predicted_pairs": predicted, "true_positives": tp,
            "precision": round(precision, 6), "recall": round(recall, 6), "f1": round(f1, 6)}


def score_pairs(truth: set[tuple[str, str]], records: list[dict]) -> dict:
    predicted: set[tuple[str, str]] = set()
    for n, rec in enumerate(records, 1):
        if "a" not in rec or "b" not in rec:
            raise InputError(f"record {n}: a pairs record needs \"a\" and \"b\"")
        k = _key(rec["a"], rec["b"])
        if k:
            predicted.add(k)
    return {"format": "pairs", **metrics(len(predicted & truth), len(predicted), len(truth))}


def score_duplicates(truth: set[tuple[str, str]], records: list[dict],
                     layers: set[str] | None) -> dict:
    cluster_of: dict[str, str] = {}
    links: set[tuple[str, str]] = set()
    for n, rec in enumerate(records, 1):
        if "id" not in rec or "duplicate_of" not in rec:
            raise InputError(f"record {n}: a duplicates record needs \"id\" and \"duplicate_of\"")
        if layers is not None and str(rec.get("layer", "")) not in layers:
            continue
        doc, rep = str(rec["id"]), str(rec["duplicate_of"])
        cluster = str(rec.get("cluster", rep))
        for member in (doc, rep):
            seen = cluster_of.setdefault(member, cluster)
            if seen != cluster:
                raise InputError(f"record {n}: {member!r} is in clusters {seen!r} and {cluster!r}")
        k = _key(doc, rep)
        if k:
            links.add(k)
    sizes: dict[str, int] = defaultdict(int)
    for cluster in cluster_of.values():
        sizes[cluster] += 1
    cluster_pairs = sum(s * (s - 1) // 2 for s in sizes.values())
    together = sum(1 for a, b in truth if a in cluster_of and cluster_of.get(b) == cluster_of[a])
    rep = metrics(len(links & truth), len(links), len(truth))
    rep["recall"] = round(together / len(truth), 6) if truth else 1.0
    p, r = rep["precision"], rep["recall"]
    rep["f1"] = round(2 * p * r / (p + r), 6) if p + r else 0.0
    return {"format": "duplicates", "clusters": len(sizes),
            "cluster": metrics(together, cluster_pairs, len(truth)), "representative": rep}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Precision, recall and F1 against ground truth.")
    ap.add_argument("truth", type=Path)
    ap.add_argument("predicted", type=Path)
    ap.add_argument("--format", choices=["auto", "pairs", "duplicates"], default="auto",
                    help="format of PREDICTED (auto: from its first record; empty = pairs)")
    ap.add_argument("--layers", help="duplicates format: comma-separated layers to keep")
    ap.add_argument("--corpus", type=Path,
                    help="duplicates format: the corpus, to count drops below Jaccard 0.6")
    ap.add_argument("--chinese", action="store_true",
                    help="with --corpus: the Chinese normalisation of the truth")
    args = ap.parse_args(argv)
    try:
        truth = read_truth(args.truth)
        records = read_jsonl(args.predicted)
        fmt = args.format
        if fmt == "auto":
            first = records[0] if records else {"a": None, "b": None}
            fmt = "pairs" if "a" in first else "duplicates" if "duplicate_of" in first else ""
        if fmt == "pairs":
            result = score_pairs(truth, records)
        elif fmt == "duplicates":
            layers = set(args.layers.split(",")) if args.layers else None
            result = score_duplicates(truth, records, layers)
            result["kept"] = kept_view(truth, records, args.corpus, args.chinese)
        else:
            raise InputError(f"{args.predicted}:1: neither a pairs nor a duplicates record")
    except (OSError, InputError) as e:
        print(f"score: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
