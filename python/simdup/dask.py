"""simdup.dask: the dedup job of ``simdup dedup`` on a Dask distributed cluster.

Every step that touches text or pairs runs in C++ (``simdup._core``) inside Dask tasks; Dask
moves numpy arrays between the steps by hash shuffles (map tasks split their output by a key,
reduce tasks concatenate one slice of every map). The steps (docs/distributed.md):

1. sign: one task per partition (a file, a byte range of a large JSONL/TSV file cut at line
   starts, or a partition of a bag/DataFrame): fingerprints, exact-layer keys, keep-policy
   data, the sizes of the verification shingle sets and MinHash band keys (not the shingle
   arrays: step 4 signs them anew for the documents that need them). A document's global
   ordinal is (partition index, row): partitions follow the order of the inputs, so this is
   the CLI's input order, and keep ``first`` means the same thing.
2. exact layers: shuffle (layer, key, ordinal) by key; each document is linked to the first
   holder of its key; connected components (large-star/small-star) give the exact groups, whose
   best member by the keep policy is its leader.
3. near candidates over the leaders: the 64 bits are cut into k + r blocks; two fingerprints
   within k agree on r of them, so each r-combination of blocks is a table, and documents are
   shuffled by (table, those blocks' bits). Within each group ``all_pairs`` finds the pairs
   within k, over blocks of the bits the group does not share (planned once per table); a pair
   is kept only by the first table whose blocks it agrees on, so it is emitted once. MinHash:
   shuffle by (band, key); each bucket in keep-policy order gives the pairs ``minhash_pairs``
   gives (the same cap on large buckets).
4. verification where both sketches meet: pairs whose shingle counts rule the threshold out are
   counted as rejected where they are found; each partition re-signs the shingle arrays of its
   documents in the other pairs or in exact groups; pairs (ordinals) go to the partition of
   their first document, then to the partition of the second with the first documents'
   top-byte counts (128 bytes; each once per destination), which rule most chance candidates
   out there as the CLI's verification does; the pairs left are asked back and sent again with
   the first documents' shingle arrays; compared in C++ by row number.
5. clusters: connected components of the exact links and verified pairs (large-star/small-star,
   iterated until every component is a star), then each component's documents (components are
   small) meet in one task that runs the batch engine over them with the corpus-wide MinHash
   candidates: its clusters, representatives, distances and Jaccards are the CLI's.

Stream mode (keep the first; the CLI's single pass) uses the same steps without MinHash: the
near layer skips the documents an earlier one shares a key with, the components join the
unverified candidates, and each component runs the stream engine in input order.

Dask is imported here only; ``import simdup`` works without it.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import os
import pathlib
import time as _time
import uuid
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _core
from . import _against_paths
from .errors import ParameterError

__all__ = ["dedup", "main"]

_LAYERS = tuple(_core.LAYER_NAMES)


def _aligned(value):
    """Arrays as C++ reads them: contiguous and aligned. Dask deserialises numpy arrays onto
    the bytes of its frames, where a uint64 column can start at any address (UBSan: misaligned
    reference), so such an array is copied; dicts of columns are handled column by column."""
    if isinstance(value, np.ndarray):
        return np.require(value, requirements="CA")
    if isinstance(value, dict):
        return {k: _aligned(v) for k, v in value.items()}
    return value


class _TimedCore:
    """simdup._core's functions, adding the CPU time of the calling thread spent in them to
    `seconds` (per worker process; bench/python/bench_dask.py reads it for the share of worker
    CPU outside C++)."""

    seconds = 0.0

    def __getattr__(self, name):
        fn = getattr(_core, name)

        def call(*args):
            args = tuple(_aligned(a) for a in args)
            start = _time.thread_time()
            try:
                return fn(*args)
            finally:
                _TimedCore.seconds += _time.thread_time() - start
        return call


_cpp = _TimedCore()
_MIX = np.uint64(0x9E3779B97F4A7C15)
# Documents per reduce partition by default: its largest task, the clusters, then holds about
# half of them (those in components) with their shingle arrays, about 1.2 GB for 500-character
# texts.
_DOCUMENTS_PER_REDUCE = 500_000
# Options of this module; the rest go to the C++ core as for simdup.dedup.
_OWN = ("client", "scheduler", "partitions", "near_prefix_blocks", "partition_bytes",
        "pack_files")


# ---------------------------------------------------------------------------------------------
# Tables: dicts of equally long numpy columns, with an optional ragged column of shingle hashes
# ("sh_off": n + 1 offsets into "sh").

def _ragged_take(offsets: np.ndarray, flat: np.ndarray, rows: np.ndarray):
    return _cpp.dask_ragged_take(offsets, flat, np.asarray(rows, dtype=np.int64))


def _take(t: Dict[str, np.ndarray], rows: np.ndarray) -> Dict[str, np.ndarray]:
    out = {k: v[rows] for k, v in t.items() if k not in ("sh_off", "sh")}
    if "sh_off" in t:
        out["sh_off"], out["sh"] = _ragged_take(t["sh_off"], t["sh"], rows)
    return out


def _concat(tables: Sequence[Dict[str, np.ndarray]]) -> Dict[str, np.ndarray]:
    # Empty pieces may have another shape (no MinHash columns from an empty partition).
    tables = [t for t in tables if _rows(t) > 0] or list(tables[:1])
    first = tables[0]
    out = {k: np.concatenate([t[k] for t in tables]) for k in first if k not in ("sh_off", "sh")}
    if "sh_off" in first:
        lengths = np.concatenate([np.diff(t["sh_off"].astype(np.int64)) for t in tables])
        out["sh_off"] = np.zeros(len(lengths) + 1, dtype=np.uint64)
        np.cumsum(lengths, out=out["sh_off"][1:])
        out["sh"] = np.concatenate([t["sh"] for t in tables])
    return out


def _rows(t: Dict[str, np.ndarray]) -> int:
    for k, v in t.items():
        if k != "sh" and k != "sh_off":
            return len(v)
    return len(t["sh_off"]) - 1


def _split(t: Dict[str, np.ndarray], dest: np.ndarray, parts: int) -> List[Dict[str, np.ndarray]]:
    order = np.argsort(dest, kind="stable")
    bounds = np.searchsorted(dest[order], np.arange(parts + 1))
    return [_take(t, order[bounds[j]:bounds[j + 1]]) for j in range(parts)]


def _hash_dest(keys: np.ndarray, parts: int, salt: Any = 0) -> np.ndarray:
    """Reduce partition of each uint64 key (Fibonacci hashing, so structured keys spread)."""
    salt = np.asarray(salt, dtype=np.uint64)
    with np.errstate(over="ignore"):
        mixed = (keys.astype(np.uint64) ^ (salt * np.uint64(0xC2B2AE3D27D4EB4F))) * _MIX
    return ((mixed >> np.uint64(32)) % np.uint64(parts)).astype(np.int64)


def _owner(gids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Signature partition holding each global ordinal."""
    return np.searchsorted(offsets, gids, side="right").astype(np.int64) - 1


def _edges(u=None, v=None) -> Dict[str, np.ndarray]:
    return {"u": np.asarray([] if u is None else u, dtype=np.uint64),
            "v": np.asarray([] if v is None else v, dtype=np.uint64)}


def _unique_pairs(u: np.ndarray, v: np.ndarray):
    order = np.lexsort((v, u))
    u, v = u[order], v[order]
    keep = np.ones(len(u), dtype=bool)
    keep[1:] = (u[1:] != u[:-1]) | (v[1:] != v[:-1])
    return u[keep], v[keep]


# ---------------------------------------------------------------------------------------------
# Task functions (top level, so that workers unpickle them by name).

def _partition(spec: Tuple, options: Dict[str, Any], records: Any = None) -> Tuple:
    """The arguments that name a partition's records to the C++ steps: (inputs, JSONL bytes,
    source name, options, byte range)."""
    if spec[0] in ("files", "range"):
        return list(spec[1]), None, "", options, _range(spec)
    if hasattr(records, "to_dict"):  # a pandas partition
        records = records.to_dict("records")
    from . import _records_jsonl
    opts = dict(options)
    opts.setdefault("input_format", "jsonl")
    return [], _records_jsonl(records), spec[-1], opts, None


def _task_spec(spec: Tuple) -> Tuple:
    """(spec, records) as tasks take them: a records partition travels as its own argument, so
    that Dask passes the computed records."""
    if spec[0] == "records":
        return spec[:1] + spec[2:], spec[1]
    return spec, None


