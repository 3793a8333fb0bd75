"""eval/score.py: precision, recall and F1 on hand-made truth and predictions."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

EVAL = Path(__file__).resolve().parents[2] / "eval"
sys.path.insert(0, str(EVAL))

import score  # noqa: E402

# Truth: 4 pairs. {1,2,3} are mutual duplicates (3 pairs) and 4~5.
TRUTH = "a\tb\tjaccard\n1\t2\t0.9\n2\t3\t0.85\n1\t3\t0.8\n5\t4\t1.0\n"


def run(tmp_path: Path, predicted: list[dict], *extra: str) -> dict:
    (tmp_path / "truth.tsv").write_text(TRUTH)
    (tmp_path / "pred.jsonl").write_text("".join(json.dumps(r) + "\n" for r in predicted))
    out = subprocess.run([sys.executable, str(EVAL / "score.py"), str(tmp_path / "truth.tsv"),
                          str(tmp_path / "pred.jsonl"), *extra],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_pairs_precision_recall_f1(tmp_path):
    # 3 predicted distinct pairs (one listed twice, reversed; one self pair ignored):
    # (1,2) and (4,5) are true, (1,4) is false. P = 2/3, R = 2/4, F1 = 4/7.
    pred = [{"a": 1, "b": 2, "distance": 0}, {"a": "2", "b": "1"}, {"a": 4, "b": 5},
            {"a": 1, "b": 4}, {"a": 3, "b": 3}]
    r = run(tmp_path, pred)
    assert r["format"] == "pairs"
    assert (r["truth_pairs"], r["predicted_pairs"], r["true_positives"]) == (4, 3, 2)
    assert r["precision"] == pytest.approx(2 / 3, abs=1e-6)
    assert r["recall"] == pytest.approx(0.5)
    assert r["f1"] == pytest.approx(4 / 7, abs=1e-6)


def test_empty_prediction_is_pairs_with_zero_recall(tmp_path):
    r = run(tmp_path, [])
    assert r["format"] == "pairs"
    assert r["precision"] == 1.0 and r["recall"] == 0.0 and r["f1"] == 0.0


def test_duplicates_cluster_and_representative_views(tmp_path):
    # Cluster A = {1, 2, 3, 6} with representative 1; cluster B = {4, 5} with representative 4.
    pred = [
        {"id": 2, "duplicate_of": 1, "cluster": "A", "layer": "near"},
        {"id": 3, "duplicate_of": 2, "cluster": "A", "layer": "near"},
        {"id": 6, "duplicate_of": 1, "cluster": "A", "layer": "near"},
        {"id": 5, "duplicate_of": 4, "cluster": "B", "layer": "exact"},
    ]
    r = run(tmp_path, pred)
    assert r["format"] == "duplicates" and r["clusters"] == 2
    # Cluster view: C(4,2) + C(2,2) = 7 predicted pairs, all 4 true pairs inside clusters.
    c = r["cluster"]
    assert (c["predicted_pairs"], c["true_positives"]) == (7, 4)
    assert c["precision"] == pytest.approx(4 / 7, abs=1e-6) and c["recall"] == 1.0
    # Representative view: links (1,2) (2,3) (1,6) (4,5); 3 of 4 are true.
    rep = r["representative"]
    assert (rep["predicted_pairs"], rep["true_positives"]) == (4, 3)
    assert rep["precision"] == 0.75 and rep["recall"] == 1.0
    assert rep["f1"] == pytest.approx(2 * 0.75 / 1.75, abs=1e-6)


def test_layers_filter_keeps_only_the_near_layer(tmp_path):
    pred = [
        {"id": 2, "duplicate_of": 1, "cluster": "A", "layer": "near"},
        {"id": 5, "duplicate_of": 4, "cluster": "B", "layer": "exact"},
    ]
    r = run(tmp_path, pred, "--layers", "near")
    assert r["cluster"]["predicted_pairs"] == 1 and r["cluster"]["true_positives"] == 1
    assert r["cluster"]["recall"] == 0.25


def test_inconsistent_clusters_and_bad_json_are_input_errors(tmp_path):
    (tmp_path / "truth.tsv").write_text(TRUTH)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "duplicate_of": 2, "cluster": "A"}\n'
                   '{"id": 1, "duplicate_of": 3, "cluster": "B"}\n')
    assert score.main([str(tmp_path / "truth.tsv"), str(bad)]) == 2
    bad.write_text('{"a": 1, "b": 2}\n{"a": 1,\n')
    proc = subprocess.run([sys.executable, str(EVAL / "score.py"), str(tmp_path / "truth.tsv"),
                           str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2 and "bad.jsonl:2: malformed JSON" in proc.stderr


def test_metrics_edge_cases():
    assert score.metrics(0, 0, 0) == {"truth_pairs": 0, "predicted_pairs": 0,
                                      "true_positives": 0, "precision": 1.0, "recall": 1.0,
                                      "f1": 1.0}
    assert score.metrics(0, 5, 5)["f1"] == 0.0
