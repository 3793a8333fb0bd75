"""Input formats through the real CLI: TSV, CSV, text, WARC/WET, gzip, zstd, globs, stdin."""

import gzip
import json
import subprocess

from cli_harness import jsonl, run, write_jsonl
from warc_records import warc_record

TEXTS = [
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "Completely different: stock markets fell sharply on Tuesday morning.",
    "今天天气很好，我们去公园散步吧。",
]


def fingerprints(proc):
    return [o["fingerprint"] for o in jsonl(proc)]


def reference(tmp_path, texts=TEXTS, *opts):
    path = write_jsonl(tmp_path / "ref.jsonl", [{"id": i, "text": t} for i, t in enumerate(texts)])
    return fingerprints(run(["fingerprint", *opts, path], check=0))


def test_every_format_gives_the_same_fingerprints(tmp_path):
    ref = reference(tmp_path)
    tsv = tmp_path / "a.tsv"
    tsv.write_text("".join(f"t{i}\t{t}\n" for i, t in enumerate(TEXTS)))
    csv = tmp_path / "a.csv"
    csv.write_text("id,text\n" + "".join(f'c{i},"{t}"\n' for i, t in enumerate(TEXTS)))
    txt = tmp_path / "a.txt"
    txt.write_text("".join(t + "\n" for t in TEXTS))
    for path, ids in [(tsv, ["t0", "t1", "t2"]), (csv, ["c0", "c1", "c2"]), (txt, [1, 2, 3])]:
        out = jsonl(run(["fingerprint", path], check=0))
        assert [o["id"] for o in out] == ids, path
        assert [o["fingerprint"] for o in out] == ref, path


def test_tsv_escapes_decode(tmp_path):
    ref = reference(tmp_path, ["line one\nline two\twith tab"])
    tsv = tmp_path / "e.tsv"
    tsv.write_text("x\\ty\tline one\\nline two\\twith tab\n")
    out = jsonl(run(["fingerprint", tsv], check=0))
    assert out == [{"id": "x\ty", "fingerprint": ref[0]}]
    # TSV output escapes the id again.
    assert run(["fingerprint", "--format", "tsv", tsv], check=0).stdout.decode() == \
        f"x\\ty\t{ref[0]}\n"


def test_gzip_zstd_globs_and_multiple_inputs(tmp_path):
    ref = reference(tmp_path)
    data = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(TEXTS))
    (tmp_path / "part1.jsonl.gz").write_bytes(gzip.compress(data[: data.index("\n") + 1].encode())
                                              + gzip.compress(data[data.index("\n") + 1:].encode()))
    subprocess.run(["zstd", "-q", "-o", str(tmp_path / "part2.jsonl.zst")], input=data.encode(),
                   check=True)
    out = fingerprints(run(["fingerprint", tmp_path / "part*.jsonl.*"], check=0))
    assert out == ref + ref
    # pzstd (parallel zstd) writes a skippable frame before every frame.
    subprocess.run(["pzstd", "-q", "-p", "2", "-o", str(tmp_path / "parallel.jsonl.zst")],
                   input=data.encode() * 300, check=True)
    assert (tmp_path / "parallel.jsonl.zst").read_bytes()[:4] == b"\x50\x2a\x4d\x18"
    out = fingerprints(run(["fingerprint", tmp_path / "parallel.jsonl.zst"], check=0))
    assert out == ref * 300
    # Magic bytes, not the name: gzip data on stdin.
    assert fingerprints(run(["fingerprint"], input=gzip.compress(data.encode()), check=0)) == ref


def test_truncated_gzip_is_a_clear_error(tmp_path):
    data = "".join(json.dumps({"id": i, "text": f"text {i} " * 20}) + "\n" for i in range(5000))
    blob = gzip.compress(data.encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(blob[: len(blob) // 2])
    proc = run(["fingerprint", path], check=1)
    assert f"truncated gzip stream in {path}" in proc.stderr.decode()


def test_input_format_override_and_stdin_text(tmp_path):
    tsv = "a\tThe quick brown fox jumps over the lazy dog near the river bank.\n"
    out = jsonl(run(["fingerprint", "--input-format", "tsv"], input=tsv, check=0))
    assert out[0]["id"] == "a" and out[0]["fingerprint"] == reference(tmp_path)[0]
    out = jsonl(run(["fingerprint"], input="first line\n\nthird line\n", check=0))
    assert [o["id"] for o in out] == [1, 2, 3]
    assert out[1] == {"id": 2, "fingerprint": None, "status": "too_short"}


def test_custom_field_names(tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl", [{"key": "k1", "body": TEXTS[0], "text": "other"}])
    out = jsonl(run(["fingerprint", "--id-field", "key", "--text-field", "body", path], check=0))
    assert out == [{"id": "k1", "fingerprint": reference(tmp_path)[0]}]


def test_missing_ids_are_generated(tmp_path):
    path = tmp_path / "noid.jsonl"
    path.write_text('{"text":"one two three"}\n\n{"text":"four five six"}\n')
    assert [o["id"] for o in jsonl(run(["fingerprint", path], check=0))] == \
        [f"{path}:1", f"{path}:3"]


def test_warc_responses_are_html_and_wet_conversions_text(tmp_path):
    text = TEXTS[0]
    html = f"<html><head><style>p {{color: red}}</style></head><body><p>{text}</p></body></html>"
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html.encode()
    warc = tmp_path / "crawl.warc.gz"
    warc.write_bytes(
        gzip.compress(warc_record("warcinfo", "<urn:uuid:0>", "", b"software: hand")) +
        gzip.compress(warc_record("request", "<urn:uuid:1>", "http://a/", b"GET / HTTP/1.1\r\n\r\n")) +
        gzip.compress(warc_record("response", "<urn:uuid:2>", "http://a/", http)))
    out = jsonl(run(["fingerprint", warc], check=0))
    assert out == [{"id": "<urn:uuid:2>", "fingerprint": reference(tmp_path)[0]}]

    wet = tmp_path / "crawl.warc.wet"
    wet.write_bytes(warc_record("conversion", "<urn:uuid:3>", "http://b/", TEXTS[1].encode()))
    out = jsonl(run(["fingerprint", wet], check=0))
    assert out == [{"id": "<urn:uuid:3>", "fingerprint": reference(tmp_path)[1]}]