def _sign(spec: Tuple, options: Dict[str, Any], records: Any = None) -> Dict[str, Any]:
    part = _cpp.dask_sign(*_partition(spec, options, records))
    ids = part.pop("ids")
    part["ids"] = np.empty(len(ids), dtype=object)
    part["ids"][:] = ids
    return part


def _range(spec: Tuple) -> Optional[Tuple[int, int, int]]:
    """(begin, end, lines before) of a partition that is part of a file (bytes of a JSONL or
    TSV file, rows of a Parquet file); None: a whole file."""
    return spec[2] if spec[0] == "range" else None


def _split_file(path: str, options: Dict[str, Any], target: int) -> Tuple[List[Tuple], int]:
    """The partitions of one file, and its size in bytes."""
    ranges = _cpp.dask_split_file(path, options, target)
    try:
        size = os.path.getsize(path)
    except OSError:  # missing (on_error="skip"): its partition counts it as the CLI does
        size = 0
    return [("range", (path,), r) for r in ranges] or [("files", (path,))], size


def _packed(plans: List[Tuple[List[Tuple], int]], target: int) -> List[Tuple]:
    """Whole files packed, in order, into partitions of up to `target` bytes (files of one
    kind, by their last two suffixes): a corpus of many small files would otherwise make a
    partition each, and every shuffle a task per pair of partitions."""
    specs: List[Tuple] = []
    size = 0
    for plan, nbytes in plans:
        last = specs[-1] if specs else None
        if (len(plan) == 1 and plan[0][0] == "files" and last is not None and last[0] == "files"
                and size + nbytes <= target
                and _kind(last[1][-1]) == _kind(plan[0][1][0])):
            specs[-1] = ("files", last[1] + plan[0][1])
            size += nbytes
        else:
            specs.extend(plan)  # (a split file's ranges: "range" specs, never packed with)
            size = nbytes
    return specs


def _kind(path: str) -> str:
    return "".join(s.lower() for s in pathlib.PurePath(path).suffixes[-2:])


def _count(sig: Dict[str, Any]) -> int:
    return len(sig["fingerprint"])


def _stats(sig: Dict[str, Any]) -> Dict[str, Any]:
    keys = ("skipped", "skipped_inputs", "skipped_reasons", "messages", "invalid_utf8", "short",
            "bytes", "format")
    return {k: sig[k] for k in keys}


def _exact_split(sig, offset: int, parts: int):
    gid = np.arange(len(sig["fingerprint"]), dtype=np.uint64) + np.uint64(offset)
    tables = []
    for kind, name in enumerate(("url_key", "title_key", "content_key")):
        keys = sig[name]
        has = keys != 0
        tables.append({"kind": np.full(int(has.sum()), kind, dtype=np.uint8), "key": keys[has],
                       "gid": gid[has]})
    t = _concat(tables)
    return _split(t, _hash_dest(t["key"] ^ t["kind"].astype(np.uint64), parts), parts)


def _exact_reduce(offsets: np.ndarray, *pieces):
    """Links each document to the first holder of each of its keys; twins are the documents
    whose normalised text an earlier document had (their MinHash keys are not used)."""
    t = _concat(pieces)
    order = np.lexsort((t["gid"], t["key"], t["kind"]))
    kind, key, gid = t["kind"][order], t["key"][order], t["gid"][order]
    new = np.ones(len(gid), dtype=bool)
    new[1:] = (kind[1:] != kind[:-1]) | (key[1:] != key[:-1])
    first = np.maximum.accumulate(np.where(new, np.arange(len(gid)), 0))
    later = ~new
    twins = gid[later & (kind == 2)]
    return {"edges": _edges(gid[first][later], gid[later]),
            "twins": _split({"gid": twins}, _owner(twins, offsets), len(offsets) - 1)}


def _both_ways_split(edges, parts: int):
    u = np.concatenate([edges["u"], edges["v"]])
    v = np.concatenate([edges["v"], edges["u"]])
    return _split({"u": u, "v": v}, _hash_dest(u, parts), parts)


def _grouped(pieces):
    t = _concat(pieces)
    u, v = _unique_pairs(t["u"], t["v"])
    start = np.ones(len(u), dtype=bool)
    start[1:] = u[1:] != u[:-1]
    starts = np.flatnonzero(start)
    group = np.cumsum(start) - 1
    return u, v, starts, group


def _large_star(*pieces):
    """Large-star (Kiveris et al. 2014) over each node's neighbours; also says whether the
    input was already a set of stars around each component's smallest node, and then each
    node's label (that node)."""
    u, v, starts, group = _grouped(pieces)
    node = u[starts]
    counts = np.diff(np.append(starts, len(u)))
    smallest = v[starts]  # neighbours are sorted
    ok = bool(np.all((smallest > node) | ((counts == 1) & (smallest < node))))
    m = np.minimum(node, smallest)
    up = v > u
    labels = {"node": node, "label": np.where(smallest > node, node, smallest)}
    return {"edges": _edges(v[up], m[group][up]), "ok": ok, "labels": labels}


def _small_star(*pieces):
    u, v, starts, group = _grouped(pieces)
    node = u[starts]
    smallest = v[starts]
    m = np.minimum(node, smallest)
    down = (v < u) & (v != m[group])
    moved = m != node
    return _edges(np.concatenate([v[down], node[moved]]),
                  np.concatenate([m[group][down], m[moved]]))


def _label_route(labels, offsets: np.ndarray):
    return _split(labels, _owner(labels["node"], offsets), len(offsets) - 1)


def _attach_rank(sig, offset: int, keep: str, parts: int, *pieces):
    t = _concat(pieces)
    rows = (t["node"] - np.uint64(offset)).astype(np.int64)
    t["primary"] = _primary(sig, keep)[rows]
    return _split(t, _hash_dest(t["label"], parts), parts)


def _primary(sig, keep: str) -> np.ndarray:
    """The keep policy as an ascending sort key (ties: the earlier ordinal)."""
    if keep == "longest":
        return -sig["length"].astype(np.float64)
    if keep == "newest":
        return -sig["time"].astype(np.float64)
    if keep.startswith("field:"):
        return -sig["field"]
    return np.zeros(len(sig["fingerprint"]), dtype=np.float64)


def _followers(offsets: np.ndarray, *pieces):
    """Members of exact groups that are not their group's best (they stay out of the near
    layer), routed to their signature partitions."""
    t = _concat(pieces)
    order = np.lexsort((t["node"], t["primary"], t["label"]))
    label, node = t["label"][order], t["node"][order]
    first = np.ones(len(node), dtype=bool)
    first[1:] = label[1:] != label[:-1]
    out = node[~first]
    return _split({"gid": out}, _owner(out, offsets), len(offsets) - 1)


def _later_route(offsets: np.ndarray, exact):
    """Stream mode: the documents an earlier one shares a key with (each is dropped by the
    exact layers and never kept, so it stays out of the near layer), routed to their
    signature partitions."""
    later = np.unique(exact["edges"]["v"])
    return _split({"gid": later}, _owner(later, offsets), len(offsets) - 1)


def _pairs_as_edges(routed):
    t = _concat(routed)
    return _edges(t["a"], t["b"])


def _first_followers(*pieces):
    """keep first: the best member is the smallest ordinal, which is the component's label."""
    t = _concat(pieces)
    return {"gid": t["node"][t["node"] != t["label"]]}


