"""One CLI without surprises: `--out` forms and refusals, one error format with documented exit
codes, the same option names everywhere, files that are not text, and summaries that count
records (docs/cli.md, docs/dedup.md)."""

import json
import os

import pytest

from cli_harness import run, snapshot, write_jsonl
from service_harness import Server

TEXTS = [
    "The harbour was closed on Tuesday after the storm damaged the northern breakwater badly.",
    "A new library opened in the old town hall, with a reading room and a children's corner.",
    "Farmers in the valley report the earliest cherry harvest in thirty years of records.",
]


def read_summary(out):
    return json.loads((out / "summary.json").read_text())


def leftovers(parent):
    return sorted(p.name for p in parent.iterdir() if ".tmp-" in p.name or ".init-" in p.name)


# --- dedup --out ------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["out/", "./out", "./out/", "ABS", "EMPTY"])
def test_out_accepts_the_usual_spellings(tmp_path, form):
    corpus = write_jsonl(tmp_path / "in.jsonl", [{"id": i, "text": t} for i, t in enumerate(TEXTS)])
    out = tmp_path / "out"
    arg = {"ABS": str(out), "EMPTY": "out"}.get(form, form)
    if form == "EMPTY":
        out.mkdir()
    proc = run(["dedup", corpus, "--out", arg], check=0, cwd=tmp_path)
    assert sorted(os.listdir(out)) == ["duplicates.jsonl", "index", "kept.jsonl",
                                       "report.html", "summary.json"]
    assert len((out / "kept.jsonl").read_text().splitlines()) == 3
    assert leftovers(tmp_path) == [] and leftovers(out) == []
    assert b"output" in proc.stdout


def test_non_empty_out_is_refused_before_any_work(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    # The input does not exist: refusing first means exit 2 about DIR, not exit 1 about it.
    proc = run(["dedup", tmp_path / "missing.jsonl", "--out", out], check=2)
    err = proc.stderr.decode()
    assert err.startswith("simdup dedup: error: --out ") and "not empty" in err and "--force" in err
    assert os.listdir(out) == ["notes.txt"] and leftovers(tmp_path) == []
    # stdin is not read either (a run would block on it or spool it).
    proc = run(["dedup", "--out", out], input=b'{"id":1,"text":"x"}\n', check=2)
    assert os.listdir(out) == ["notes.txt"]


def test_force_replaces_a_non_empty_out(tmp_path):
    corpus = write_jsonl(tmp_path / "in.jsonl", [{"id": 1, "text": TEXTS[0]}])
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("old")
    run(["dedup", corpus, "--out", out, "--force", "-q"], check=0)
    assert "notes.txt" not in os.listdir(out) and (out / "summary.json").exists()
    assert leftovers(tmp_path) == []
    # A failed run with --force leaves DIR as it was.
    before = snapshot(out)
    run(["dedup", tmp_path / "missing.jsonl", "--out", out, "--force"], check=1)
    assert snapshot(out) == before


@pytest.mark.parametrize("bad", [".", "..", "/"])
def test_out_cannot_be_the_current_parent_or_root_directory(tmp_path, bad):
    corpus = write_jsonl(tmp_path / "in.jsonl", [{"id": 1, "text": TEXTS[0]}])
    (tmp_path / "sub").mkdir()
    proc = run(["dedup", corpus, "--out", bad, "--force"], check=2, cwd=tmp_path / "sub")
    assert b"simdup dedup: error: --out" in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "sub"]


def test_out_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "out"
    target.write_text("a file")
    proc = run(["dedup", "--out", target, "--force"], input=b"", check=2)
    assert b"is not a directory" in proc.stderr and target.read_text() == "a file"


# --- errors and exit codes --------------------------------------------------------------------

