"""distance, pairs, clusters, plan and Index against brute force and the CLI."""

import threading

import numpy as np
import pytest

import simdup
from conftest import jsonl_lines, run_cli


def popcount(x):
    return bin(int(x)).count("1")


def near_set(n=600, seed=7):
    """Random fingerprints plus near copies (1..6 flipped bits), so pairs exist at every k."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**63, size=n // 2, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, size=n // 2, dtype=np.uint64)
    copies = base.copy()
    for i in range(len(copies)):
        for bit in rng.choice(64, size=rng.integers(1, 7), replace=False):
            copies[i] ^= np.uint64(1) << np.uint64(bit)
    fps = np.concatenate([base, copies])
    rng.shuffle(fps)
    return fps


def brute_pairs(fps, k):
    out = []
    vals = [int(v) for v in fps]
    for i in range(len(vals)):
        for j in range(i + 1, len(vals)):
            d = popcount(vals[i] ^ vals[j])
            if d <= k:
                out.append((i, j, d))
    return out


def test_distance_scalars_and_arrays():
    assert simdup.distance(0, 0xFFFFFFFFFFFFFFFF) == 64
    assert simdup.distance(5, 6) == 2
    a = np.array([0, 1, 3], dtype=np.uint64)
    assert simdup.distance(a, 0).tolist() == [0, 1, 2]
    assert simdup.distance(a, a[::-1]).tolist() == [2, 0, 2]
    m = np.arange(6, dtype=np.uint64).reshape(2, 3)
    assert simdup.distance(m, np.uint64(7)).shape == (2, 3)
    with pytest.raises(ValueError):
        simdup.distance(-1, 0)
    with pytest.raises(ValueError):
        simdup.distance([-1], [0])


@pytest.mark.parametrize("k", [0, 2, 3, 5])
def test_pairs_equal_brute_force(k):
    fps = near_set()
    got = simdup.pairs(fps, k=k)
    assert got.dtype.names == ("a", "b", "distance")
    assert [tuple(int(x) for x in r) for r in got] == brute_pairs(fps, k)


def test_pairs_with_ids_and_the_cli(tmp_path):
    fps = near_set(200)
    ids = np.array([f"doc{i}" for i in range(len(fps))], dtype=object)
    got = simdup.pairs(fps, k=4, ids=ids)
    want = {(f"doc{a}", f"doc{b}", d) for a, b, d in brute_pairs(fps, 4)}
    assert {(r["a"], r["b"], int(r["distance"])) for r in got} == want
    # The CLI on the same fingerprints (hex lines) reports the same pairs.
    path = tmp_path / "fps.txt"
    path.write_text("".join(simdup.to_hex(v) + "\n" for v in fps.tolist()))
    cli = jsonl_lines(run_cli(["pairs", "-k", "4", path]).stdout)
    # One-per-line input: the CLI's ids are 1-based line numbers.
    assert {(f"doc{r['a'] - 1}", f"doc{r['b'] - 1}", r["distance"]) for r in cli} == want


def test_clusters_components_and_star():
    fps = np.array([0b0, 0b1, 0b11, 0b111, 0xFFFF0000FFFF0000], dtype=np.uint64)
    assert simdup.clusters(fps, k=1).tolist() == [0, 0, 0, 0, 4]
    assert simdup.clusters(fps, k=1, mode="star").tolist() == [0, 0, 2, 2, 4]
    # Centers: 1 (two partners) takes 0 and 2; 2 then moves to 3, alone and linked to it.
    assert simdup.clusters(fps, k=1, mode="centers").tolist() == [0, 0, 2, 2, 4]
    assert simdup.clusters(fps, k=1, ids=["a", "b", "c", "d", "e"]).tolist() == ["a"] * 4 + ["e"]
    with pytest.raises(ValueError, match="mode"):
        simdup.clusters(fps, k=1, mode="chains")
    with pytest.raises(ValueError, match="k must be in 0..32"):
        simdup.pairs(fps, k=40)


def test_plan_matches_the_cli():
    p = simdup.plan(2**34, k=3)
    cli = run_cli(["plan", "--n", str(2**34), "-k", "3", "--json"]).stdout
    import json
    c = json.loads(cli)
    assert p["tables"] == c["tables"]
    assert "tables" in p["description"]
    q = simdup.plan(1000, k=3, blocks="16,16,16,16")
    assert q["tables"] == 4 and q["layout"] == "16,16,16,16"
    with pytest.raises(ValueError):
        simdup.plan(1000, k=3, blocks="16,16")


def test_index_add_query_remove_save_load(tmp_path):
    fps = near_set(400)
    ids = np.arange(100, 100 + len(fps), dtype=np.uint64)
    index = simdup.Index(k=4)
    index.add(ids, fps)
    assert len(index) == len(fps)
    assert index.memory > 0
    q = fps[:50]
    got = index.query(q)
    want = set()
    for qi, x in enumerate(q.tolist()):
        for j, y in enumerate(fps.tolist()):
            if popcount(x ^ y) <= 4:
                want.add((qi, 100 + j, popcount(x ^ y)))
    assert {(int(r["query"]), int(r["id"]), int(r["distance"])) for r in got} == want
    assert {(int(r["query"]), int(r["id"])) for r in index.query(q, k=1)} == \
        {(a, b) for a, b, d in want if d <= 1}
    assert index.remove([100, 101, 99999]) == 2
    assert len(index) == len(fps) - 2
    assert 100 not in index.query(fps[:1])["id"].tolist()
    path = tmp_path / "index.sdx"
    index.save(str(path))
    loaded = simdup.Index.load(str(path))
    assert len(loaded) == len(index)
    assert loaded.query(q).tolist() == index.query(q).tolist()
    reopened = simdup.Index(path=str(path))
    assert len(reopened) == len(index)


def test_index_window_expires_old_entries():
    index = simdup.Index(k=3, window=100)
    index.add([1, 2], [0xAAAA, 0xAAAB], times=[1000, 1090])
    assert sorted(index.query([0xAAAA], now=1050)["id"].tolist()) == [1, 2]
    assert index.query([0xAAAA], now=1150)["id"].tolist() == [2]


def test_index_errors():
    with pytest.raises(ValueError, match="k must be in"):
        simdup.Index(k=33)
    with pytest.raises(ValueError, match="ids for"):
        simdup.Index().add([1, 2], [1])
    with pytest.raises(ValueError, match="negative"):
        simdup.Index().add([-1], [1])
    with pytest.raises(ValueError, match="out of range"):
        simdup.Index().add([1], [2**64])
    with pytest.raises(TypeError):
        simdup.Index().query(None)
    with pytest.raises(FileNotFoundError):
        simdup.Index.load("/nonexistent/index.sdx")
    with pytest.raises(ValueError):
        simdup.Index().save()


def test_index_concurrent_queries_while_adding():
    index = simdup.Index(k=3)
    fps = near_set(4000, seed=3)
    index.add(np.arange(len(fps), dtype=np.uint64), fps)
    errors = []

    def reader():
        try:
            for _ in range(30):
                got = index.query(fps[:200])
                # Every query finds at least itself.
                assert set(got["query"].tolist()) == set(range(200))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def writer():
        more = near_set(4000, seed=11)
        for start in range(0, len(more), 500):
            index.add(np.arange(10**6 + start, 10**6 + start + 500, dtype=np.uint64), more[start:start + 500])

    threads = [threading.Thread(target=reader) for _ in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(index) == 8000
