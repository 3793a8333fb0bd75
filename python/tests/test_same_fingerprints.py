"""One record, one fingerprint: `simdup fingerprint` over JSONL, TSV (with escapes) and plain
text, `simdup dedup` (its distances) and the Python package agree, HTML pages in JSONL included
(issue 14: the CLI and the dedup job used to decide differently whether a text is HTML).
"""

import json

import simdup

from conftest import jsonl_lines, run_cli

PAGE_TEXT = "The harbour was closed on Tuesday after the storm damaged the northern breakwater."
RECORDS = [
    # An HTML page stored as JSONL (a crawl) and its plain-text repost: the same content.
    {"id": "page", "text": "<!DOCTYPE html><html><head><style>p {color: red}</style></head>"
                           "<body><p>" + PAGE_TEXT +
                           "</p><script>var tracking = 1;</script></body></html>"},
    {"id": "repost", "text": PAGE_TEXT},
    {"id": "library", "text": "A new library opened in the old town hall, with a reading room "
                              "and a children's corner."},
    {"id": "library-2", "text": "A new library opened in the old town hall with a reading room "
                                "and a corner for children!"},
    # TSV escapes \t \n \\ decode; a backslash before any other character stays.
    {"id": "escapes", "text": "Farmers\tin the valley\nreport a C:\\harvest \\q of cherries."},
]
HTML_IDS = {"page"}


def tsv_escape(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def fingerprints_of(proc):
    out = {}
    for rec in jsonl_lines(proc.stdout):
        assert rec.get("status", "ok") == "ok", rec
        out[rec["id"]] = int(rec["fingerprint"], 16)
    return out


def test_every_command_gives_a_record_the_same_fingerprint(tmp_path):
    jsonl = tmp_path / "records.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    tsv = tmp_path / "records.tsv"
    tsv.write_text("".join(f"{r['id']}\t{tsv_escape(r['text'])}\n" for r in RECORDS),
                   encoding="utf-8")
    plain = [r for r in RECORDS if "\n" not in r["text"] and "\t" not in r["text"]]
    txt = tmp_path / "records.txt"
    txt.write_text("".join(r["text"] + "\n" for r in plain), encoding="utf-8")

    from_jsonl = fingerprints_of(run_cli(["fingerprint", jsonl]))
    assert sorted(from_jsonl) == sorted(r["id"] for r in RECORDS)
    assert fingerprints_of(run_cli(["fingerprint", tsv])) == from_jsonl
    from_txt = fingerprints_of(run_cli(["fingerprint", txt]))
    assert {r["id"]: from_txt[i + 1] for i, r in enumerate(plain)} == {
        r["id"]: from_jsonl[r["id"]] for r in plain}

    # The page is HTML: its tags, style and script are not content, so it equals its repost.
    assert from_jsonl["page"] == from_jsonl["repost"]

    # Python: texts are given decoded; HTML is a flag there (no record to look at).
    for r in RECORDS:
        fp, status = simdup.Fingerprinter(html=r["id"] in HTML_IDS).fingerprint_one(r["text"])
        assert (fp, status) == (from_jsonl[r["id"]], simdup.OK), r["id"]

    # dedup: every duplicate's distance is the distance of the two fingerprints above.
    out = tmp_path / "out"
    run_cli(["dedup", jsonl, "--out", out, "-k", "32", "--verify", "off", "--min-features", "1",
             "-q"])
    duplicates = jsonl_lines((out / "duplicates.jsonl").read_bytes())
    assert {d["id"] for d in duplicates} >= {"repost", "library-2"}
    for d in duplicates:
        expected = bin(from_jsonl[d["id"]] ^ from_jsonl[d["duplicate_of"]]).count("1")
        assert d["distance"] == expected, d


def test_pairs_reads_tsv_ids_as_the_readers_do(tmp_path):
    # An unknown escape (\q) keeps its backslash, as in a TSV of documents.
    fps = tmp_path / "fp.tsv"
    fps.write_text("a\\qb\t0000000000000000\nc\\td\t0000000000000001\n", encoding="utf-8")
    pairs = jsonl_lines(run_cli(["pairs", "--k", "1", fps]).stdout)
    assert [(p["a"], p["b"]) for p in pairs] == [("a\\qb", "c\td")]
    docs = tmp_path / "docs.tsv"
    docs.write_text("a\\qb\tsome text of the first document\n", encoding="utf-8")
    assert list(fingerprints_of(run_cli(["fingerprint", docs]))) == ["a\\qb"]
