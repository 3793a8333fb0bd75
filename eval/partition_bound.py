#!/usr/bin/python3
"""How high a partition's cluster-pair F1 can go on a corpus, given perfect links.

    /usr/bin/python3 eval/partition_bound.py TRUTH.tsv

The cluster-pair view (eval/score.py) scores a partition against the true pairs (exact Jaccard
>= 0.8). That truth is not transitive: A~B and B~C with A and C below 0.8. A partition that
keeps the chain counts A-C as a false pair, one that cuts it misses A-B or B-C, so no partition
reaches F1 1.0 even when every link it is built from is a true pair. This script builds
partitions from the truth itself (the links a detector that never errs would give) and prints
their precision, recall and F1:

  components      connected components (what union-find clustering gives)
  star            each document in id order takes its unassigned partners (as star and, with
                  perfect links, anchored clusters do when ids are in keep order)
  centers         pivots by number of partners, then local moves that keep every member linked
                  to its center (`simdup dedup --clusters centers` on perfect links)
  local search    the same pivots, then unconstrained local moves of the correlation
                  clustering objective (a member may leave its center; no similarity floor):
                  an estimate of the best any partition reaches, not a proven optimum

Prints one JSON object per line. Exit status 0, or 2 on a usage or input error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import score  # noqa: E402

ROUNDS = 20


def graph(truth: set[tuple[str, str]]) -> dict[str, set[str]]:
    adj: dict[str, set[str]] = defaultdict(set)
    for a, b in truth:
        adj[a].add(b)
        adj[b].add(a)
    return adj


def f1(truth: set[tuple[str, str]], cluster: dict[str, str]) -> dict[str, float]:
    """Cluster-pair precision, recall and F1 (score.py's view), to 4 places."""
    sizes: dict[str, int] = defaultdict(int)
    for c in cluster.values():
        sizes[c] += 1
    predicted = sum(s * (s - 1) // 2 for s in sizes.values())
    found = sum(1 for a, b in truth if cluster[a] == cluster[b])
    m = score.metrics(found, predicted, len(truth))
    return {k: round(m[k], 4) for k in ("precision", "recall", "f1")}


def components(adj: dict[str, set[str]]) -> dict[str, str]:
    cluster: dict[str, str] = {}
    for start in sorted(adj):
        if start in cluster:
            continue
        cluster[start] = start
        todo = [start]
        while todo:
            for w in adj[todo.pop()]:
                if w not in cluster:
                    cluster[w] = start
                    todo.append(w)
    return cluster


def pivots(adj: dict[str, set[str]], order: list[str]) -> dict[str, str]:
    cluster: dict[str, str] = {}
    for v in order:
        if v in cluster:
            continue
        cluster[v] = v
        for w in adj[v]:
            cluster.setdefault(w, v)
    return cluster


def local_moves(adj: dict[str, set[str]], cluster: dict[str, str], keep_centers: bool):
    """Moves each document to the cluster where 2 x its links - the cluster's size is largest
    (staying wins ties). keep_centers: only to clusters whose center it is linked to, and a
    center with members stays; else also alone, when every cluster scores below zero."""
    size: dict[object, int] = defaultdict(int)
    for c in cluster.values():
        size[c] += 1
    for _ in range(ROUNDS):
        moves = 0
        for v in sorted(adj):
            current = cluster[v]
            if keep_centers and current == v and size[v] > 1:
                continue
            links: dict[object, int] = defaultdict(int)
            for w in adj[v]:
                links[cluster[w]] += 1

            def value(c: object) -> int:
                return 2 * links.get(c, 0) - (size[c] - (c == current))

            best, best_value = current, value(current)
            for c in sorted(links, key=str):
                if c != current and (not keep_centers or c in adj[v]) and value(c) > best_value:
                    best, best_value = c, value(c)
            if not keep_centers and best_value < 0:
                best = ("alone", v)
            if best != current:
                size[current] -= 1
                size[best] += 1
                cluster[v] = best
                moves += 1
        if moves == 0:
            break
    return cluster


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("truth", type=Path, help="TRUTH.tsv (a<TAB>b[<TAB>jaccard] per true pair)")
    args = ap.parse_args()
    try:
        truth = score.read_truth(args.truth)
    except (OSError, score.InputError) as e:
        print(f"partition_bound: {e}", file=sys.stderr)
        return 2
    adj = graph(truth)
    by_partners = sorted(adj, key=lambda v: (-len(adj[v]), v))
    runs = {
        "components": components(adj),
        "star": pivots(adj, sorted(adj)),
        "centers": local_moves(adj, pivots(adj, by_partners), keep_centers=True),
        "local search": local_moves(adj, pivots(adj, by_partners), keep_centers=False),
    }
    print(json.dumps({"truth": str(args.truth), "true_pairs": len(truth), "documents": len(adj)}))
    for name, cluster in runs.items():
        print(json.dumps({"partition": name, **f1(truth, cluster)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
