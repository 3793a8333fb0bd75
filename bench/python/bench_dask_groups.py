"""The near layer's grouped pair search of simdup.dask (dask_group_pairs: all_pairs inside each
group of documents sharing a table's block) on one shuffle partition of bench_dask.py's corpus,
in CPU seconds, beside the same fingerprints made uniform (unbiased).

    /usr/bin/python3 bench/python/bench_dask_groups.py [--docs 1000000] [--shards 16]
                                                       [--dir /tmp/simdup-bench-dask]

Run bench_dask.py with the same --docs, --shards and --dir first (it writes the corpus). The
groups are those of shuffle partition 0 of --shards (k 8, r 1: 9 tables), all documents
included (the pipeline leaves exact copies out). SIMDUP_BUILD_DIR picks the build: a build
whose dask_group_pairs takes no tables (before 2026-11-26) is timed with the Python filter that
kept each pair's first table.
"""

import argparse
import glob
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_common  # noqa: E402  (puts the build's package on sys.path)

from simdup import _core  # noqa: E402
import simdup.dask as sdask  # noqa: E402


def groups_of_partition(fps, parts, masks):
    table = np.repeat(np.arange(len(masks), dtype=np.uint16), len(fps))
    key = (fps[None, :] & masks[:, None]).reshape(-1)
    fp = np.tile(fps, len(masks))
    mine = sdask._hash_dest(key, parts, table.astype(np.uint64)) == 0
    table, key, fp = table[mine], key[mine], fp[mine]
    order = np.lexsort((key, table))
    table, key, fp = table[order], key[order], fp[order]
    new = np.ones(len(fp), dtype=bool)
    new[1:] = (table[1:] != table[:-1]) | (key[1:] != key[:-1])
    return fp, table, np.flatnonzero(new)


def pairs(fp, table, starts, masks, k):
    bounds = np.append(starts, len(fp)).astype(np.uint64)
    if "tables" in (_core.dask_group_pairs.__doc__ or ""):
        return _core.dask_group_pairs(fp, bounds, table[starts].astype(np.uint64), masks, k)[0]
    a, b = (x.astype(np.int64) for x in _core.dask_group_pairs(fp, bounds, k))
    first = np.argmax(((fp[a] ^ fp[b])[:, None] & masks[None, :]) == 0, axis=1) if len(a) else a
    return a[first == table[a]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--dir", default="/tmp/simdup-bench-dask")
    args = ap.parse_args()
    paths = sorted(glob.glob(os.path.join(args.dir, f"docs-{args.docs}", "part-*.jsonl")))
    if not paths:
        sys.exit(f"no corpus under {args.dir}/docs-{args.docs}: run bench_dask.py first")
    print(f"simdup build: {bench_common.BUILD}")
    fps = np.concatenate([_core.dask_sign([p], None, "", {"threads": 1}, None)["fingerprint"]
                          for p in paths])
    k = 8
    masks = sdask._block_masks(k, 1)
    uniform = np.random.default_rng(1).integers(0, 2**64 - 1, size=len(fps), dtype=np.uint64)
    for name, values in (("corpus", fps), ("uniform", uniform)):
        fp, table, starts = groups_of_partition(values, args.shards, masks)
        t0 = time.process_time()
        found = pairs(fp, table, starts, masks, k)
        print(f"{name} fingerprints: {len(fp):,} entries in {len(starts)} groups, "
              f"{len(found):,} pairs, {time.process_time() - t0:.2f} s CPU")


if __name__ == "__main__":
    main()
