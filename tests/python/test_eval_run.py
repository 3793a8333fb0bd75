"""eval/run_eval.sh end to end on a tiny corpus with the real simdup binary."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "eval"))

import truth  # noqa: E402

SIMDUP = os.environ.get("SIMDUP_BIN", "")

STORY = ("The council approved the new budget on Tuesday after a long debate about road repairs, "
         "school funding and the future of the public library on the high street. ") * 3
OTHER = ("Heavy rain is expected across the region this weekend, and the weather service has "
         "warned drivers to avoid flooded roads near the river until Monday morning. ") * 3


def has_pairs_command() -> bool:
    if not SIMDUP or not Path(SIMDUP).exists():
        return False
    return subprocess.run([SIMDUP, "pairs", "--help"], capture_output=True).returncode == 0


@pytest.mark.skipif(not has_pairs_command(), reason="SIMDUP_BIN with `simdup pairs` not set")
def test_run_eval_scores_each_k(tmp_path):
    texts = [STORY, STORY, STORY.replace("Tuesday", "Wednesday"), OTHER,
             "<html><body><p>" + OTHER + "</p></body></html>", "A short unrelated note."]
    with open(tmp_path / "en.jsonl", "w") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": f"d{i}", "text": t}) + "\n")
    pairs = truth.pairs_for_texts(texts, chinese=False)
    with open(tmp_path / "en.truth.tsv", "w") as f:
        f.write("a\tb\tjaccard\n")
        for i, j, jac in pairs:
            f.write(f"d{i}\td{j}\t{jac:.6f}\n")
    assert {(i, j) for i, j, _ in pairs} == {(0, 1), (0, 2), (1, 2), (3, 4)}

    env = dict(os.environ, KS="0 12", LANGS="en")
    proc = subprocess.run(["bash", str(ROOT / "eval" / "run_eval.sh"), SIMDUP, str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = (tmp_path / "results.md").read_text()
    assert "## en: 6 documents, 4 true pairs" in report
    rows = [line for line in report.splitlines() if line.startswith("| 0 |")
            or line.startswith("| 12 |")]
    assert len(rows) == 2
    k0 = json.loads((tmp_path / "results" / "en.k0.score.json").read_text())
    k12 = json.loads((tmp_path / "results" / "en.k12.score.json").read_text())
    # d0 and d1 are the same text: the same fingerprint, a pair at every k.
    assert k0["true_positives"] >= 1 and k0["truth_pairs"] == 4
    assert k12["recall"] >= k0["recall"]
    assert k12["predicted_pairs"] >= k0["predicted_pairs"]