@pytest.mark.parametrize("args, prefix", [
    (["dedup", "--out", "o", "--bogus"], "simdup dedup: error: "),
    (["fingerprint", "--format", "xml"], "simdup fingerprint: error: "),
    (["idf", "build", "--bogus"], "simdup idf build: error: "),
    (["pairs", "--on-error", "ignore"], "simdup pairs: error: "),
    (["clusters", "--clusters", "ring"], "simdup clusters: error: "),
    (["plan"], "simdup plan: error: "),
    (["serve", "--listen", "nowhere"], "simdup serve: error: "),
    (["explain", "only one text"], "simdup explain: error: "),
    (["nosuchcommand"], "simdup: error: unknown command"),
])
def test_every_usage_error_has_one_format_and_exit_2(tmp_path, args, prefix):
    proc = run(args, check=2, cwd=tmp_path)
    assert proc.stderr.decode().startswith(prefix), proc.stderr


@pytest.mark.parametrize("command", [["dedup", "--out", "o"], ["pairs"], ["clusters"],
                                     ["plan", "--n", "10"], ["serve", "--data", "d"]])
@pytest.mark.parametrize("value, why", [("40", "is too large"), ("abc", "is not a number"),
                                        ("=-1", "is negative")])
def test_a_bad_k_says_what_is_wrong(tmp_path, command, value, why):
    k = "--k" + value if value.startswith("=") else value
    args = command + ([k] if value.startswith("=") else ["--k", value])
    proc = run(args, input=b"", check=2, cwd=tmp_path)
    err = proc.stderr.decode()
    assert err.startswith(f"simdup {command[0]}: error: --k: "), err
    assert why in err and "an integer from 0 to" in err, err
    assert not (tmp_path / "d").exists() and not (tmp_path / "o").exists()


def test_serve_without_data_is_a_usage_error(tmp_path):
    proc = run(["serve", "--listen", "127.0.0.1:0"], check=2, cwd=tmp_path)
    assert proc.stderr.decode().startswith("simdup serve: error: --data DIR is required")


def test_a_second_server_on_the_same_data_says_so(tmp_path):
    first = Server(["--data", str(tmp_path / "db")])
    try:
        proc = run(["serve", "--data", tmp_path / "db", "--listen", "127.0.0.1:0"], check=1,
                   timeout=60)
        err = proc.stderr.decode()
        assert err.startswith("simdup serve: error: "), err
        assert "in use by another process" in err and "same --data" in err, err
        assert "LOCK" not in err and "Resource temporarily unavailable" not in err
    finally:
        assert first.terminate() == 0


# --- one option, one meaning ------------------------------------------------------------------

CHAIN = "a\t0000000000000000\nb\t0000000000000007\nc\t000000000000003f\n"


def test_clusters_takes_dedups_clusters_option(tmp_path):
    path = tmp_path / "fp.tsv"
    path.write_text(CHAIN)
    comp = run(["clusters", "--k", "3", path], check=0).stdout.decode().splitlines()
    assert [json.loads(l)["id"] for l in comp] == ["a", "b", "c"]
    star = run(["clusters", "--k", "3", "--clusters", "star", path], check=0)
    assert [json.loads(l) for l in star.stdout.decode().splitlines()] == [
        {"id": "a", "cluster": "a"}, {"id": "b", "cluster": "a"}]
    proc = run(["clusters", "--k", "3", "--mode", "star", path], check=2)
    assert b"--mode was renamed --clusters" in proc.stderr


