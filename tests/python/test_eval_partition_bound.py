"""eval/partition_bound.py: partitions built from a hand-made, non-transitive truth."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

EVAL = Path(__file__).resolve().parents[2] / "eval"


def bound(tmp_path: Path, truth: str) -> dict:
    (tmp_path / "truth.tsv").write_text(truth)
    out = subprocess.run([sys.executable, str(EVAL / "partition_bound.py"),
                          str(tmp_path / "truth.tsv")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    return {r.get("partition", "header"): r for r in lines}


def test_a_chain_scores_each_partition(tmp_path):
    # The chain 1~2~3~4~5: 4 true pairs, 1 and 3 (and so on) not similar.
    r = bound(tmp_path, "a\tb\tjaccard\n1\t2\t0.8\n2\t3\t0.8\n3\t4\t0.8\n4\t5\t0.8\n")
    assert (r["header"]["true_pairs"], r["header"]["documents"]) == (4, 5)
    # Components: one cluster, 10 pairs predicted, 4 true.
    assert (r["components"]["precision"], r["components"]["recall"]) == (0.4, 1.0)
    # Star in id order: {1, 2}, {3, 4}, {5}: 2 pairs, both true.
    assert (r["star"]["precision"], r["star"]["recall"]) == (1.0, 0.5)
    # Centers: 2 (two partners, the smallest id) takes 1 and 3, then 4 takes 5; moving 3 to 4's
    # cluster gains nothing. {1, 2, 3}, {4, 5}: 4 pairs predicted, 3 true.
    for name in ("centers", "local search"):
        assert (r[name]["precision"], r[name]["recall"]) == (0.75, 0.75), name
        assert r[name]["f1"] == pytest.approx(0.75)


def test_centers_move_a_member_to_the_cluster_holding_its_links(tmp_path):
    # Clique {1, 2, 3, 4}, 4~5 and 5~6: the pivot 4 (four partners) takes 5, which then moves
    # to 6 (its center, alone): {1, 2, 3, 4}, {5, 6}, every predicted pair true, only 4~5 missed.
    pairs = [(a, b) for a in range(1, 5) for b in range(a + 1, 5)] + [(4, 5), (5, 6)]
    r = bound(tmp_path, "".join(f"{a}\t{b}\n" for a, b in pairs))
    assert r["header"]["true_pairs"] == 8
    assert (r["components"]["precision"], r["components"]["recall"]) == (round(8 / 15, 4), 1.0)
    for name in ("centers", "local search"):
        assert (r[name]["precision"], r[name]["recall"]) == (1.0, 0.875), name


def test_missing_truth_file_is_a_usage_error(tmp_path):
    out = subprocess.run([sys.executable, str(EVAL / "partition_bound.py"),
                          str(tmp_path / "missing.tsv")], capture_output=True, text=True)
    assert out.returncode == 2
    assert "missing.tsv" in out.stderr
