"""eval/service_eval.py end to end on a tiny corpus, with the real `simdup serve`."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "eval"))

import truth  # noqa: E402

SIMDUP = os.environ.get("SIMDUP_BIN", str(ROOT / "build" / "release" / "cli" / "simdup"))

STORY = ("The council approved the new budget on Tuesday after a long debate about road repairs, "
         "school funding and the future of the public library on the high street. ") * 3
OTHER = ("Heavy rain is expected across the region this weekend, and the weather service has "
         "warned drivers to avoid flooded roads near the river until Monday morning. ") * 3
THIRD = ("The orchestra opened its season with a programme of new works by local composers, "
         "and the hall was full for both evening concerts and the Sunday matinee. ") * 3
FOURTH = ("A small bakery on the corner has won a national prize for its sourdough, which the "
          "owners bake overnight in a wood-fired oven they built themselves years ago. ") * 3

# (family, edit, text): each family's original first, as eval/generate.py writes them.
DOCS = [
    (0, "original", STORY),
    (1, "original", OTHER),
    (2, "original", THIRD),
    (3, "original", FOURTH),
    (0, "copy", STORY),
    (0, "word_edits:0", STORY.replace("Tuesday", "Wednesday")),
    (1, "html:0", "<html><body><p>" + OTHER + "</p></body></html>"),
]


def test_service_eval_counts_copies_unrelated_and_stream_drops(tmp_path):
    corpus, truth_file = tmp_path / "en.jsonl", tmp_path / "en.truth.tsv"
    with open(corpus, "w") as f:
        for i, (family, edit, text) in enumerate(DOCS):
            f.write(json.dumps({"id": f"d{i}", "text": text, "family": family,
                                "edit": edit}) + "\n")
    pairs = truth.pairs_for_texts([t for _, _, t in DOCS], chinese=False)
    with open(truth_file, "w") as f:
        f.write("a\tb\tjaccard\n")
        for i, j, jac in pairs:
            f.write(f"d{i}\td{j}\t{jac:.6f}\n")
    assert {(i, j) for i, j, _ in pairs} == {(0, 4), (0, 5), (4, 5), (1, 6)}

    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(ROOT / "eval" / "service_eval.py"), "--corpus",
                           str(corpus), "--truth", str(truth_file), "--simdup", SIMDUP,
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["collection"]["minhash"] == "10x6" and result["collection"]["sketch"] == 512
    # The three reposts of an original are answered duplicate; the odd families' originals have
    # no true pair among the even families' and are answered unique.
    assert result["edited"]["queries"] == 3 and result["edited"]["duplicate"] == 3
    assert result["unrelated"] == {"queries": 2, "duplicate": 0, "share": 0.0}
    stream = result["stream"]
    assert stream["documents"] == 7 and stream["dedup_stream_drops"] == 3
    assert stream["service_drops"] == 3 and stream["of_dedup_drops_also_dropped"] == 1.0

    # --settings reach the collections, and the answer names them.
    proc = subprocess.run([sys.executable, str(ROOT / "eval" / "service_eval.py"), "--corpus",
                           str(corpus), "--truth", str(truth_file), "--simdup", SIMDUP,
                           "--settings", '{"minhash": "off", "sketch": 128}'],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    assert again["collection"]["minhash"] == "off" and again["collection"]["sketch"] == 128