@pytest.mark.parametrize("command", ["pairs", "clusters"])
def test_pairs_and_clusters_have_output_quiet_and_on_error(tmp_path, command):
    good = tmp_path / "fp.tsv"
    good.write_text(CHAIN)
    bad = tmp_path / "bad.tsv"
    bad.write_text("x\t0000000000000001\ny\tnot-hex\nz\t0000000000000003\n")
    out = tmp_path / "result.jsonl"
    # fail (default): exit 1 naming FILE:LINE, and no output file.
    proc = run([command, good, bad, "-o", out], check=1)
    assert proc.stderr.decode().startswith(f"simdup {command}: error: {bad}:2: ")
    assert sorted(os.listdir(tmp_path)) == ["bad.tsv", "fp.tsv"]  # no result, no temporary
    # skip: the line and a missing input are reported and counted, the rest is used; exit 3.
    missing = tmp_path / "missing.tsv"
    proc = run([command, good, bad, missing, "-o", out, "--on-error", "skip"], check=3)
    err = proc.stderr.decode()
    assert f"{bad}:2:" in err and str(missing) in err
    assert "1 lines skipped, 1 inputs skipped" in err
    ids = {v for l in out.read_text().splitlines() for v in json.loads(l).values()
           if isinstance(v, str)}
    assert {"x", "z"} <= ids and "y" not in ids
    # -q: nothing on stderr, the exit code still says something was skipped.
    proc = run([command, good, bad, "-q", "--on-error", "skip"], check=3)
    assert proc.stderr == b"" and proc.stdout


def test_idf_build_has_quiet(tmp_path):
    path = write_jsonl(tmp_path / "zh.jsonl", [{"id": 1, "text": "今天天气很好，我们去公园散步吧。"},
                                               {"id": 2, "text": "{broken"}])
    path.write_text(path.read_text().replace('{"id": 2, "text": "{broken"}', "{broken"))
    loud = run(["idf", "build", path, "-o", tmp_path / "idf.txt", "--on-error", "skip"], check=3)
    assert b"skipped" in loud.stderr
    quiet = run(["idf", "build", path, "-o", tmp_path / "idf.txt", "--on-error", "skip", "-q"],
                check=3)
    assert quiet.stderr == b"" and "公园" in (tmp_path / "idf.txt").read_text()


# --- files that are not text ------------------------------------------------------------------

def not_text_files(tmp_path):
    nul = tmp_path / "image.txt"
    nul.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40)
    latin = tmp_path / "noise.jsonl"
    latin.write_bytes(bytes(0x80 + (i * 37) % 0x7f for i in range(20000)))
    return [nul, latin]


def test_a_file_that_is_not_text_is_an_unreadable_input(tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", [{"id": "g", "text": TEXTS[0]}])
    for binary in not_text_files(tmp_path):
        proc = run(["fingerprint", good, binary], check=1)
        err = proc.stderr.decode()
        assert err.startswith(f"simdup fingerprint: error: {binary}: not text"), err
        proc = run(["fingerprint", good, binary, "--on-error", "skip"], check=3)
        assert [json.loads(l)["id"] for l in proc.stdout.decode().splitlines()] == ["g"]
        assert "1 inputs skipped (binary_input: 1)" in proc.stderr.decode()


def test_other_compressions_and_archives_are_named(tmp_path):
    import bz2
    import lzma
    import zipfile
    data = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(TEXTS)).encode()
    data *= 50  # past the first block: NUL bytes or invalid UTF-8 in the compressed bytes
    (tmp_path / "a.jsonl.xz").write_bytes(lzma.compress(data))
    (tmp_path / "a.jsonl.bz2").write_bytes(bz2.compress(data))
    with zipfile.ZipFile(tmp_path / "a.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.jsonl", data)
    for name, what in [("a.jsonl.xz", "xz-compressed (decompress it: xz -dc FILE"),
                       ("a.jsonl.bz2", "bzip2-compressed (decompress it: bzip2 -dc FILE"),
                       ("a.zip", "a zip archive")]:
        err = run(["fingerprint", tmp_path / name], check=1).stderr.decode()
        assert f"{tmp_path / name}: not text: {what}" in err, err
    # A text that happens to start like one of them is still text.
    text = tmp_path / "par.txt"
    text.write_text("PAR1 is the first paragraph of this text file, read as a document.\n")
    out = run(["fingerprint", text], check=0).stdout.decode().splitlines()
    assert [json.loads(line)["id"] for line in out] == [1]