def _block_masks(k: int, r: int) -> np.ndarray:
    """Table masks: the 64 bits cut into k + r blocks (wider first), one table per choice of r
    blocks, in itertools.combinations order."""
    m = k + r
    widths = [64 // m + (1 if i < 64 % m else 0) for i in range(m)]
    blocks, shift = [], 64
    for w in widths:
        shift -= w
        blocks.append(((1 << w) - 1) << shift)
    masks = [functools.reduce(operator.or_, (blocks[i] for i in c), 0)
             for c in itertools.combinations(range(m), r)]
    return np.array(masks, dtype=np.uint64)


def _near_split(sig, offset: int, keep: str, masks: np.ndarray, parts: int, followers, twins):
    n = len(sig["fingerprint"])
    gid = np.arange(n, dtype=np.uint64) + np.uint64(offset)
    near = sig["has_fingerprint"].astype(bool)
    near[(followers["gid"] - np.uint64(offset)).astype(np.int64)] = False
    rows = np.flatnonzero(near)
    fp = sig["fingerprint"][rows]
    tables = {"table": np.repeat(np.arange(len(masks), dtype=np.uint16), len(rows)),
              "key": (fp[None, :] & masks[:, None]).reshape(-1),
              "gid": np.tile(gid[rows], len(masks)), "fp": np.tile(fp, len(masks)),
              "n": np.tile(sig["shingle_count"][rows], len(masks))}
    simhash = _split(tables, _hash_dest(tables["key"], parts, tables["table"].astype(np.uint64)),
                     parts)
    bands = len(sig["band_keys"]) // n if n else 0
    keys = sig["band_keys"].reshape(n, bands)
    minhash_ok = near.copy()
    minhash_ok[(twins["gid"] - np.uint64(offset)).astype(np.int64)] = False
    rows = np.flatnonzero(minhash_ok)
    primary = _primary(sig, keep)[rows]
    band_keys = keys[rows].T.reshape(-1)  # band-major
    t = {"band": np.repeat(np.arange(bands, dtype=np.uint16), len(rows)), "key": band_keys,
         "primary": np.tile(primary, bands), "gid": np.tile(gid[rows], bands),
         "fp": np.tile(sig["fingerprint"][rows], bands)}
    t = _take(t, np.flatnonzero(band_keys != 0))
    return simhash, _split(t, _hash_dest(t["key"], parts, t["band"].astype(np.uint64)), parts)


def _simhash_reduce(masks: np.ndarray, k: int, offsets: np.ndarray, size_threshold, *pieces):
    """Pairs within k in each (table, key) group, each once. With `size_threshold` (exact
    Jaccard verification), pairs whose shingle counts alone rule it out are marked "ruled": they
    are counted as candidates rejected by verification, as the CLI counts them, but no shingle
    array is signed or sent for them (most candidates of a large corpus are such chance
    collisions)."""
    t = _concat(pieces)
    order = np.lexsort((t["gid"], t["key"], t["table"]))
    table, key, gid, fp = t["table"][order], t["key"][order], t["gid"][order], t["fp"][order]
    new = np.ones(len(gid), dtype=bool)
    new[1:] = (table[1:] != table[:-1]) | (key[1:] != key[:-1])
    starts = np.flatnonzero(new)
    # Each pair once: only from the first table whose blocks it agrees on.
    a, b = _cpp.dask_group_pairs(fp, np.append(starts, len(gid)).astype(np.uint64),
                                 table[starts].astype(np.uint64), masks, k)
    a, b = a.astype(np.int64), b.astype(np.int64)
    ruled = (np.zeros(len(a), dtype=bool) if size_threshold is None else
             _cpp.dask_size_rejects(t["n"][order][a], t["n"][order][b], size_threshold))
    return _pairs_route(gid[a], gid[b], False, offsets, ruled)


def _minhash_reduce(k: int, max_bucket: int, offsets: np.ndarray, *pieces):
    t = _concat(pieces)
    out_a, out_b = [], []
    for band in np.unique(t["band"]):
        rows = np.flatnonzero(t["band"] == band)
        rows = rows[np.lexsort((t["gid"][rows], t["primary"][rows]))]  # keep-policy order
        a, b = _cpp.dask_bucket_pairs(t["key"][rows], t["fp"][rows], k, max_bucket)
        out_a.append(t["gid"][rows][a.astype(np.int64)])
        out_b.append(t["gid"][rows][b.astype(np.int64)])
    a = np.concatenate(out_a) if out_a else np.zeros(0, np.uint64)
    b = np.concatenate(out_b) if out_b else np.zeros(0, np.uint64)
    return _pairs_route(np.minimum(a, b), np.maximum(a, b), True, offsets,
                        np.zeros(len(a), dtype=bool))


def _pairs_route(a, b, minhash: bool, offsets: np.ndarray, ruled: np.ndarray):
    t = {"a": a.astype(np.uint64), "b": b.astype(np.uint64),
         "minhash": np.full(len(a), minhash, dtype=bool), "ruled": ruled.astype(bool)}
    return _split(t, _owner(t["a"], offsets), len(offsets) - 1)


def _endpoints_route(offsets: np.ndarray, table):
    """The documents a table of edges ({u, v}) or of routed pairs (a list of {a, b}) names,
    routed to their signature partitions: those whose shingle arrays a later step needs."""
    if isinstance(table, list):
        table = _concat(table)
        table = {"a": table["a"][~table["ruled"]], "b": table["b"][~table["ruled"]]}
    gids = np.unique(np.concatenate([table[k] for k in ("u", "v", "a", "b") if k in table]))
    return _split({"gid": gids}, _owner(gids, offsets), len(offsets) - 1)


def _sketch(spec, options, records, offset: int, *pieces):
    """The shingle arrays of this partition's documents that pieces name (ascending ordinals
    "gid"; "sh_off"/"sh" ragged), signed anew from the partition's records: the documents of
    candidate pairs and exact groups, which verification and the clusters need."""
    gids = np.unique(_concat(pieces)["gid"]) if pieces else np.zeros(0, np.uint64)
    if options.get("verify") == "off" or len(gids) == 0:  # no arrays to sign
        return {"gid": gids, "sh_off": np.zeros(len(gids) + 1, np.uint64),
                "sh": np.zeros(0, np.uint32)}
    sh_off, sh = _cpp.dask_sketches(*_partition(spec, options, records), gids - np.uint64(offset))
    return {"gid": gids, "sh_off": sh_off, "sh": sh}


def _sketch_rows(sketch, gids: np.ndarray) -> np.ndarray:
    return np.searchsorted(sketch["gid"], gids).astype(np.int64)


def _verify_first(sketch, index: int, offsets: np.ndarray, summaries: bool, *pieces):
    """Candidate pairs of this partition's documents (each once), counted, then shipped by
    _ship."""
    t = _concat(pieces)
    a, b = t["a"], t["b"]
    order = np.lexsort((b, a))
    a, b, minhash, ruled = a[order], b[order], t["minhash"][order], t["ruled"][order]
    keep = np.ones(len(a), dtype=bool)
    keep[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    a, b, minhash, ruled = a[keep], b[keep], minhash[keep], ruled[keep]
    counts = {"simhash": int((~minhash).sum()), "minhash": int(minhash.sum()),
              "ruled": int(ruled.sum())}
    return {"counts": counts,
            "pairs": _ship(sketch, index, offsets, a[~ruled], b[~ruled], summaries)}


def _verify_again(sketch, index: int, offsets: np.ndarray, *pieces):
    """The pairs whose top-byte counts could not rule them out, asked back by the second
    documents' partitions: shipped again, with whole shingle arrays."""
    t = _concat(pieces)
    return _ship(sketch, index, offsets, t["a"], t["b"], False)


def _ship(sketch, index: int, offsets: np.ndarray, a: np.ndarray, b: np.ndarray,
          summaries: bool):
    """Pairs (a, b) of this partition's first documents, as ordinals, routed to the second
    document's partition; with each pair list, for the first documents that the destination
    does not hold, each once however many pairs name it (none for pairs within this
    partition), their shingle arrays ("sketches") or, with `summaries`, only their top-byte
    counts and sizes ("tops": 128 bytes, 4 bits a count), which rule most chance candidates
    out as the CLI's verification does. Pairs never carry arrays."""
    parts = len(offsets) - 1
    dest = _owner(b, offsets)
    order = np.argsort(dest, kind="stable")
    bounds = np.searchsorted(dest[order], np.arange(parts + 1))
    out = []
    for j in range(parts):
        rows = order[bounds[j]:bounds[j + 1]]
        piece = {"a": a[rows], "b": b[rows]}
        firsts = np.unique(piece["a"]) if j != index else np.zeros(0, np.uint64)
        at = _sketch_rows(sketch, firsts)
        if summaries:
            sizes = np.diff(sketch["sh_off"].astype(np.int64))[at].astype(np.uint32)
            out.append({"pairs": piece, "tops": {
                "gid": firsts, "n": sizes,
                "top": _cpp.dask_top_bytes(sketch["sh_off"], sketch["sh"], at.astype(np.uint64))}})
        else:
            sketch_off, sketches = _ragged_take(sketch["sh_off"], sketch["sh"], at)
            out.append({"pairs": piece, "sketches": {"gid": firsts, "sh_off": sketch_off,
                                                     "sh": sketches}})
    return out


def _verify_second(sketch, index: int, offsets: np.ndarray, threshold: Optional[float],
                   max_hashes: int, *pieces):
    """Verifies the pairs whose second document is here: against this partition's own sketch
    when the first is here too, else against the one sent with the pairs. Pairs sent with
    top-byte counts instead are rejected when those rule them out; the rest are asked back
    ("ask", by the first document's partition) for _verify_again."""
    t = _concat([p["pairs"] for p in pieces])
    if threshold is None:
        return {"edges": _edges(t["a"], t["b"]), "rejected": 0, "ask": None}
    a, b = t["a"], t["b"]
    local = _owner(a, offsets) == index
    own = (sketch["sh_off"], sketch["sh"])
    ok = np.empty(len(a), dtype=bool)
    j = _cpp.dask_jaccards(*own, _sketch_rows(sketch, a[local]), *own,
                            _sketch_rows(sketch, b[local]), threshold, max_hashes)
    ok[local] = j >= threshold
    asked = np.zeros(len(a), dtype=bool)
    ask = None
    if pieces and "tops" in pieces[0]:
        sent = _concat([p["tops"] for p in pieces])  # ascending ordinals: sources in order
        rows = np.searchsorted(sent["gid"], a[~local]).astype(np.uint64)
        ruled = _cpp.dask_shared_rejects(sent["top"], sent["n"], rows, *own,
                                         _sketch_rows(sketch, b[~local]).astype(np.uint64),
                                         threshold)
        ok[~local] = False
        asked[np.flatnonzero(~local)[~ruled]] = True
        ask = _split({"a": a[asked], "b": b[asked]}, _owner(a[asked], offsets), len(offsets) - 1)
    else:
        sent = _concat([p["sketches"] for p in pieces])  # ascending ordinals: sources in order
        rows = np.searchsorted(sent["gid"], a[~local])
        j = _cpp.dask_jaccards(sent["sh_off"], sent["sh"], rows, *own,
                                _sketch_rows(sketch, b[~local]), threshold, max_hashes)
        ok[~local] = j >= threshold
    rejected = int((~ok & ~asked).sum())
    across = int((~local).sum()) if ask is not None else 0
    summarised = {"pairs": across, "ruled_out": across - int(asked.sum()),
                  "sent_again": int(asked.sum())}
    return {"edges": _edges(a[ok], b[ok]), "rejected": rejected, "ask": ask,
            "summarised": summarised}


def _members_split(sig, sketch, offset: int, parts: int, everyone: bool, *pieces):
    """This partition's documents of non-trivial components, by component; with `everyone`
    (runs against earlier indexes) every document, each outside a component its own."""
    t = _concat(pieces)
    if everyone:
        node = np.arange(offset, offset + len(sig["fingerprint"]), dtype=np.uint64)
        label = node.copy()
        rows = (t["node"] - np.uint64(offset)).astype(np.int64)
        label[rows] = t["label"]
        t = {"node": node, "label": label}
    t = _take(t, np.argsort(t["node"]))  # by ordinal, so that _cluster need not sort the arrays
    rows = (t["node"] - np.uint64(offset)).astype(np.int64)
    m = {"gid": t["node"], "comp": t["label"], "id": sig["ids"][rows]}
    for c in ("fingerprint", "has_fingerprint", "url_key", "title_key", "content_key", "length",
              "time", "field"):
        m[c] = sig[c][rows]
    n = len(sig["fingerprint"])
    bands = len(sig["band_keys"]) // n if n else 0
    m["band_keys"] = sig["band_keys"].reshape(n, bands)[rows]
    m["sh_off"], m["sh"] = _ragged_take(sketch["sh_off"], sketch["sh"],
                                        _sketch_rows(sketch, t["node"]))
    return _split(m, _hash_dest(m["comp"], parts), parts)


def _cluster(options: Dict[str, Any], offsets: np.ndarray, against: Sequence[str],
             against_only: bool, *pieces):
    """The batch engine (or in stream mode the stream engine) over whole components, in global
    order: the CLI's decisions. `against`: the earlier runs' indexes (absolute paths), which the
    engine matches every document against."""
    t = _concat(pieces)  # pieces in partition order, each by ordinal: in global order
    gid = t["gid"]
    if np.any(gid[1:] <= gid[:-1]):  # the engine takes documents in input order
        raise RuntimeError("simdup.dask: component members out of input order")
    n = len(gid)
    columns = {c: t[c] for c in ("fingerprint", "has_fingerprint", "url_key", "title_key",
                                 "content_key", "length", "time", "field")}
    columns["shingle_offsets"] = t["sh_off"]
    columns["shingles"] = t["sh"]
    columns["band_keys"] = np.ascontiguousarray(t["band_keys"]).reshape(-1)
    stream = options.get("mode") == "stream"
    if stream:
        d = _cpp.dask_stream(columns, options)
    else:
        d = _cpp.dask_cluster(columns, options, list(against), against_only)
    rep = d["representative"].astype(np.int64)
    earlier = d["against"] if against else np.zeros(n, dtype=np.uint8)
    dropped = earlier != 0
    rep[dropped] = np.flatnonzero(dropped)  # its cluster is the earlier run's, not one here
    dup = (rep != np.arange(n)) | dropped
    rep_id = t["id"][rep]
    if against:
        rep_id[dropped] = np.array(d["against_ids"], dtype=object)[dropped]
    out = {"gid": gid[dup], "rep": gid[rep][dup], "rep_id": rep_id[dup],
           "layer": d["layer"][dup], "distance": d["distance"][dup], "jaccard": d["jaccard"][dup],
           "against": earlier[dup]}
    sizes = np.bincount(rep, minlength=n)
    dist = d["distance"][dup].astype(np.int64)
    stats = {"cluster_sizes": dict(zip(*np.unique(sizes[sizes > 1], return_counts=True))),
             "clusters_with_duplicates": int((sizes > 1).sum()),
             "layers": np.bincount(d["layer"][dup], minlength=len(_LAYERS)),
             "distances": np.bincount(np.where(dist < 0, 65, dist), minlength=66),
             "top": _top_clusters(gid, rep, sizes, d, stream)}
    if stream:
        stats["pairs"] = (int(d["candidates"]), int(d["rejected"]))
    if against:
        stats["against_pairs"] = (int(d["against_candidates"]), int(d["against_rejected"]))
        hits: Dict[Tuple[int, int], List[Any]] = {}
        for i in np.flatnonzero(dropped):
            hit = hits.setdefault((int(earlier[i]), int(d["against_documents"][i])),
                                  [0, d["against_ids"][i]])
            hit[0] += 1
        stats["against_hits"] = hits
    stats["engine_bytes"], stats["spilled_bytes"] = int(d["engine_bytes"]), int(d["spilled_bytes"])
    return {"decisions": _split(out, _owner(out["gid"], offsets), len(offsets) - 1),
            "stats": stats}


# The report's sample clusters, as `simdup dedup` picks them by default (--report-clusters 10,
# three members each): the largest (ties: the earlier representative), members in input order,
# in batch mode the first 64 of them sorted near duplicates first, farthest first.
_REPORT_CLUSTERS = 10
_REPORT_MEMBERS = 3


def _top_clusters(gid, rep, sizes, d, stream: bool) -> List[Tuple]:
    """This task's largest clusters (whole components, so whole clusters) as (size,
    representative gid, [(member gid, layer, distance, jaccard)])."""
    reps = np.flatnonzero(sizes > 1)
    reps = reps[np.lexsort((gid[reps], -sizes[reps]))][:_REPORT_CLUSTERS]
    out = []
    for r in reps:
        m = np.flatnonzero(rep == r)
        m = m[m != r]
        if not stream:
            m = m[:64]
            near = d["layer"][m] == _LAYERS.index("near")
            m = m[np.lexsort((-d["distance"][m].astype(np.int64), ~near))]
        m = m[:_REPORT_MEMBERS]
        out.append((int(sizes[r]), int(gid[r]),
                    [(int(gid[i]), int(d["layer"][i]), int(d["distance"][i]),
                      float(d["jaccard"][i])) for i in m]))
    return out


def _sample_texts(spec, options, records, rows: np.ndarray) -> List[Tuple]:
    return _cpp.dask_sample_texts(*_partition(spec, options, records), rows)


def _report_samples(run, specs, opts, offsets: np.ndarray, cstats) -> List[Tuple]:
    """The report's sample clusters across all tasks, with their texts read again from the
    partitions that hold them (the run keeps no texts)."""
    tops = sorted((c for s in cstats for c in s["top"]), key=lambda c: (-c[0], c[1]))
    tops = tops[:_REPORT_CLUSTERS]
    gids = np.unique(np.array([g for c in tops for g in [c[1]] + [m[0] for m in c[2]]],
                              dtype=np.uint64))
    owner = _owner(gids, offsets)
    parts = np.unique(owner)
    futures = [run.submit("texts", _sample_texts, *_task_spec(specs[part])[:1], opts,
                          _task_spec(specs[part])[1], gids[owner == part] - offsets[part])
               for part in parts]
    texts: Dict[int, Tuple] = {}
    for part, got in zip(parts, run.client.gather(futures)):
        texts.update(zip(gids[owner == part].tolist(), got))
    return [(rep, size, texts[rep], [texts[g] + (layer, distance, jaccard)
                                     for g, layer, distance, jaccard in members])
            for size, rep, members in tops]


def _frame(sig, offset: int, against: Optional[Sequence[str]], *pieces):
    import pandas as pd
    n = len(sig["fingerprint"])
    t = _concat(pieces)
    rows = (t["gid"] - np.uint64(offset)).astype(np.int64)
    cluster = np.arange(n, dtype=np.int64) + offset
    cluster[rows] = t["rep"].astype(np.int64)
    keep = np.ones(n, dtype=bool)
    keep[rows] = False
    dup_of = np.full(n, None, dtype=object)
    dup_of[rows] = t["rep_id"]
    layer = np.zeros(n, dtype=np.int8)
    layer[rows] = t["layer"]
    distance = np.full(n, -1, dtype=np.int64)
    distance[rows] = t["distance"]
    jaccard = np.full(n, np.nan)
    jaccard[rows] = t["jaccard"]
    dist = pd.array(distance, dtype="Int64")
    dist[distance < 0] = pd.NA
    columns = {}
    if against is not None:  # the index a document was dropped for, as simdup.dedup's column
        earlier = np.full(n, None, dtype=object)
        codes = t.get("against", np.zeros(len(rows), np.uint8))
        earlier[rows[codes != 0]] = [against[c - 1] for c in codes[codes != 0]]
        columns["against"] = earlier
    return pd.DataFrame({
        "id": sig["ids"],
        "keep": keep,
        "cluster": cluster,
        "duplicate_of": dup_of,
        "distance": dist,
        "layer": pd.Categorical.from_codes(layer, categories=list(_LAYERS)),
        "jaccard": jaccard,
        **columns,
    }, index=pd.RangeIndex(offset, offset + n))


# ---------------------------------------------------------------------------------------------
# The driver: submits the tasks stage by stage, gathering only small things (counts, flags).

class _Run:
    def __init__(self, client, parts: int):
        self.client = client
        self.parts = parts
        self.token = uuid.uuid4().hex[:12]
        self.timings: List[Tuple[str, float]] = []
        self.near_tables = 0
        # Pairs across partitions sent with top-byte counts, ruled out by them, sent again.
        self.summarised = {"pairs": 0, "ruled_out": 0, "sent_again": 0}
        self.sizes: Dict[str, List[Any]] = {}  # shuffle name -> futures of bytes moved

    def submit(self, name, fn, *args):
        return self.client.submit(fn, *args, key=f"simdup-{name}-{self.token}-{uuid.uuid4().hex}")

    def pieces(self, name, splits, count):
        """Slice j of every split, for j < count."""
        return [[self.submit(f"{name}-piece", operator.getitem, s, j) for s in splits]
                for j in range(count)]

    def shuffle(self, name, maps, split, count, reduce, extra=lambda j: ()):
        splits = [self.submit(f"{name}-split", split, m) for m in maps]
        kind = name.split("-")[0]
        self.sizes.setdefault(kind, []).extend(self.submit("size", _nbytes, s) for s in splits)
        return [self.submit(f"{name}-reduce", reduce, *extra(j), *p)
                for j, p in enumerate(self.pieces(name, splits, count))]

    def get(self, futures, item):
        return [self.submit("get", operator.getitem, f, item) for f in futures]

    def components(self, name, edges):
        """Connected components by alternating large-star and small-star until every component
        is a star around its smallest node; labels partitioned by node."""
        rounds = 0
        split = functools.partial(_both_ways_split, parts=self.parts)
        while True:
            large = self.shuffle(f"{name}-large", edges, split, self.parts, _large_star)
            rounds += 1
            if all(self.client.gather(self.get(large, "ok"))):
                return self.get(large, "labels"), rounds
            edges = self.shuffle(f"{name}-small", self.get(large, "edges"), split, self.parts,
                                 _small_star)

    def stage(self, name, start):
        self.timings.append((name, _time.perf_counter() - start))
        return _time.perf_counter()


def _layers(options) -> List[str]:
    layers = options.get("layers", "url,exact,near")
    if isinstance(layers, str):
        layers = [layers]
    return [x for entry in layers for x in entry.split(",")]


def _sources(source, options, client, partition_bytes: int, pack_files: bool) -> List[Tuple]:
    if isinstance(source, (str, os.PathLike)):
        source = [source]
    if isinstance(source, (list, tuple)) and all(isinstance(s, (str, os.PathLike)) for s in source):
        skip = options.get("on_error", "fail") == "skip"
        paths = _core.expand_inputs([os.fspath(s) for s in source], skip)
        # Split where the files are (a task per file): large JSONL/TSV files become several
        # partitions, Parquet files runs of row groups, in file order, so (partition, row) is
        # still the CLI's input order.
        plans = client.gather([client.submit(_split_file, p, options, partition_bytes, pure=False)
                               for p in paths])
        if pack_files and partition_bytes > 0:
            return _packed(plans, partition_bytes)
        return [spec for plan, _ in plans for spec in plan]
    to_delayed = getattr(source, "to_delayed", None)
    if callable(to_delayed):  # a Dask bag of records or a Dask DataFrame
        parts = client.compute(to_delayed())
        return [("records", part, f"partition{i}") for i, part in enumerate(parts)]
    raise TypeError("simdup.dask.dedup: source must be paths/globs, a Dask bag of records or a "
                    "Dask DataFrame")


def _check_options(options: Dict[str, Any], *, scheduler: Optional[str] = None,
                   partitions: Optional[int] = None, near_prefix_blocks: int = 1,
                   partition_bytes: int = 0, pack_files: bool = True) -> None:
    """Raises ValueError (TypeError for a wrong type or an unknown name) for options a run
    would refuse, before any cluster starts: those of the C++ core by the library's own rules
    (its messages name parameters: "k must be in 0..32, got 40"), this module's here."""
    options = dict(options)
    against = _against_paths(options.pop("against", None))
    against_only = bool(options.pop("against_only", False))
    k = _described(options, [], "")["parameters"]["k"]
    if against or against_only:  # opened and checked against the run's profile
        _cpp.dask_against_sizes(options, against, against_only)
    for name, value, least in (("partitions", partitions, 1),
                               ("near_prefix_blocks", near_prefix_blocks, 1),
                               ("partition_bytes", partition_bytes, 0)):
        if value is None and name == "partitions":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if value < least:
            raise ParameterError.of(name, f"must be at least {least}, got {value}",
                                    value=str(value), allowed=f"{least}..")
    if k + near_prefix_blocks > 64:
        raise ParameterError.of("near_prefix_blocks",
                                f"must be at most 64 - k = {64 - k}, got {near_prefix_blocks}",
                                value=str(near_prefix_blocks), allowed=f"1..{64 - k}")
    if not isinstance(pack_files, bool):
        raise TypeError(f"pack_files must be a bool, not {type(pack_files).__name__}")
    if scheduler is not None:
        _local_workers(scheduler)


def _described(options: Dict[str, Any], inputs: List[str], output_format: str) -> Dict[str, Any]:
    """summary.json's "version" and "parameters" for these options, as `simdup dedup` writes
    them (the library's describe_parameters and summary writer)."""
    described = json.loads(_core.dedup_parameters(options, inputs, output_format))
    return {"version": described["version"], "parameters": described["parameters"]}


def _local_workers(scheduler: str) -> Optional[int]:
    """N of "local:N" (None for a scheduler's address); ValueError unless N >= 1."""
    if not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be a str, not {type(scheduler).__name__}")
    if not scheduler.startswith("local:"):
        return None
    count = scheduler.split(":", 1)[1]
    if not count.isdigit() or int(count) < 1:
        raise ParameterError.of("scheduler",
                                f"local:N needs N >= 1 worker processes, got {scheduler!r}",
                                value=scheduler, allowed="local:N with N >= 1, or an address")
    return int(count)


def _client_for(scheduler: Optional[str]):
    from distributed import Client, LocalCluster, default_client
    if scheduler is None:
        try:
            return default_client(), None
        except ValueError:
            scheduler = "local:2"
    workers = _local_workers(scheduler)
    if workers is not None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, host="127.0.0.1")
        return Client(cluster), cluster
    return Client(scheduler), None


def _exact_followers(run, sigs, exact, exact_edges, offsets, keep: str, parts: int):
    """Batch mode: the exact groups (components of the exact links) and, per signature
    partition, the members that are not their group's best (followers) and the twins."""
    M = len(sigs)
    exact_labels, exact_rounds = run.components("exact-cc", exact_edges)
    label_splits = [run.submit("label-route", _label_route, lab, offsets) for lab in exact_labels]
    by_sig = run.pieces("labels", label_splits, M)
    if keep == "first":
        followers = [run.submit("followers", _first_followers, *by_sig[i]) for i in range(M)]
    else:
        ranked = [run.submit("rank", _attach_rank, sigs[i], int(offsets[i]), keep, parts,
                             *by_sig[i]) for i in range(M)]
        grouped = run.shuffle("leaders", ranked, lambda x: x, parts,
                              functools.partial(_followers, offsets))
        followers = [run.submit("cat", _concat_args, *p) for p in run.pieces("fl", grouped, M)]
    twins = [run.submit("cat", _concat_args, *p)
             for p in run.pieces("twins", run.get(exact, "twins"), M)]
    return followers, twins, exact_rounds


def _verified(run, sketches, routed, offsets, threshold, max_hashes):
    """Batch mode: each candidate pair (SimHash's and MinHash's, routed to their first
    documents' partitions) verified where both sketches meet; the verified pairs as edges and
    the (candidate, MinHash, rejected) counts. With exact Jaccard, pairs across partitions
    first travel with the top-byte counts of their first documents; only those these do not
    rule out travel again with the shingle arrays."""
    client, M = run.client, len(sketches)
    summaries = threshold is not None and max_hashes == 0
    routed_pieces = [run.pieces("pairs", group, M) for group in routed]
    first = [run.submit("verify-a", _verify_first, sketches[i], i, offsets, summaries,
                        *[p for group in routed_pieces for p in group[i]])
             for i in range(M)]
    del routed_pieces
    candidates = minhash_candidates = ruled = 0
    for c in client.gather(run.get(first, "counts")):
        candidates += c["simhash"] + c["minhash"]
        minhash_candidates += c["minhash"]
        ruled += c["ruled"]
    second = _verify_at_second(run, sketches, run.get(first, "pairs"), offsets, threshold,
                               max_hashes)
    del first
    rounds = [second]
    if summaries:
        asked = run.pieces("ask", run.get(second, "ask"), M)
        again = [run.submit("verify-c", _verify_again, sketches[i], i, offsets, *asked[i])
                 for i in range(M)]
        rounds.append(_verify_at_second(run, sketches, again, offsets, threshold, max_hashes))
        for c in client.gather(run.get(second, "summarised")):
            for key, n in c.items():
                run.summarised[key] += n
    rejected = ruled + sum(client.gather([r for sec in rounds for r in run.get(sec, "rejected")]))
    return [e for sec in rounds for e in run.get(sec, "edges")], (candidates, minhash_candidates,
                                                                  rejected)


def _verify_at_second(run, sketches, verify_in, offsets, threshold, max_hashes):
    """_verify_second on each partition, over the pair lists `verify_in` sends it."""
    run.sizes.setdefault("verify", []).extend(run.submit("size", _nbytes, p) for p in verify_in)
    return [run.submit("verify-b", _verify_second, sketches[i], i, offsets, threshold,
                       max_hashes, *p)
            for i, p in enumerate(run.pieces("verify", verify_in, len(sketches)))]


def dedup(source: Any, *, client: Any = None, scheduler: Optional[str] = None,
          partitions: Optional[int] = None, near_prefix_blocks: int = 1,
          partition_bytes: int = 256 << 20, pack_files: bool = True,
          out: Optional[str] = None, force: bool = False, zstd: bool = False,
          annotate: bool = False, **options: Any):
    """Deduplicates on a Dask cluster; the same decisions as ``simdup dedup`` (batch or
    stream mode).

    ``source``: paths/globs, in the given order: a JSONL or TSV file larger than
    ``partition_bytes`` becomes several partitions, cut at line starts, and with ``pack_files``
    consecutive smaller files of one kind share partitions of up to ``partition_bytes`` (0: a
    partition per file); or a Dask bag of record dicts, or a Dask DataFrame of records.
    ``client``: a ``distributed.Client``; else ``scheduler`` ("tcp://HOST:8786" or "local:N"),
    else the default client, else a local cluster of 2 worker processes (which then stays open
    with the returned frame). ``partitions``: reduce partitions of the shuffles (default: one per
    500,000 documents, at least twice the workers). ``near_prefix_blocks``: r, the blocks a
    near-layer table's key holds (k + r blocks, C(k + r, r) tables). Other options: those of
    :func:`simdup.dedup`, ``against`` and ``against_only`` included (the indexes on storage
    the workers share; the frame then has simdup.dedup's ``against`` column, and ``out`` gets
    against_hits.jsonl).

    ``out``: also write the CLI's output directory there (kept records as one shard per input
    partition, ``kept-NNNNN.<format>``, duplicates.jsonl in input order, summary.json,
    report.html); it must be
    visible to the workers under the same path (shared storage). ``force``: replace a non-empty
    one. ``zstd``: kept shards zstd-compressed (``kept-NNNNN.<format>.zst``, as ``--zstd``).
    ``annotate``: also every record with its decision, one shard per input partition
    (``annotated-NNNNN.<format>[.zst]``, as ``--annotate``: JSONL records get a ``simdup`` object,
    CSV and TSV six ``simdup_*`` columns).

    Returns ``(frame, summary)``: a Dask DataFrame with one row per record in input order (``id``,
    ``keep``, ``cluster``, ``duplicate_of``, ``distance``, ``layer``, ``jaccard``, as
    simdup.dedup's), backed by results held on the cluster, and the summary dict. Its index is
    each record's global ordinal (0, 1, ... over the records read, in input order), the terms
    of ``cluster``, so ``frame.loc[cluster]`` is the representative; unlike simdup.dedup it is
    not a DataFrame source's own labels: match rows to the source by ``id`` (positions differ
    where records were skipped with ``on_error="skip"``).
    """
    import dask.dataframe as dd

    opts = dict(options)
    against = _against_paths(opts.pop("against", None))
    against_only = bool(opts.pop("against_only", False))
    if opts.get("verify") in (None, False) and "verify" in opts:
        opts["verify"] = "off"
    stream = opts.get("mode", "batch") == "stream"
    opts.setdefault("threads", 1)
    _check_options(opts, scheduler=scheduler if client is None else None, partitions=partitions,
                   near_prefix_blocks=near_prefix_blocks, partition_bytes=partition_bytes,
                   pack_files=pack_files)
    # The indexes are checked here, before any task: their errors are simdup.dedup's. Workers
    # open them by absolute path (shared storage); outputs name them as given, as the CLI does.
    against_sizes = _cpp.dask_against_sizes(opts, against, against_only)
    against_paths = [os.path.abspath(a) for a in against]
    if out is not None:
        _check_out(out, force)
    if client is None:
        client, _ = _client_for(scheduler)
    started, start_rss = _time.perf_counter(), _resident_bytes()
    specs = _sources(source, opts, client, partition_bytes, pack_files)
    if not specs:
        raise ValueError("simdup.dask.dedup: no inputs")
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    run = _Run(client, 0)  # its reduce partitions once the documents are counted
    k = int(opts.get("k", 8))
    keep = str(opts.get("keep", "first"))
    verify = str(opts.get("verify", "jaccard:0.8"))
    threshold = None if verify == "off" else float(verify.split(":", 1)[1])
    max_hashes = int(opts.get("verify_max_hashes", 0))

    t = _time.perf_counter()
    sigs = [run.submit("sign", _sign, *_task_spec(spec)[:1], opts, _task_spec(spec)[1])
            for spec in specs]
    counts = client.gather([run.submit("count", _count, s) for s in sigs])
    offsets = np.zeros(len(sigs) + 1, dtype=np.uint64)
    np.cumsum(counts, out=offsets[1:])
    # Every shuffle makes a task per (map, reduce) pair, and each task costs the scheduler and
    # the workers about a millisecond: reduce partitions as few as their memory allows.
    parts = run.parts = partitions or max(2 * workers,
                                          -(-int(offsets[-1]) // _DOCUMENTS_PER_REDUCE))
    stats = client.gather([run.submit("stats", _stats, s) for s in sigs])
    M = len(sigs)
    t = run.stage("sign", t)
    if annotate and out is not None:
        # As the CLI, before any work: these formats cannot carry the decision fields.
        bare = sorted({s["format"] for s in stats} & {"text", "warc"})
        if bare:
            raise ValueError(f"--annotate writes JSONL, CSV and TSV records; the input has "
                             f"{' and '.join(bare)} records")

    exact = run.shuffle("exact", [run.submit("exact-in", _exact_split, s, int(offsets[i]), parts)
                                  for i, s in enumerate(sigs)],
                        lambda x: x, parts, functools.partial(_exact_reduce, offsets))
    exact_edges = run.get(exact, "edges")
    exact_rounds = 0
    if stream:
        later = [run.submit("later", _later_route, offsets, e) for e in exact]
        followers = [run.submit("cat", _concat_args, *p) for p in run.pieces("later", later, M)]
        twins = followers  # no MinHash in stream mode
    elif against_only:  # no near layer within the input: its followers are not needed
        followers = twins = None
    else:
        followers, twins, exact_rounds = _exact_followers(run, sigs, exact, exact_edges, offsets,
                                                          keep, parts)
    t = run.stage("exact layers", t)

    near_edges: List[Any] = []
    routed: List[Any] = []  # candidate pairs (SimHash, MinHash), by their first document
    candidates = minhash_candidates = rejected = 0
    # Decontamination compares with the indexes only (the cluster tasks' engines do).
    if "near" in _layers(opts) and not against_only:
        masks = _block_masks(k, near_prefix_blocks)
        run.near_tables = len(masks)
        near_in = [run.submit("near-in", _near_split, sigs[i], int(offsets[i]), keep, masks,
                              parts, followers[i], twins[i]) for i in range(M)]
        # Shingle counts rule pairs out as jaccard_at_least does (not the bottom-k estimate).
        size_threshold = None if stream or max_hashes else threshold
        routed.append(run.shuffle("simhash", run.get(near_in, 0), lambda x: x, parts,
                                  functools.partial(_simhash_reduce, masks, k, offsets,
                                                    size_threshold)))
        if not stream and any(client.gather([run.submit("has-mh", _has_band_keys, s)
                                             for s in sigs])):
            routed.append(run.shuffle("minhash", run.get(near_in, 1), lambda x: x, parts,
                                      functools.partial(_minhash_reduce, k,
                                                        int(_core.MINHASH_MAX_BUCKET), offsets)))
        del near_in  # its results are freed once consumed
    # Results stay on the cluster while a future names them: each is dropped once its last
    # consumer is submitted (the shingle arrays of half a corpus would otherwise stay to the end).
    del followers, twins
    # Shingle arrays, signed anew, of the documents in candidate pairs or exact groups only: the
    # sign results hold none, verification and the clusters need no others.
    # Against earlier indexes, every document's: each is matched against them.
    if against:
        need_pieces = [[run.submit("all", _all_gids, int(offsets[i]), int(offsets[i + 1]))]
                       for i in range(M)]
    else:
        need = [run.submit("need", _endpoints_route, offsets, e)
                for e in exact_edges + [r for group in routed for r in group]]
        need_pieces = run.pieces("need", need, M)
        del need
    sketches = [run.submit("sketch", _sketch, *_task_spec(spec)[:1], opts, _task_spec(spec)[1],
                           int(offsets[i]), *p)
                for i, (spec, p) in enumerate(zip(specs, need_pieces))]
    del need_pieces
    if stream:  # unverified: the stream engine verifies, and counts, as the CLI does
        near_edges = [run.submit("edges", _pairs_as_edges, r) for group in routed for r in group]
    elif routed:
        near_edges, counts = _verified(run, sketches, routed, offsets, threshold, max_hashes)
        candidates, minhash_candidates, rejected = counts
    del routed
    if "near" in _layers(opts) and not against_only:
        t = run.stage("near pairs, verification", t)

    labels, rounds = run.components("cc", exact_edges + near_edges)
    del exact, exact_edges, near_edges
    t = run.stage("connected components", t)
    members = [run.submit("members", _members_split, sigs[i], sketches[i], int(offsets[i]),
                          parts, bool(against), *p)
               for i, p in enumerate(run.pieces("lab2", [run.submit("lr", _label_route, lab,
                                                                    offsets)
                                                         for lab in labels], M))]
    del sketches, labels
    member_pieces = run.pieces("members", members, parts)
    clustered = [run.submit("cluster", _cluster, opts, offsets, against_paths, against_only,
                            *member_pieces[j])
                 for j in range(parts)]
    del members, member_pieces
    cstats = client.gather(run.get(clustered, "stats"))
    if stream:
        candidates = sum(c["pairs"][0] for c in cstats)
        rejected = sum(c["pairs"][1] for c in cstats)
    against_candidates = sum(c["against_pairs"][0] for c in cstats) if against else 0
    candidates += against_candidates
    rejected += sum(c["against_pairs"][1] for c in cstats) if against else 0
    decision_pieces = run.pieces("decisions", run.get(clustered, "decisions"), M)
    names = against or None
    frames = [run.submit("frame", _frame, sigs[i], int(offsets[i]), names, *decision_pieces[i])
              for i in range(M)]
    del clustered, decision_pieces
    run.stage("clusters and decisions", t)

    hits = _against_hits(cstats, against)
    summary = _summary(opts, _given_inputs(source, specs), specs, stats, int(offsets[-1]),
                       cstats, (candidates, minhash_candidates, rejected, against_candidates),
                       _against_summary(against, against_sizes, against_only, hits), run,
                       exact_rounds, rounds, started, start_rss)
    meta = _frame({"fingerprint": np.zeros(0, np.uint64), "ids": np.empty(0, dtype=object)}, 0,
                  names,
                  {"gid": np.zeros(0, np.uint64), "rep": np.zeros(0, np.uint64),
                   "rep_id": np.empty(0, dtype=object), "layer": np.zeros(0, np.uint8),
                   "distance": np.zeros(0, np.int8), "jaccard": np.zeros(0, np.float32)})
    frame = dd.from_delayed(frames, meta=meta, verify_meta=False)
    if out is not None:
        samples = _report_samples(run, specs, opts, offsets, cstats)
        _write_output(run, specs, frames, opts, summary, samples, out, force, zstd, annotate,
                      hits if against else None)
    return frame, summary


def _all_gids(start: int, end: int):
    return {"gid": np.arange(start, end, dtype=np.uint64)}


def _against_hits(cstats, against: Sequence[str]) -> List[Tuple[str, Any, int]]:
    """Each index document that documents were dropped for, as (index, id, hits), most hit
    first, then by index and position in it (the CLI's against_hits.jsonl)."""
    merged: Dict[Tuple[int, int], List[Any]] = {}
    for c in cstats:
        for key, (count, rid) in c.get("against_hits", {}).items():
            merged.setdefault(key, [0, rid])[0] += count
    order = sorted(merged.items(), key=lambda item: (-item[1][0], item[0]))
    return [(against[x - 1], rid, count) for (x, _), (count, rid) in order]


def _against_summary(against, sizes, only: bool, hits) -> Dict[str, Any]:
    indexes = [{"index": name, "documents": int(size), "dropped": 0, "documents_hit": 0}
               for name, size in zip(against, sizes)]
    position = {name: i for i, name in enumerate(against)}
    for name, _, count in hits:
        indexes[position[name]]["dropped"] += count
        indexes[position[name]]["documents_hit"] += 1
    return {"only": only, "dropped": sum(i["dropped"] for i in indexes), "indexes": indexes}


def _has_band_keys(sig) -> bool:
    return len(sig["band_keys"]) > 0


def _nbytes(pieces) -> int:
    """Bytes of the numpy columns of a list of tables (tables may nest tables)."""
    def size(v):
        if isinstance(v, dict):
            return sum(size(x) for x in v.values())
        return v.nbytes if v.dtype != object else 0
    return sum(size(t) for t in pieces)


def _concat_args(*pieces):
    return _concat(pieces)


def _input_names(specs) -> List[str]:
    """Each input once (a file split into ranges counts once, as for the CLI)."""
    names: List[str] = []
    for spec in specs:
        if spec[0] == "files":
            names.extend(spec[1])
        elif spec[0] != "range" or spec[2][0] == 0:
            names.append(spec[1][0] if spec[0] == "range" else spec[-1])
    return names


def _given_inputs(source, specs) -> List[str]:
    """The inputs as given (paths and globs, unexpanded, as the CLI's summary names them), or
    the partitions of a bag or DataFrame."""
    if isinstance(source, (str, os.PathLike)):
        return [os.fspath(source)]
    if isinstance(source, (list, tuple)):
        return [os.fspath(s) for s in source]
    return _input_names(specs)


def _summary(opts, inputs, specs, stats, n, cstats, pairs, against, run, exact_rounds, rounds,
             started, start_rss) -> Dict[str, Any]:
    """summary.json's content, as the CLI's. `pairs`: (candidates, MinHash candidates, rejected,
    against candidates); `against`: summary.json's "against"."""
    candidates, minhash_candidates, rejected, against_candidates = pairs
    skipped = sum(s["skipped"] for s in stats)
    reasons: Dict[str, int] = {}
    for s in stats:
        for r, c in s["skipped_reasons"].items():
            reasons[r] = reasons.get(r, 0) + c
    by_layer = {name: 0 for name in _LAYERS[1:]}
    sizes: Dict[int, int] = {}
    distances = np.zeros(66, dtype=np.int64)
    with_dups = 0
    for c in cstats:
        for size, count in c["cluster_sizes"].items():
            sizes[int(size)] = sizes.get(int(size), 0) + int(count)
        with_dups += c["clusters_with_duplicates"]
        distances += c["distances"]
        for code, count in enumerate(c["layers"][1:], start=1):
            by_layer[_LAYERS[code]] += int(count)
    # Documents dropped against earlier indexes are in no cluster of this run.
    duplicates = sum(size * count - count for size, count in sizes.items()) + against["dropped"]
    histogram = {str(d): int(c) for d, c in enumerate(distances[:65]) if c}
    if distances[65]:
        histogram["unknown"] = int(distances[65])
    kept = n - duplicates
    if kept > with_dups:
        sizes[1] = kept - with_dups
    output_format = next((s["format"] for s in stats if s["format"]), "")
    return {
        **_described(opts, inputs, output_format),
        "documents": {"read": n + skipped, "kept": kept, "duplicates": duplicates,
                      "skipped": skipped, "short": sum(s["short"] for s in stats),
                      "invalid_utf8": sum(s["invalid_utf8"] for s in stats)},
        "inputs": {"count": len(_input_names(specs)),
                   "skipped": sum(s["skipped_inputs"] for s in stats)},
        "duplicates_by_layer": by_layer,
        "skipped_reasons": reasons,
        "messages": [m for s in stats for m in s["messages"]][:20],
        "pairs": {"candidates": candidates, "rejected_by_verify": rejected,
                  "minhash_candidates": minhash_candidates,
                  "against_candidates": against_candidates},
        "against": against,
        "index": None,  # the Dask form writes no index
        # As the CLI's: the largest cluster with duplicates, 0 when there is none.
        "clusters": {"with_duplicates": with_dups,
                     "largest": max((s for s in sizes if s >= 2), default=0),
                     "by_size": {str(size): sizes[size] for size in sorted(sizes)}},
        "distance_histogram": histogram,
        "bytes": sum(s["bytes"] for s in stats),
        "output_format": output_format,
        "distributed": {"partitions": len(specs), "shuffle_partitions": run.parts,
                        "shuffle_bytes": {name: int(sum(run.client.gather(futures)))
                                          for name, futures in run.sizes.items()},
                        "near_tables": run.near_tables,
                        "verified_by_top_byte_counts": run.summarised,
                        "components_rounds": {"exact": exact_rounds, "all": rounds}},
        "timings": {name: round(sec, 3) for name, sec in run.timings},
        "seconds_total": round(_time.perf_counter() - started, 3),
        "memory": _memory(run.client, cstats, n + skipped, start_rss),
        # The CLI's resume journal: a Dask job keeps none (its tasks are retried by Dask).
        "resume": {"journal_bytes": 0, "replayed_documents": 0, "replayed_decisions": False},
    }


def _memory(client, cstats, read: int, start_rss: int) -> Dict[str, Any]:
    """summary.json's "memory", as the CLI's: the engines are those of the cluster tasks
    (engine_bytes summed over them, and the largest), peak_rss_bytes and start_rss_bytes (when
    the job began) this driver process's; and each worker process's peak RSS (over its life: a long-running cluster's workers may
    have peaked in an earlier job)."""
    engines = [c["engine_bytes"] for c in cstats]
    total = int(sum(engines))
    return {"engine_bytes": total,
            "engine_bytes_per_document": total / read if read else 0.0,
            "engine_bytes_largest_task": int(max(engines, default=0)),
            **_peak_rss(client),
            "start_rss_bytes": start_rss,
            "verify_spill_bytes": int(sum(c["spilled_bytes"] for c in cstats)),
            # The CLI's --memory-limit fields: no limit of the job's own (Dask's workers have
            # theirs), nothing spilled but verification's arrays, no phases of one process.
            "limit_bytes": 0,
            "spilled_bytes": int(sum(c["spilled_bytes"] for c in cstats)),
            "peak_rss_bytes_by_phase": {}}


def _resident_bytes() -> int:
    """This process's resident set now (the second field of /proc/self/statm, in pages)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss_bytes() -> int:
    """This process's peak resident set (Linux reports ru_maxrss in KiB)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _peak_rss(client) -> Dict[str, Any]:
    """The driver's and every worker's peak RSS, as summary.json's memory names them."""
    try:
        workers = client.run(_peak_rss_bytes)
    except (OSError, TimeoutError):  # a worker gone since its last task: no figure, no failure
        workers = {}
    return {"peak_rss_bytes": _peak_rss_bytes(),
            "workers_peak_rss_bytes": {address: int(rss)
                                       for address, rss in sorted(workers.items())}}


def _write_part(spec, options, records, frame, directory: str, index: int, fmt: str,
                zstd: bool, annotate: bool) -> int:
    """One partition's kept records (as read; kept-NNNNN.<ext>[.zst], by the CLI's writer),
    with `annotate` every record with its decision (annotated-NNNNN.<ext>[.zst]), and duplicate
    lines, into `directory`."""
    import pandas as pd
    keep = frame["keep"].to_numpy().astype(np.uint8)
    _cpp.dask_write_kept(*_partition(spec, options, records), keep, directory,
                         f"kept-{index:05d}", zstd, fmt)
    if annotate:
        _cpp.dask_write_annotated(
            *_partition(spec, options, records), keep, frame["cluster"].to_numpy(np.int64),
            frame["duplicate_of"].tolist(),
            frame["distance"].to_numpy(dtype=np.int64, na_value=-1),
            frame["layer"].cat.codes.to_numpy().astype(np.uint8),
            frame["jaccard"].to_numpy(np.float64), directory, f"annotated-{index:05d}", zstd, fmt)
    with open(os.path.join(directory, f"duplicates-{index:05d}.jsonl"), "w",
              encoding="utf-8") as f:
        earlier = "against" in frame.columns
        for row in frame[~frame["keep"]].itertuples(index=False):
            line = {"id": row.id, "duplicate_of": row.duplicate_of}
            if earlier and row.against is not None:
                line.update({"cluster": None, "against": row.against})
            else:
                line["cluster"] = int(row.cluster)
            line.update({"distance": None if pd.isna(row.distance) else int(row.distance),
                         "layer": str(row.layer)})
            if not np.isnan(row.jaccard):
                j = round(float(row.jaccard), 4)  # the CLI's 4 decimals, "1" for 1.0
                line["jaccard"] = int(j) if j == int(j) else j
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    return int(keep.sum())


def _check_out(out: str, force: bool) -> str:
    path = os.path.abspath(out)
    if os.path.isfile(path) or (os.path.isdir(path) and os.listdir(path) and not force):
        raise FileExistsError(f"{out} is not empty (force=True, --force, replaces it)")
    return path


def _write_output(run, specs, frames, opts, summary, samples, out: str, force: bool,
                  zstd: bool, annotate: bool, hits):
    import shutil
    import tempfile
    out = _check_out(out, force)
    staging = tempfile.mkdtemp(prefix=os.path.basename(out) + ".tmp-", dir=os.path.dirname(out))
    try:
        fmt = summary["output_format"] or "jsonl"
        writes = [run.submit("write", _write_part, _task_spec(spec)[0], opts,
                             _task_spec(spec)[1], frames[i], staging, i, fmt, zstd, annotate)
                  for i, spec in enumerate(specs)]
        run.client.gather(writes)
        summary["memory"].update(_peak_rss(run.client))  # the writes included
        with open(os.path.join(staging, "duplicates.jsonl"), "wb") as dst:
            for i in range(len(specs)):
                part = os.path.join(staging, f"duplicates-{i:05d}.jsonl")
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, dst)
                os.unlink(part)
        if hits is not None:
            with open(os.path.join(staging, "against_hits.jsonl"), "w", encoding="utf-8") as f:
                for name, rid, count in hits:
                    f.write(json.dumps({"index": name, "id": rid, "hits": count},
                                       ensure_ascii=False, separators=(",", ":")) + "\n")
        with open(os.path.join(staging, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2, ensure_ascii=False, default=int)
            f.write("\n")
        with open(os.path.join(staging, "report.html"), "w", encoding="utf-8") as f:
            names = _input_names(specs)
            f.write(_core.dask_report_html(summary, opts, names, samples))
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command-line form (simdup/_dask_cli.py): `dedup` with the options of `simdup dedup`
    and the cluster's; returns the exit status."""
    from ._dask_cli import main as command_line
    return command_line(argv)


if __name__ == "__main__":
    raise SystemExit(main())
