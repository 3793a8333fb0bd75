"""`simdup dedup --verify` keeps shingle arrays in a temporary file: where it goes, what a write
failure does; and `--keep field:NAME` on inputs other than JSONL."""

import csv
import io
import json
import os
import resource
import signal
import subprocess

from cli_harness import run, simdup_bin, write_jsonl
from dedup_corpus import base_texts


def big_corpus(tmp_path, n=300):
    # 300 distinct articles of ~12 sentences: ~1 MB of verification arrays on disk.
    records = [{"id": i, "text": t} for i, t in enumerate(base_texts(n, seed=3, sentences=30))]
    return write_jsonl(tmp_path / "big.jsonl", records), records


def test_tmp_dir_holds_nothing_after_the_run(tmp_path):
    path, records = big_corpus(tmp_path, 40)
    spill = tmp_path / "spill"
    spill.mkdir()
    out = tmp_path / "out"
    run(["dedup", path, "--out", out, "--quiet", "--tmp-dir", spill], check=0)
    assert os.listdir(spill) == []
    assert sorted(os.listdir(out)) == ["duplicates.jsonl", "index", "kept.jsonl",
                                       "report.html", "summary.json"]
    proc = run(["dedup", path, "--out", out, "--force", "--tmp-dir", tmp_path / "missing"],
               check=1)
    assert b"missing" in proc.stderr and b"--tmp-dir" in proc.stderr


def test_spill_write_failure_fails_cleanly(tmp_path):
    path, _ = big_corpus(tmp_path)
    out = tmp_path / "out"

    def limit_file_size():
        # Writes beyond 64 KiB fail with EFBIG instead of killing the process.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))

    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    proc = subprocess.run([simdup_bin(), "dedup", str(path), "--out", str(out), "--quiet",
                           "--mode", "batch"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                          preexec_fn=limit_file_size, env=env)
    assert proc.returncode == 1, proc.stderr.decode(errors="replace")
    # Before any chunk was whole in the resume journal: nothing is kept to resume.
    assert b"cannot write the temporary file of --verify" in proc.stderr, proc.stderr
    assert b"File too large" in proc.stderr
    assert not out.exists()
    assert os.listdir(tmp_path) == ["big.jsonl"]  # no staging directory left behind


def test_keep_field_reads_csv_columns_by_header(tmp_path):
    base = base_texts(1)[0]
    rows = [["id", "score", "text"],
            ["a", "1", base],
            ["b", "9", base + ' And "quoted", with commas.'],
            ["c", "5", base.upper()]]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path = tmp_path / "k.csv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    out = tmp_path / "out"
    run(["dedup", path, "--out", out, "--quiet", "--keep", "field:score", "-k", "10"], check=0)
    kept = (out / "kept.csv").read_text(encoding="utf-8").splitlines()
    assert kept[0] == "id,score,text"
    assert [r[0] for r in csv.reader(kept[1:])] == ["b"]
    dups = [json.loads(l) for l in (out / "duplicates.jsonl").read_text().splitlines()]
    assert {d["duplicate_of"] for d in dups} == {"b"}
    # Stream mode writes kept records as it goes: the header row comes first there too.
    run(["dedup", path, "--out", out, "--force", "--quiet", "--mode", "stream", "-k", "10"],
        check=0)
    kept = (out / "kept.csv").read_text(encoding="utf-8").splitlines()
    assert kept[0] == "id,score,text"
    assert [r[0] for r in csv.reader(kept[1:])] == ["a"]


def test_keep_field_follows_each_csv_inputs_own_header(tmp_path):
    # Two CSV inputs with the columns in different orders, read in one chunk: each record's
    # score comes from its own file's header.
    base = base_texts(1)[0]
    paths = []
    for name, rows in [("a.csv", [["id", "score", "text"], ["a1", "1", base]]),
                       ("b.csv", [["score", "text", "id"], ["9", base + " Again.", "b1"],
                                  ["3", base.upper(), "b2"]])]:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        paths.append(tmp_path / name)
        paths[-1].write_text(buf.getvalue(), encoding="utf-8")
    out = tmp_path / "out"
    run(["dedup", *paths, "--out", out, "--quiet", "--keep", "field:score", "-k", "10"], check=0)
    dups = [json.loads(l) for l in (out / "duplicates.jsonl").read_text().splitlines()]
    assert {d["id"] for d in dups} == {"a1", "b2"}
    assert {d["duplicate_of"] for d in dups} == {"b1"}


def test_keep_field_is_a_usage_error_without_named_fields(tmp_path):
    path = tmp_path / "k.tsv"
    path.write_text("a\tsome text about the sea\nb\tsome text about the sea\n", encoding="utf-8")
    out = tmp_path / "out"
    proc = run(["dedup", path, "--out", out, "--keep", "field:score"], check=2)
    assert b"--keep field:score" in proc.stderr and b"tsv" in proc.stderr
    assert not out.exists()
    # Stream mode always keeps the first: the policy does not apply, nothing to reject.
    run(["dedup", path, "--out", out, "--quiet", "--mode", "stream", "--keep", "field:score"],
        check=0)