def test_dedup_counts_a_binary_input_as_a_skipped_input(tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", [{"id": i, "text": t} for i, t in enumerate(TEXTS)])
    binary = not_text_files(tmp_path)[0]
    out = tmp_path / "out"
    proc = run(["dedup", good, binary, "--out", out, "--on-error", "skip"], check=3)
    assert f"{binary}: not text".encode() in proc.stderr
    summary = read_summary(out)
    assert summary["documents"]["read"] == 3 and summary["documents"]["skipped"] == 0
    assert summary["inputs"] == {"count": 2, "skipped": 1}
    assert summary["skipped_reasons"] == {"binary_input": 1}


def test_latin1_text_is_still_text(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("Café crème brûlée, à la carte; naïve façade.\n".encode("latin-1") * 50)
    proc = run(["fingerprint", path], check=0)
    assert len(proc.stdout.decode().splitlines()) == 50
    assert b"invalid UTF-8 sequences replaced" in proc.stderr


# --- summaries count records; globs; stream pairs ---------------------------------------------

def test_missing_input_is_a_skipped_input_not_a_document(tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", [{"id": i, "text": t} for i, t in enumerate(TEXTS)])
    out = tmp_path / "out"
    proc = run(["dedup", good, tmp_path / "gone.jsonl", "--out", out, "--on-error", "skip"],
               check=3)
    assert b"3 documents read" in proc.stdout
    assert b"0 records, 1 inputs: missing_file 1" in proc.stdout
    docs = read_summary(out)["documents"]
    assert (docs["read"], docs["kept"], docs["skipped"]) == (3, 3, 0)


@pytest.mark.parametrize("command", ["fingerprint", "dedup"])
def test_a_glob_without_matches(tmp_path, command):
    good = write_jsonl(tmp_path / "good.jsonl", [{"id": "g", "text": TEXTS[0]}])
    pattern = str(tmp_path / "crawl" / "*.warc.gz")
    out = ["--out", tmp_path / "out"] if command == "dedup" else ["-o", tmp_path / "fp.jsonl"]
    proc = run([command, pattern, good, *out], check=1)
    assert f"no input matches the pattern {pattern}".encode() in proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "fp.jsonl").exists()
    proc = run([command, pattern, good, *out, "--on-error", "skip"], check=3)
    assert f"skipped no input matches the pattern {pattern}".encode() in proc.stderr \
        or f"skipped: no input matches the pattern {pattern}".encode() in proc.stderr
    if command == "dedup":
        summary = read_summary(tmp_path / "out")
        assert summary["skipped_reasons"] == {"missing_file": 1}
        assert summary["documents"]["kept"] == 1
    else:
        assert [json.loads(l)["id"] for l in (tmp_path / "fp.jsonl").read_text().splitlines()] \
            == ["g"]


def test_stream_mode_reports_the_pairs_it_verified(tmp_path):
    base = " ".join(TEXTS)
    records = [{"id": "orig", "text": base},
               {"id": "edit", "text": base.replace("Tuesday", "Wednesday")},
               {"id": "other", "text": "Unrelated: the council voted to repaint every bridge "
                                       "in the city green before the summer festival begins."}]
    path = write_jsonl(tmp_path / "in.jsonl", records)
    for mode in ("stream", "batch"):
        out = tmp_path / mode
        proc = run(["dedup", path, "--out", out, "--mode", mode, "-k", "12"], check=0)
        pairs = read_summary(out)["pairs"]
        assert pairs["candidates"] >= 1, (mode, pairs)
        assert f"verified {pairs['candidates']:>12} near pairs".encode() in proc.stdout or \
            f"verified    {pairs['candidates']:>12,} near pairs".encode() in proc.stdout, proc.stdout
        dups = [json.loads(l) for l in (out / "duplicates.jsonl").read_text().splitlines()]
        assert [(d["id"], d["layer"]) for d in dups] == [("edit", "near")]
