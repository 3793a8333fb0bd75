"""`simdup dedup` on every kind of input, and on inputs that break: WARC/WET, .gz/.zst, several
inputs and globs, field names, the title layer, invalid UTF-8, --on-error skip in stream mode,
truncated .gz, missing files and directories, SIGTERM/SIGINT and SIGKILL during a run."""

import gzip
import json
import os
import shutil
import signal
import subprocess
import time
import zlib

import pytest

from cli_harness import run, simdup_bin, snapshot, write_jsonl
from dedup_corpus import base_texts
from warc_records import http_page, warc_record

TEXTS = base_texts(8, seed=11)


def read_out(out, kept_name="kept.jsonl"):
    kept = (out / kept_name).read_bytes()
    dups = [json.loads(l) for l in (out / "duplicates.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    return kept, dups, summary


def accounted(summary):
    d = summary["documents"]
    return d["read"] == d["kept"] + d["duplicates"] + d["skipped"]


def staging_dirs(parent):
    return sorted(p.name for p in parent.iterdir() if ".tmp-" in p.name or ".init-" in p.name)


def test_warc_and_wet_inputs_keep_records_byte_for_byte(tmp_path):
    a = warc_record("response", "<urn:a>", "http://a.example/", http_page(f"<p>{TEXTS[0]}</p>"))
    a_copy = warc_record("response", "<urn:a2>", "http://mirror.example/a", http_page(f"<p>{TEXTS[0]}</p>"))
    b = warc_record("response", "<urn:b>", "http://b.example/", http_page(f"<p>{TEXTS[1]}</p>"))
    (tmp_path / "crawl.warc.gz").write_bytes(b"".join(gzip.compress(r) for r in (
        warc_record("warcinfo", "<urn:info>", "", b"software: hand"),
        warc_record("request", "<urn:req>", "http://a.example/", b"GET / HTTP/1.1\r\n\r\n"),
        a, a_copy, b)))
    c = warc_record("conversion", "<urn:c>", "http://c.example/", TEXTS[2].encode())
    c_copy = warc_record("conversion", "<urn:c2>", "http://c2.example/", TEXTS[2].encode())
    (tmp_path / "crawl.warc.wet").write_bytes(c + c_copy)
    out = tmp_path / "out"
    run(["dedup", str(tmp_path / "crawl.warc*"), "--out", out, "-q"], check=0)
    kept, dups, summary = read_out(out, "kept.warc")
    assert kept == a + b + c  # warcinfo and request records are not documents
    assert {(d["id"], d["duplicate_of"], d["layer"]) for d in dups} == {
        ("<urn:a2>", "<urn:a>", "exact"), ("<urn:c2>", "<urn:c>", "exact")}
    assert summary["documents"]["read"] == 5 and accounted(summary)
    assert summary["parameters"]["output_format"] == "warc"


@pytest.mark.skipif(shutil.which("zstd") is None, reason="zstd command not installed")
def test_gz_zst_and_globs_give_file_line_ids(tmp_path):
    one = "".join(t + "\n" for t in TEXTS[:3])
    two = TEXTS[3] + "\n" + TEXTS[0] + "\n"  # line 2 copies part-1's line 1
    (tmp_path / "part-1.txt.gz").write_bytes(gzip.compress(one.encode()))
    (tmp_path / "part-2.txt").write_text(two)
    subprocess.run(["zstd", "-q", str(tmp_path / "part-2.txt"), "-o",
                    str(tmp_path / "part-2.txt.zst")], check=True)
    (tmp_path / "part-2.txt").unlink()
    out = tmp_path / "out"
    run(["dedup", str(tmp_path / "part-*"), "--out", out, "-q"], check=0)
    kept, dups, summary = read_out(out, "kept.txt")
    assert kept.decode() == one + TEXTS[3] + "\n"
    first = str(tmp_path / "part-1.txt.gz")
    second = str(tmp_path / "part-2.txt.zst")
    assert dups == [{"id": f"{second}:2", "duplicate_of": f"{first}:1", "cluster": 0,
                     "distance": 0, "layer": "exact"}]
    assert summary["documents"]["read"] == 5 and accounted(summary)


def test_field_name_options(tmp_path):
    records = [
        {"key": "a", "body": TEXTS[0], "link": "https://x.example/1", "ts": "2024-01-01"},
        {"key": "b", "body": TEXTS[1], "link": "https://www.x.example/1?utm_source=y",
         "ts": "2024-03-01"},
        {"key": "c", "body": TEXTS[2], "headline": "Same headline", "ts": "2024-01-01"},
        {"key": "d", "body": TEXTS[3], "headline": "Same headline", "ts": "2023-01-01"},
    ]
    path = write_jsonl(tmp_path / "in.jsonl", records)
    out = tmp_path / "out"
    run(["dedup", path, "--out", out, "-q", "--id-field", "key", "--text-field", "body",
         "--url-field", "link", "--title-field", "headline", "--time-field", "ts",
         "--keep", "newest", "--layers", "url,title,exact,near"], check=0)
    kept, dups, _ = read_out(out)
    assert [json.loads(l)["key"] for l in kept.decode().splitlines()] == ["b", "c"]
    assert {(d["id"], d["duplicate_of"], d["layer"]) for d in dups} == {
        ("a", "b", "url"), ("d", "c", "title")}
    # Without --text-field the records have no text: bad records, named with their line.
    proc = run(["dedup", path, "--out", tmp_path / "o2", "--id-field", "key"], check=1)
    assert f"{path}:1".encode() in proc.stderr
    assert not (tmp_path / "o2").exists()


def test_title_layer_is_opt_in(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [
        {"id": 1, "title": "Council approves the budget", "text": TEXTS[4]},
        {"id": 2, "title": "COUNCIL approves the budget!", "text": TEXTS[5]},
    ])
    run(["dedup", path, "--out", tmp_path / "t", "-q", "--layers", "url,title,exact,near"],
        check=0)
    kept, dups, summary = read_out(tmp_path / "t")
    assert len(kept.splitlines()) == 1
    assert dups == [{"id": 2, "duplicate_of": 1, "cluster": 0, "distance": dups[0]["distance"],
                     "layer": "title"}]
    assert summary["duplicates_by_layer"]["title"] == 1
    run(["dedup", path, "--out", tmp_path / "n", "-q"], check=0)
    kept, dups, _ = read_out(tmp_path / "n")
    assert len(kept.splitlines()) == 2 and dups == []


def test_invalid_utf8_is_counted_and_kept_bytes_unchanged(tmp_path):
    raw = (TEXTS[6].encode() + b" caf\xe9 \xff\xfe end\n" + TEXTS[7].encode() + b"\n")
    path = tmp_path / "in.txt"
    path.write_bytes(raw)
    run(["dedup", path, "--out", tmp_path / "o", "-q"], check=0)
    kept, dups, summary = read_out(tmp_path / "o", "kept.txt")
    assert kept == raw and dups == []
    assert summary["documents"]["invalid_utf8"] >= 2


def test_stream_mode_on_stdin_with_on_error_skip(tmp_path):
    lines = [json.dumps({"id": i, "text": t}) for i, t in enumerate(TEXTS[:4])]
    data = "\n".join([lines[0], "{broken", lines[1], json.dumps({"id": 9}), lines[2],
                      lines[0].replace('"id": 0', '"id": 10'), lines[3]]) + "\n"
    out = tmp_path / "out"
    proc = run(["dedup", "--out", out, "--on-error", "skip"], input=data, check=3)
    assert b"stdin:2" in proc.stderr and b"stdin:4" in proc.stderr
    kept, dups, summary = read_out(out)
    assert summary["parameters"]["mode"] == "stream"
    assert kept.decode() == "".join(l + "\n" for l in lines)
    assert [(d["id"], d["duplicate_of"]) for d in dups] == [(10, 0)]
    assert summary["documents"]["skipped"] == 2 and accounted(summary)
    # Quiet: no per-record messages, the counts stay.
    proc = run(["dedup", "--out", out, "--force", "--on-error", "skip", "-q"], input=data,
               check=3)
    assert proc.stderr == b"" and proc.stdout == b""
    assert read_out(out)[2]["documents"]["skipped"] == 2


def truncated_gzip(tmp_path, n=40):
    """A .jsonl.gz cut inside its compressed stream; returns the path and the records a
    decompressor can still fully recover (complete lines before the cut)."""
    records = [{"id": f"t{i}", "text": f"{TEXTS[i % 8]} variant {i} " * 3} for i in range(n)]
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    packed = gzip.compress(data)
    cut = packed[: len(packed) * 2 // 3]
    path = tmp_path / "trunc.jsonl.gz"
    path.write_bytes(cut)
    partial = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut)
    complete = partial[: partial.rfind(b"\n") + 1].decode().splitlines()
    assert 0 < len(complete) < n
    return path, [json.loads(l)["id"] for l in complete]


@pytest.fixture
def earlier_result(tmp_path):
    keep = write_jsonl(tmp_path / "keep.jsonl", [{"id": "k", "text": TEXTS[0]}])
    out = tmp_path / "out"
    run(["dedup", keep, "--out", out, "-q"], check=0)
    before = snapshot(out)
    return keep, out, before


@pytest.mark.parametrize("mode", ["batch", "stream"])
def test_truncated_gz_with_skip_keeps_the_records_before_the_cut(tmp_path, earlier_result, mode):
    keep, out, _ = earlier_result
    trunc, recovered = truncated_gzip(tmp_path)
    proc = run(["dedup", keep, trunc, "--out", out, "--force", "--on-error", "skip", "--mode", mode],
               check=3)
    assert f"{trunc}:{len(recovered) + 1}: truncated gzip".encode() in proc.stderr
    kept, dups, summary = read_out(out)
    ids = [json.loads(l)["id"] for l in kept.decode().splitlines()] + [d["id"] for d in dups]
    assert sorted(ids) == sorted(["k"] + recovered)
    assert summary["skipped_reasons"] == {"truncated_input": 1}
    assert accounted(summary)
    assert staging_dirs(tmp_path) == []


def test_truncated_gz_fails_by_default_and_leaves_dir_untouched(tmp_path, earlier_result):
    keep, out, before = earlier_result
    trunc, recovered = truncated_gzip(tmp_path)
    proc = run(["dedup", keep, trunc, "--out", out, "--force"], check=1)
    assert f"{trunc}:{len(recovered) + 1}: truncated gzip".encode() in proc.stderr
    assert snapshot(out) == before
    assert staging_dirs(tmp_path) == []


def test_missing_file_and_directory_inputs(tmp_path, earlier_result):
    keep, out, before = earlier_result
    missing = tmp_path / "nonexist.jsonl"
    folder = tmp_path / "folder"
    folder.mkdir()
    for bad in (missing, folder, tmp_path / "none-*.jsonl"):
        proc = run(["dedup", keep, bad, "--out", out, "--force"], check=1)
        assert str(bad).encode() in proc.stderr
        assert snapshot(out) == before
        assert staging_dirs(tmp_path) == []
    proc = run(["dedup", keep, missing, folder, "--out", out, "--force", "--on-error", "skip"], check=3)
    assert str(missing).encode() in proc.stderr and str(folder).encode() in proc.stderr
    kept, dups, summary = read_out(out)
    assert [json.loads(l)["id"] for l in kept.decode().splitlines()] == ["k"]
    assert summary["skipped_reasons"] == {"missing_file": 1, "not_a_file": 1}
    # Inputs are not records: the two are skipped inputs, and the one record was read.
    assert summary["inputs"] == {"count": 3, "skipped": 2}
    assert summary["documents"]["skipped"] == 0 and summary["documents"]["read"] == 1
    assert accounted(summary)


def test_fingerprint_treats_failed_inputs_the_same_way(tmp_path):
    keep = write_jsonl(tmp_path / "keep.jsonl", [{"id": "k", "text": TEXTS[0]}])
    trunc, recovered = truncated_gzip(tmp_path)
    missing = tmp_path / "nonexist.jsonl"
    proc = run(["fingerprint", keep, missing, trunc], check=1)
    assert str(missing).encode() in proc.stderr
    proc = run(["fingerprint", keep, trunc, missing, "--on-error", "skip"], check=3)
    assert [json.loads(l)["id"] for l in proc.stdout.decode().splitlines()] == ["k"] + recovered
    assert b"missing_file: 1" in proc.stderr and b"truncated_input: 1" in proc.stderr


def start_on_stdin(out, *flags):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    return subprocess.Popen([simdup_bin(), "dedup", "--out", str(out), "--force", "-q",
                             "--input-format", "jsonl", *flags],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


def feed_until(proc, ready, deadline=20.0):
    """Writes records to the process until ready() holds (its staging directory is there)."""
    line = (json.dumps({"id": 1, "text": TEXTS[0]}) + "\n").encode()
    end = time.monotonic() + deadline
    while not ready():
        assert proc.poll() is None and time.monotonic() < end
        proc.stdin.write(line * 50)
        proc.stdin.flush()
        time.sleep(0.05)


@pytest.mark.parametrize("sig, mode", [(signal.SIGTERM, "batch"), (signal.SIGINT, "stream")])
def test_signal_removes_the_staging_directory(tmp_path, earlier_result, sig, mode):
    _, out, before = earlier_result
    proc = start_on_stdin(out, "--mode", mode)
    # Stdin stays open: the run is waiting for more input when the signal comes.
    feed_until(proc, lambda: staging_dirs(tmp_path) != [])
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + sig, err
    assert b"interrupted by " + signal.Signals(sig).name.encode() in err
    assert staging_dirs(tmp_path) == []
    assert snapshot(out) == before


def test_a_later_run_removes_the_staging_directory_of_a_killed_one(tmp_path, earlier_result):
    keep, out, before = earlier_result
    doomed = start_on_stdin(out, "--mode", "batch")
    feed_until(doomed, lambda: any((tmp_path / d / "stdin.spool").exists()
                                   for d in staging_dirs(tmp_path)))
    [doomed_dir] = staging_dirs(tmp_path)
    # A second, live run for the same DIR: its staging directory must survive the cleanup.
    live = start_on_stdin(out, "--mode", "batch")
    feed_until(live, lambda: len(staging_dirs(tmp_path)) == 2)
    doomed.kill()
    doomed.communicate(timeout=20)
    assert doomed_dir in staging_dirs(tmp_path) and doomed_dir.startswith("out.tmp-")
    assert snapshot(out) == before
    proc = run(["dedup", keep, "--out", out, "--force"], check=0)
    assert f"removed {tmp_path / doomed_dir}".encode() in proc.stderr
    [live_dir] = staging_dirs(tmp_path)
    assert live_dir != doomed_dir
    _, err = live.communicate(timeout=60)  # closes its stdin: the live run finishes
    assert live.returncode == 0, err
    assert staging_dirs(tmp_path) == []
