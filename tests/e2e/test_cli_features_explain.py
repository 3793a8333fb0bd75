"""`simdup features` and `simdup explain`."""

import json

from cli_harness import jsonl, run, write_jsonl


def test_features_heaviest_first_with_counts(tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl", [{"id": 1, "text": "abab ab"}])
    out = jsonl(run(["features", path], check=0))
    assert out[0]["id"] == 1
    feats = out[0]["features"]
    weights = [w for _, w in feats]
    assert weights == sorted(weights, reverse=True)
    # Default: width-4 character shingles over the normalised text "abab ab".
    assert dict(feats) == {"abab": 1, "bab ": 1, "ab a": 1, "b ab": 1}


def test_features_words_and_top_k(tmp_path):
    path = write_jsonl(tmp_path / "w.jsonl", [{"id": "w", "text": "Red red RED blue blue green"}])
    out = jsonl(run(["features", "--features", "words", path], check=0))
    assert out[0]["features"] == [["red", 3], ["blue", 2], ["green", 1]]
    out = jsonl(run(["features", "--features", "words", "--top-k", "2", path], check=0))
    assert out[0]["features"] == [["red", 3], ["blue", 2]]
    tsv = run(["features", "--features", "words", "--format", "tsv", path], check=0).stdout
    assert tsv.decode() == "w\tred\t3\nw\tblue\t2\nw\tgreen\t1\n"


def test_features_supplied_are_sorted_and_empty_is_empty(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"id": 1, "features": [["low", 0.5], ["high", 2]]},
        {"id": 2, "text": ""},
    ])
    out = jsonl(run(["features", path], check=0))
    assert out == [{"id": 1, "features": [["high", 2], ["low", 0.5]]},
                   {"id": 2, "features": []}]


def test_explain_identical_and_different_texts():
    a = "The quick brown fox jumps over the lazy dog near the river bank."
    out = json.loads(run(["explain", "--json", a, a], check=0).stdout)
    assert out["distance"] == 0 and out["differing_bits"] == []
    assert out["a"]["fingerprint"] == out["b"]["fingerprint"]
    assert out["only_a"] == [] and out["only_b"] == []

    b = "The quick brown fox jumped over the lazy dog near the river bank!"
    out = json.loads(run(["explain", "--json", "--top", "3", a, b], check=0).stdout)
    fa, fb = int(out["a"]["fingerprint"], 16), int(out["b"]["fingerprint"], 16)
    assert out["distance"] == bin(fa ^ fb).count("1")
    assert out["differing_bits"] == [i for i in range(64) if (fa ^ fb) >> i & 1]
    assert len(out["shared"]) == 3 and all(len(s) == 3 for s in out["shared"])
    assert ["ed o", 1] in out["only_b"] or len(out["only_b"]) == 3
    assert all(f[0] != "ed o" for f in out["only_a"])


def test_explain_human_output_and_files(tmp_path):
    fa = tmp_path / "a.txt"
    fa.write_text("Hello world, this is a test of simdup explain.")
    text = run(["explain", "Hello world, this is one more test.", "--file", fa], check=0)
    s = text.stdout.decode()
    assert "distance:" in s and "shared features:" in s and "only in A:" in s
    assert "only in B:" in s


def test_explain_mixed_file_and_text_keep_command_line_order(tmp_path):
    fa = tmp_path / "a.txt"
    fa.write_text("alpha beta gamma delta epsilon")
    text = "completely different words here"
    direct = json.loads(run(["explain", "--json", fa.read_text(), text], check=0).stdout)
    # --file A TEXT: one value per --file, so TEXT stays a text and file A is side A.
    out = json.loads(run(["explain", "--json", "--file", fa, text], check=0).stdout)
    assert out["a"]["fingerprint"] == direct["a"]["fingerprint"]
    assert out["b"]["fingerprint"] == direct["b"]["fingerprint"]
    # TEXT --file A: the text is side A.
    out = json.loads(run(["explain", "--json", text, "--file", fa], check=0).stdout)
    assert out["a"]["fingerprint"] == direct["b"]["fingerprint"]
    assert out["b"]["fingerprint"] == direct["a"]["fingerprint"]
    # Two files, and a third source is a usage error.
    out = json.loads(run(["explain", "--json", "--file", fa, "--file", fa], check=0).stdout)
    assert out["distance"] == 0
    assert run(["explain", "--file", fa, text, "x"]).returncode == 2


def test_explain_too_short_and_usage_errors():
    out = json.loads(run(["explain", "--json", "", "some text here"], check=0).stdout)
    assert out["a"]["fingerprint"] is None and out["a"]["status"] == "too_short"
    assert out["distance"] is None
    assert run(["explain", "only one"]).returncode == 2
    assert run(["explain", "a", "b", "c"]).returncode == 2
    assert run(["explain", "--file", "/nonexistent/x", "b"]).returncode == 2


def test_help_texts_mention_options():
    text = run(["explain", "--help"], check=0).stdout.decode()
    for opt in ["--file", "--json", "--top", "--features", "--compat", "TEXT"]:
        assert opt in text, opt
    text = run(["features", "--help"], check=0).stdout.decode()
    for opt in ["--features", "--weighting", "--top-k", "--on-error", "--format", "INPUT"]:
        assert opt in text, opt
