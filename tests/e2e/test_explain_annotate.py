"""`simdup explain` reproduces `simdup dedup`'s decisions; `simdup dedup --annotate`."""

import csv
import io
import json

import pytest

from cli_harness import SOURCE_DIR, run

SAMPLE = SOURCE_DIR / "data" / "sample" / "news.jsonl"


def dedup(out, *extra, src=SAMPLE):
    run(["dedup", src, "--out", out, "-q", *extra], check=0)
    dups = [json.loads(l) for l in (out / "duplicates.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    return dups, summary


def explain_ids(out, a, b, *extra):
    proc = run(["explain", "--json", "--top", "1", "--dedup-out", out, a, b, *extra], check=0)
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    return out, *dedup(out, "--annotate")


@pytest.fixture(scope="module")
def centers_run(tmp_path_factory):
    """Clusters around centers (not the default): members joined through a center."""
    out = tmp_path_factory.mktemp("centers") / "out"
    return out, *dedup(out, "--clusters", "centers")


@pytest.fixture(params=["anchored", "centers"])
def clustered_run(request, sample_run, centers_run):
    return request.param, (sample_run if request.param == "anchored" else centers_run)


def test_explain_equals_dedup_for_its_duplicates(clustered_run):
    clustering, (out, dups, summary) = clustered_run
    k = summary["parameters"]["k"]
    near = [d for d in dups if d["layer"] == "near"]
    exact = [d for d in dups if d["layer"] != "near"]
    assert near and exact, "the sample has near and exact duplicates"
    # Every exact-layer duplicate, and near ones spread over the run (the farthest included).
    near.sort(key=lambda d: (d["distance"], d["id"]))
    picks = exact[:8] + near[:: max(1, len(near) // 16)] + near[-2:]
    picks += [d for d in near if d.get("jaccard", 1.0) < 0.8][:4]
    direct = joined = 0
    for d in picks:
        e = explain_ids(out, d["id"], d["duplicate_of"])
        assert e["a"]["id"] == d["id"] and e["b"]["id"] == d["duplicate_of"]
        assert e["distance"] == d["distance"], d
        # The run's own decisions, read back from duplicates.jsonl, whatever the pair's relation.
        assert e["run"] == {"a": {"kept": False, "duplicate_of": d["duplicate_of"],
                                  "layer": d["layer"]},
                            "b": {"kept": True}, "same_cluster": True}, (d, e)
        if "jaccard" in d:
            assert e["jaccard"] == pytest.approx(d["jaccard"], abs=1e-4), d
        if d["layer"] != "near":
            assert e["duplicate"] and e["layer"] == d["layer"], (d, e)
        elif e["duplicate"]:
            # A pair dedup could link directly (a candidate verified at >= 0.8): explain links
            # it the same way.
            direct += 1
            assert e["layer"] == "near" and e["jaccard"] >= 0.8, (d, e)
            assert d["distance"] <= k or e["minhash_candidate"], (d, e)
        else:
            # Clusters around centers join a member to its representative through the center
            # it was verified against (>= 0.8), so the pair itself is at least 2 x 0.8 - 1.
            joined += 1
            assert e["jaccard"] >= 0.6 and e["layer"] is None, (d, e)
    # Anchored clusters (the default) verify every member against its representative, so explain
    # links each pair directly; centers join some through the center.
    assert direct > 0 and (joined > 0 if clustering == "centers" else joined == 0)


def test_explain_rejects_pairs_dedup_keeps_apart(sample_run):
    out, dups, _ = sample_run
    kept_ids = [json.loads(l)["id"] for l in (out / "kept.jsonl").read_text().splitlines()]
    # Two kept documents are never linked by explain under the run's profile.
    for a, b in [(kept_ids[0], kept_ids[1]), (kept_ids[5], kept_ids[-1])]:
        e = explain_ids(out, a, b)
        assert not e["duplicate"] and e["layer"] is None, e
        assert e["run"] == {"a": {"kept": True}, "b": {"kept": True}, "same_cluster": False}


def test_explain_says_how_the_run_joined_a_pair_it_does_not_link(centers_run):
    out, dups, _ = centers_run
    joined = next(d for d in dups if d["layer"] == "near" and d.get("jaccard", 1.0) < 0.8)
    proc = run(["explain", "--top", "1", "--dedup-out", out, joined["id"], joined["duplicate_of"]],
               check=0)
    text = proc.stdout.decode()
    assert "decision: not linked" in text
    assert (f"in the run: A dropped (near duplicate of {joined['duplicate_of']}); B kept; one "
            "cluster (joined through another member") in text


def test_explain_refuses_a_malformed_duplicates_file(sample_run, tmp_path):
    out, dups, _ = sample_run
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "summary.json").write_bytes((out / "summary.json").read_bytes())
    (broken / "duplicates.jsonl").write_text('{"id": "x", "duplicate_of": "y"}\n')
    proc = run(["explain", "--dedup-out", broken, dups[0]["id"], dups[0]["duplicate_of"]],
               check=1)
    assert b"duplicates.jsonl:1: not a duplicates record" in proc.stderr


def test_explain_finds_numeric_ids_as_written(tmp_path):
    # Numeric ids keep their text through dedup (1.5, past int64); explain matches them so.
    text = ("the quick brown fox jumps over the lazy dog and keeps running through the forest "
            "until night falls on the quiet valley below")
    src = tmp_path / "numeric.jsonl"
    src.write_text(f'{{"id": 1.5, "text": "{text}"}}\n'
                   f'{{"id": 18446744073709551615, "text": "{text}!"}}\n')
    out = tmp_path / "out"
    dups, _ = dedup(out, src=src)
    assert [(str(d["id"]), str(d["duplicate_of"])) for d in dups] == [
        ("18446744073709551615", "1.5")]
    e = explain_ids(out, "18446744073709551615", "1.5")
    assert e["run"] == {"a": {"kept": False, "duplicate_of": "1.5", "layer": dups[0]["layer"]},
                        "b": {"kept": True}, "same_cluster": True}


def test_explain_takes_the_stream_runs_parameters(tmp_path):
    out = tmp_path / "stream"
    dups, summary = dedup(out, "--mode", "stream", "-k", "5")
    assert summary["parameters"]["mode"] == "stream" and summary["parameters"]["k"] == 5
    for d in [d for d in dups if d["layer"] == "near"][:5]:
        e = explain_ids(out, d["id"], d["duplicate_of"])
        assert e["distance"] == d["distance"] <= 5 and e["duplicate"], (d, e)
        assert not e["minhash_candidate"]  # stream mode has no MinHash
        assert e["jaccard"] == pytest.approx(d["jaccard"], abs=1e-4)


def test_explain_detects_html_and_uses_dedups_min_features():
    text = ("Simdup finds near duplicate documents in large crawls by comparing SimHash "
            "fingerprints and verifying the candidates with shingle Jaccard similarity.")
    page = f"<html><head><script>var x = 1;</script></head><body><p>{text}</p></body></html>"
    e = json.loads(run(["explain", "--json", "--jsonl", json.dumps({"id": "p", "text": page}),
                        json.dumps({"id": "t", "text": text})], check=0).stdout)
    # As dedup: the page is read as HTML, so it has the plain text's content.
    assert e["a"]["html"] and not e["b"]["html"]
    assert e["a"]["id"] == "p" and e["distance"] == 0
    assert e["duplicate"] and e["layer"] == "exact"
    # Under dedup's --min-features 10 a five-letter text is short: no fingerprint, no near link.
    e = json.loads(run(["explain", "--json", "hello", "hallo"], check=0).stdout)
    assert e["a"]["status"] == "too_short" and e["distance"] is None and not e["duplicate"]
    e = json.loads(run(["explain", "--json", "--min-features", "1", "hello", "hello"],
                       check=0).stdout)
    assert e["distance"] == 0 and e["layer"] == "exact"


def test_explain_decision_follows_the_profile_flags():
    a = "the quick brown fox jumps over the lazy dog while the farmer sleeps in the barn"
    b = "the quick brown fox jumps over the lazy cat while the farmer sleeps in the barn"
    e = json.loads(run(["explain", "--json", a, b], check=0).stdout)
    assert e["distance"] is not None and 0 < e["jaccard"] < 1
    verified = e["jaccard"] >= 0.8 and (e["distance"] <= 8 or e["minhash_candidate"])
    assert e["duplicate"] == verified
    # A threshold above the pair's Jaccard rejects it, naming the rule.
    t = min(1.0, round(e["jaccard"] + 0.01, 2))
    r = json.loads(run(["explain", "--json", "--verify", f"jaccard:{t}", "-k", "32", a, b],
                       check=0).stdout)
    assert not r["duplicate"] and "verify threshold" in r["reason"]
    # Without verification, within k is enough.
    r = json.loads(run(["explain", "--json", "--verify", "off", "-k", "32", a, b], check=0).stdout)
    assert r["duplicate"] and r["jaccard"] is None and "no verification" in r["reason"]
    # Library messages become flag names; the profile is validated once.
    proc = run(["explain", "--minhash", "10by6", a, b], check=2)
    assert b"--minhash: expected" in proc.stderr
    run(["explain", "--dedup-out", "/nonexistent", "x", "y"], check=2)


def test_explain_unknown_id_is_an_error(sample_run):
    out, _, _ = sample_run
    proc = run(["explain", "--dedup-out", out, "doc-00001", "no-such-id"], check=1)
    assert b"no record with id no-such-id" in proc.stderr


def annotated_rows(out):
    return [json.loads(l) for l in (out / "annotated.jsonl").read_text().splitlines()]


def check_annotations(out, src, dups, summary):
    inputs = [json.loads(l) for l in src.read_text().splitlines() if l.strip()]
    rows = annotated_rows(out)
    # Every input record exactly once, in input order, unchanged but for the "simdup" object.
    assert len(rows) == len(inputs) == summary["documents"]["read"]
    for row, rec in zip(rows, inputs):
        note = row.pop("simdup")
        assert row == rec
        assert set(note) == {"keep", "cluster", "duplicate_of", "distance", "layer", "jaccard"}
    by_id = {d["id"]: d for d in dups}
    kept = 0
    for position, row in enumerate(annotated_rows(out)):
        note = row["simdup"]
        if note["keep"]:
            kept += 1
            assert row["id"] not in by_id
            assert note == {"keep": True, "cluster": position, "duplicate_of": None,
                            "distance": None, "layer": "kept", "jaccard": None}
        else:
            d = by_id[row["id"]]
            assert note["duplicate_of"] == d["duplicate_of"] and note["cluster"] == d["cluster"]
            assert note["distance"] == d["distance"] and note["layer"] == d["layer"]
            assert note["jaccard"] == d.get("jaccard")
    assert kept == summary["documents"]["kept"]
    assert len(rows) - kept == summary["documents"]["duplicates"] == len(dups)


def test_annotate_batch_every_record_once_with_dedups_values(sample_run):
    out, dups, summary = sample_run
    check_annotations(out, SAMPLE, dups, summary)
    kept = [json.loads(l) for l in (out / "kept.jsonl").read_text().splitlines()]
    assert [r for r in annotated_rows(out) if r.pop("simdup")["keep"]] == kept


def test_annotate_stream_mode_and_zstd(tmp_path):
    out = tmp_path / "s"
    dups, summary = dedup(out, "--mode", "stream", "--annotate")
    check_annotations(out, SAMPLE, dups, summary)
    z = tmp_path / "z"
    run(["dedup", SAMPLE, "--out", z, "-q", "--annotate", "--zstd"], check=0)
    assert (z / "annotated.jsonl.zst").exists() and not (z / "annotated.jsonl").exists()


def test_annotate_csv_and_tsv(tmp_path):
    text = "a long enough text about the weather in spring, with rain and some sun"
    records = [("1", text), ("2", text + "!"), ("3", "something else entirely, about cars, "
                                                      "engines and the roads they drive on")]
    src = tmp_path / "in.csv"
    src.write_text("id,text\n" + "".join(f'{i},"{t}"\n' for i, t in records))
    run(["dedup", src, "--out", tmp_path / "c", "-q", "--annotate"], check=0)
    rows = list(csv.reader(io.StringIO((tmp_path / "c" / "annotated.csv").read_text())))
    assert rows[0] == ["id", "text", "simdup_keep", "simdup_cluster", "simdup_duplicate_of",
                       "simdup_distance", "simdup_layer", "simdup_jaccard"]
    assert rows[1] == ["1", text, "true", "0", "", "", "kept", ""]
    assert rows[2] == ["2", text + "!", "false", "0", "1", "0", "exact", ""]
    assert rows[3][2:] == ["true", "2", "", "", "kept", ""]

    src = tmp_path / "in.tsv"
    src.write_text("".join(f"{i}\t{t}\n" for i, t in records))
    run(["dedup", src, "--out", tmp_path / "t", "-q", "--annotate"], check=0)
    lines = (tmp_path / "t" / "annotated.tsv").read_text().splitlines()
    assert lines[1] == f"false\t0\t1\t0\texact\t\t2\t{text}!"
    # The six columns come first: cutting them gives the input back.
    assert ["\t".join(l.split("\t")[6:]) for l in lines] == src.read_text().splitlines()


def test_annotate_refuses_plain_text_and_leaves_no_output(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("one line of text that is long enough to fingerprint\n")
    proc = run(["dedup", src, "--out", tmp_path / "o", "--annotate"], check=2)
    assert b"--annotate writes JSONL, CSV, TSV and Parquet records" in proc.stderr
    assert not (tmp_path / "o").exists()
