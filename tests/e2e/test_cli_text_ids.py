"""Plain-text inputs: ids are line numbers for one input and FILE:LINE for several."""

from cli_harness import jsonl, run


def test_one_text_input_keeps_numeric_line_ids(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("first line of text\nsecond line of text\n")
    out = jsonl(run(["fingerprint", a], check=0))
    assert [r["id"] for r in out] == [1, 2]


def test_several_text_inputs_get_unique_file_line_ids(tmp_path):
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text("first line of text\nsecond line of text\n")
    b.write_text("another first line\n")
    out = jsonl(run(["fingerprint", a, b], check=0))
    assert [r["id"] for r in out] == [f"{a}:1", f"{a}:2", f"{b}:1"]
    # The same through a glob that expands to two files, and in TSV output.
    tsv = run(["fingerprint", "--format", "tsv", str(tmp_path / "*.txt")], check=0).stdout
    ids = [line.split("\t")[0] for line in tsv.decode().splitlines()]
    assert ids == [f"{a}:1", f"{a}:2", f"{b}:1"]
    # Same text, same fingerprint, whatever the id form.
    single = jsonl(run(["fingerprint", b], check=0))
    assert single[0]["fingerprint"] == out[2]["fingerprint"]
