"""End-to-end tests of `simdup dedup`: outputs, accounting, modes, policies, errors."""

import json
import os
import shutil
import subprocess

import pytest

from cli_harness import run, write_jsonl
from dedup_corpus import base_texts, corpus, jaccard


def read_out(out):
    kept = (out / "kept.jsonl").read_text(encoding="utf-8").splitlines()
    dups = [json.loads(l) for l in (out / "duplicates.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    return kept, dups, summary


def fingerprints(path, *extra):
    proc = run(["fingerprint", path, "--min-features", "10", *extra], check=0)
    return {json.loads(l)["id"]: json.loads(l)["fingerprint"]
            for l in proc.stdout.decode().splitlines()}


def hamming(a, b):
    return bin(int(a, 16) ^ int(b, 16)).count("1")


@pytest.fixture
def corpus_file(tmp_path):
    records, must = corpus()
    path = write_jsonl(tmp_path / "in.jsonl", records)
    return path, records, must


def test_batch_accounts_for_every_record_and_keeps_bytes(tmp_path, corpus_file):
    path, records, must = corpus_file
    # One malformed line in the middle.
    lines = path.read_text(encoding="utf-8").splitlines()
    lines.insert(10, '{"id": "broken", "text": ')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    proc = run(["dedup", path, "--out", out, "--on-error", "skip"], check=3)
    assert b"in.jsonl:11" in proc.stderr  # --quiet would drop the per-record message
    kept, dups, summary = read_out(out)
    assert sorted(os.listdir(out)) == ["duplicates.jsonl", "index", "kept.jsonl",
                                       "report.html", "summary.json"]
    docs = summary["documents"]
    assert docs["read"] == len(records) + 1
    assert docs["skipped"] == 1 and summary["skipped_reasons"] == {"invalid_input": 1}
    assert docs["kept"] == len(kept) and docs["duplicates"] == len(dups)
    assert docs["kept"] + docs["duplicates"] + docs["skipped"] == docs["read"]
    # Kept records are the input lines, byte for byte, in input order.
    valid = [l for l in lines if l != '{"id": "broken", "text": ']
    assert kept == [l for l in valid if l in set(kept)]
    kept_ids = {json.loads(l)["id"] for l in kept}
    dup_ids = {d["id"] for d in dups}
    assert kept_ids | dup_ids == {r["id"] for r in records}
    assert not kept_ids & dup_ids
    for d in dups:
        assert d["duplicate_of"] in kept_ids
        assert d["layer"] in ("url", "exact", "near")
    by_id = {d["id"]: d for d in dups}
    for rid, original in must.items():
        assert by_id[rid]["duplicate_of"] == original, rid
    assert by_id["copy0"]["layer"] == "exact" and by_id["copy0"]["distance"] == 0
    assert by_id["url1"]["layer"] == "url"
    assert by_id["short-copy"]["distance"] is None
    # Short documents are never near duplicates.
    assert not any(d["id"].startswith("short") and d["layer"] == "near" for d in dups)
    assert docs["short"] == 7
    assert sum(summary["duplicates_by_layer"].values()) == len(dups)
    assert summary["parameters"]["mode"] == "batch"


def test_stream_matches_brute_force_over_fingerprints(tmp_path, corpus_file):
    path, records, _ = corpus_file
    fps = fingerprints(path)
    out = tmp_path / "out"
    run(["dedup", "--out", out, "--quiet", "-k", "6", "--layers", "near", "--verify", "off"],
        input=path.read_bytes(), check=0)
    kept, dups, summary = read_out(out)
    assert summary["parameters"]["mode"] == "stream"  # default for stdin
    by_id = {d["id"]: d for d in dups}
    kept_so_far, short = [], 0
    for r in records:
        fp = fps[r["id"]]
        if fp is None:  # short: exact layers only, and those are off here
            assert r["id"] not in by_id
            short += 1
            continue
        near = [(hamming(fp, fps[k]), i, k) for i, k in enumerate(kept_so_far)
                if hamming(fp, fps[k]) <= 6]
        if near:
            dist, _, rep = min(near)
            assert by_id[r["id"]]["duplicate_of"] == rep
            assert by_id[r["id"]]["distance"] == dist
        else:
            assert r["id"] not in by_id
            kept_so_far.append(r["id"])
    assert len(kept) == len(kept_so_far) + short
    assert short == summary["documents"]["short"] == 7


def test_stream_defaults_keep_a_small_index_for_a_small_input(tmp_path, corpus_file):
    # The default k = 8 could plan 495 tables (hundreds of MB before the first document);
    # stream mode plans within a per-document budget and sizes its mutable segment to it.
    path, _, _ = corpus_file
    out = tmp_path / "out"
    run(["dedup", "--out", out, "--quiet"], input=path.read_bytes(), check=0)
    _, _, summary = read_out(out)
    assert summary["parameters"]["mode"] == "stream"
    assert summary["parameters"]["k"] == 8
    assert summary["memory"]["engine_bytes"] < 32 * 2**20


def test_verify_reports_true_jaccard_and_drops_dissimilar_pairs(tmp_path, corpus_file):
    path, records, _ = corpus_file
    text = {r["id"]: r["text"] for r in records}
    out = tmp_path / "out"
    run(["dedup", path, "--out", out, "--quiet", "-k", "12", "--layers", "near",
         "--clusters", "star", "--verify", "jaccard:0.8"], check=0)
    _, dups, summary = read_out(out)
    assert summary["parameters"]["verify"]["jaccard"] == 0.8
    assert summary["pairs"]["candidates"] >= len(dups)
    assert dups, "the light edits are near duplicates"
    for d in dups:
        expected = jaccard(text[d["id"]], text[d["duplicate_of"]])
        assert d["jaccard"] == pytest.approx(expected, abs=2e-3)
        assert d["jaccard"] >= 0.8
    unverified = tmp_path / "plain"
    run(["dedup", path, "--out", unverified, "--quiet", "-k", "12", "--layers", "near",
         "--clusters", "star", "--verify", "off"], check=0)
    _, plain_dups, _ = read_out(unverified)
    assert len(plain_dups) >= len(dups)


def test_defaults_verify_with_anchored_clusters_and_minhash_at_k8(tmp_path, corpus_file):
    path, _, _ = corpus_file
    out = tmp_path / "out"
    run(["dedup", path, "--out", out, "--quiet"], check=0)
    _, dups, summary = read_out(out)
    p = summary["parameters"]
    assert (p["k"], p["linking"], p["verify"]["jaccard"]) == (8, "anchored", 0.8)
    assert p["minhash"] == {"bands": 10, "rows": 6}
    # Anchored at 0.8: every near duplicate is verified at least 0.8 similar to its
    # representative, though MinHash and the chain may put it more than k bits away.
    near = [d for d in dups if d["layer"] == "near"]
    assert near and all(d["jaccard"] >= 0.8 for d in near)
    assert summary["pairs"]["minhash_candidates"] <= summary["pairs"]["candidates"]


def test_anchored_clusters_keep_every_duplicate_above_the_floor(tmp_path, corpus_file):
    path, _, _ = corpus_file
    out = tmp_path / "out"
    run(["dedup", path, "--out", out, "--quiet", "--clusters", "anchored"], check=0)
    _, dups, summary = read_out(out)
    assert summary["parameters"]["linking"] == "anchored"
    near = [d for d in dups if d["layer"] == "near"]
    assert near and all(d["jaccard"] >= 0.8 for d in near)


def test_centers_keep_every_duplicate_within_twice_the_jaccard_distance(tmp_path, corpus_file):
    path, records, _ = corpus_file
    text = {r["id"]: r["text"] for r in records}
    out = tmp_path / "out"
    run(["dedup", path, "--out", out, "--quiet", "--clusters", "centers", "--verify",
         "jaccard:0.9"], check=0)
    _, dups, summary = read_out(out)
    assert summary["parameters"]["linking"] == "centers"
    near = [d for d in dups if d["layer"] == "near"]
    assert near, "the light edits are near duplicates"
    # Each member is verified at >= 0.9 against its center, so (Jaccard distance being a
    # metric) at >= 2 x 0.9 - 1 = 0.8 against its representative.
    for d in near:
        assert d["jaccard"] >= 0.8 - 1e-6
        assert d["jaccard"] == pytest.approx(jaccard(text[d["id"]], text[d["duplicate_of"]]),
                                             abs=2e-3)


def test_verify_off_turns_anchoring_and_minhash_off(tmp_path, corpus_file):
    path, _, _ = corpus_file
    out = tmp_path / "out"
    run(["dedup", path, "--out", out, "--quiet", "--verify", "off", "--clusters", "anchored"],
        check=0)
    _, dups, summary = read_out(out)
    p = summary["parameters"]
    assert (p["linking"], p["verify"], p["minhash"]) == ("star", None, None)
    assert all(d["distance"] <= 8 for d in dups if d["layer"] == "near")
    # The default (anchored) becomes star without verification too.
    run(["dedup", path, "--out", out, "--quiet", "--force", "--verify", "off"], check=0)
    assert read_out(out)[2]["parameters"]["linking"] == "star"
    # Centers need no verification: their links are then the pairs within k, so every member
    # is within k of its center and 2k of its representative.
    centers = tmp_path / "centers"
    run(["dedup", path, "--out", centers, "--quiet", "--verify", "off", "--clusters", "centers"],
        check=0)
    _, dups, summary = read_out(centers)
    assert (summary["parameters"]["linking"], summary["parameters"]["minhash"]) == ("centers",
                                                                                    None)
    assert all(d["distance"] <= 16 for d in dups if d["layer"] == "near")


def test_bad_minhash_spec_is_a_usage_error(tmp_path, corpus_file):
    path, _, _ = corpus_file
    r = run(["dedup", path, "--out", tmp_path / "out", "--minhash", "10by6"], check=2)
    assert b"--minhash" in r.stderr and b"BANDSxROWS" in r.stderr


def test_keep_policies_choose_the_representative(tmp_path):
    base = base_texts(1)[0]
    recs = [{"id": "a", "text": base, "time": 100, "score": 1},
            {"id": "b", "text": base + " The end.", "time": 300, "score": 5},
            {"id": "c", "text": base.upper(), "time": 200, "score": 9}]
    path = write_jsonl(tmp_path / "k.jsonl", recs)
    for keep, winner in (("first", "a"), ("longest", "b"), ("newest", "b"),
                         ("field:score", "c")):
        out = tmp_path / keep.replace(":", "_")
        run(["dedup", path, "--out", out, "--quiet", "--keep", keep, "-k", "10"], check=0)
        kept, dups, summary = read_out(out)
        assert [json.loads(l)["id"] for l in kept] == [winner], keep
        assert {d["duplicate_of"] for d in dups} == {winner}
        assert summary["parameters"]["keep"] == keep


def test_bad_record_fails_and_leaves_no_result(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": 1, "text": "fine"}\nnot json\n', encoding="utf-8")
    out = tmp_path / "out"
    proc = run(["dedup", path, "--out", out], check=1)
    assert b"bad.jsonl:2" in proc.stderr
    assert not out.exists()
    assert os.listdir(tmp_path) == ["bad.jsonl"]  # no temporary directory left behind


def test_missing_input_and_bad_flags(tmp_path):
    proc = run(["dedup", tmp_path / "nope.jsonl", "--out", tmp_path / "o"], check=1)
    assert b"nope.jsonl" in proc.stderr
    assert not (tmp_path / "o").exists()
    f = write_jsonl(tmp_path / "a.jsonl", [{"id": 1, "text": "x"}])
    for flags, needle in ((["--keep", "last"], b"--keep"), (["--verify", "cosine:1"], b"--verify"),
                          (["--layers", "url,foo"], b"foo")):
        proc = run(["dedup", f, "--out", tmp_path / "o", *flags], check=2)
        assert needle in proc.stderr
    run(["dedup", f], check=2)  # --out is required


def test_a_non_empty_out_is_refused_unless_force(tmp_path):
    f = write_jsonl(tmp_path / "a.jsonl", [{"id": 1, "text": "some text to keep around"}])
    out = tmp_path / "out"
    run(["dedup", f, "--out", out, "--quiet"], check=0)
    (out / "stale.txt").write_text("old")
    proc = run(["dedup", f, "--out", out, "--quiet"], check=2)
    assert b"not empty" in proc.stderr and b"--force" in proc.stderr
    assert (out / "stale.txt").exists()
    run(["dedup", f, "--out", out, "--quiet", "--force"], check=0)
    assert not (out / "stale.txt").exists() and (out / "summary.json").exists()
    other = tmp_path / "precious"
    other.mkdir()
    (other / "thesis.tex").write_text("keep me")
    proc = run(["dedup", f, "--out", other], check=2)
    assert b"refusing" in proc.stderr
    assert (other / "thesis.tex").read_text() == "keep me"


def test_stdin_batch_tsv_and_generated_ids(tmp_path):
    text = "A long enough line of plain text about the harbour and the storm.\n"
    data = text + "Something else entirely, about a library and a castle.\n" + text
    out = tmp_path / "out"
    run(["dedup", "--mode", "batch", "--input-format", "text", "--out", out, "--quiet"],
        input=data, check=0)
    assert (out / "kept.txt").read_text() == data.splitlines(keepends=True)[0] + \
        data.splitlines(keepends=True)[1]
    dups = [json.loads(l) for l in (out / "duplicates.jsonl").read_text().splitlines()]
    assert len(dups) == 1 and dups[0]["layer"] == "exact"
    assert not any(p.name.startswith("stdin") for p in out.iterdir())
    tsv = tmp_path / "in.tsv"
    tsv.write_text("x1\thello there general kenobi, a fine day\nx2\tHello there, general "
                   "Kenobi! A fine day\n")
    run(["dedup", tsv, "--out", tmp_path / "t", "--quiet"], check=0)
    assert (tmp_path / "t" / "kept.tsv").read_text() == tsv.read_text().splitlines(True)[0]


@pytest.mark.skipif(shutil.which("zstd") is None, reason="zstd command not installed")
def test_zstd_output_matches_plain(tmp_path, corpus_file):
    path, _, _ = corpus_file
    run(["dedup", path, "--out", tmp_path / "p", "--quiet"], check=0)
    run(["dedup", path, "--out", tmp_path / "z", "--quiet", "--zstd"], check=0)
    plain = (tmp_path / "p" / "kept.jsonl").read_bytes()
    unpacked = subprocess.run(["zstd", "-dc", tmp_path / "z" / "kept.jsonl.zst"],
                              stdout=subprocess.PIPE, check=True).stdout
    assert unpacked == plain


def test_report_is_escaped_and_summary_printed(tmp_path, corpus_file):
    path, _, _ = corpus_file
    out = tmp_path / "out"
    proc = run(["dedup", path, "--out", out, "-k", "12"], check=0)
    stdout = proc.stdout.decode()
    assert "documents read" in stdout and "kept" in stdout and str(out) in stdout
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html
    assert "&lt;script&gt;" in html or "script" not in html
    assert html.count("<svg") == 2
    assert "cluster" in html
