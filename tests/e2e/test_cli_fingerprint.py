"""`simdup fingerprint`: the output contract, errors, exit codes, big inputs, broken pipes."""

import json
import os
import re
import subprocess

from cli_harness import SOURCE_DIR, jsonl, run, simdup_bin, write_jsonl

HEX16 = re.compile(r"^[0-9a-f]{16}$")


def test_jsonl_output_echoes_ids_as_given_in_input_order(tmp_path, sample_records):
    path = write_jsonl(tmp_path / "docs.jsonl", sample_records)
    out = jsonl(run(["fingerprint", path], check=0))
    assert [o["id"] for o in out] == [1, "doc-2", 3.5, "中文", 5]
    for o in out[:4]:
        assert HEX16.match(o["fingerprint"]) and "status" not in o
    # Near-identical texts are close, unrelated ones far.
    fp = [int(o["fingerprint"], 16) for o in out[:3]]
    assert bin(fp[0] ^ fp[1]).count("1") < bin(fp[0] ^ fp[2]).count("1")
    # The raw id text is kept: 3.5 stays a number, and the line is plain JSONL.
    assert run(["fingerprint", path]).stdout.decode().splitlines()[2].startswith('{"id":3.5,')


def test_empty_document_is_too_short_never_zero(tmp_path):
    path = write_jsonl(tmp_path / "e.jsonl", [{"id": "e", "text": ""}, {"id": "p", "text": "!!!"}])
    out = jsonl(run(["fingerprint", path], check=0))
    assert out == [{"id": "e", "fingerprint": None, "status": "too_short"},
                   {"id": "p", "fingerprint": None, "status": "too_short"}]
    tsv = run(["fingerprint", "--format", "tsv", path], check=0).stdout.decode()
    assert tsv == "e\t\ttoo_short\np\t\ttoo_short\n"


def test_tsv_output_and_order_with_many_records_and_threads(tmp_path):
    records = [{"id": f"d{i}", "text": f"document {i} " + "word " * (i % 50)} for i in range(3000)]
    path = write_jsonl(tmp_path / "many.jsonl", records)
    one = run(["fingerprint", "--threads", "1", "--format", "tsv", path], check=0).stdout
    two = run(["fingerprint", "--threads", "2", "--format", "tsv", path], check=0).stdout
    assert one == two
    lines = one.decode().splitlines()
    assert [line.split("\t")[0] for line in lines] == [r["id"] for r in records]
    assert all(HEX16.match(line.split("\t")[1]) for line in lines)


def test_stdin_is_read_without_input_or_with_dash(sample_records):
    data = "".join(json.dumps(r) + "\n" for r in sample_records)
    a = run(["fingerprint"], input=data, check=0).stdout
    b = run(["fingerprint", "-"], input=data, check=0).stdout
    assert a == b and len(a.splitlines()) == len(sample_records)


def test_supplied_features_are_fingerprinted(tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl", [
        {"id": 1, "features": ["aaa", "bbb"]},
        {"id": 2, "features": [["aaa", 1], ["bbb", 1]]},
    ])
    out = jsonl(run(["fingerprint", path], check=0))
    assert out[0]["fingerprint"] == out[1]["fingerprint"]
    compat = jsonl(run(["fingerprint", "--compat", "python-simhash", path], check=0))
    # simhash.Simhash(["aaa", "bbb"]).value in the package's own test suite.
    assert int(compat[0]["fingerprint"], 16) == 57087923692560392


def test_python_simhash_mode_matches_the_golden_vectors(tmp_path):
    golden = [json.loads(line) for line in
              (SOURCE_DIR / "tests/data/golden/python_simhash.jsonl").read_text().splitlines()]
    path = write_jsonl(tmp_path / "g.jsonl",
                       [{"id": i, **{k: v for k, v in g.items() if k != "fingerprint"}}
                        for i, g in enumerate(golden)])
    out = jsonl(run(["fingerprint", "--compat", "python-simhash", path], check=0))
    assert [o["fingerprint"] for o in out] == [g["fingerprint"] for g in golden]


def test_on_error_fail_stops_with_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id":1,"text":"good one"}\n{"id":2,"text":\n{"id":3,"text":"never"}\n')
    proc = run(["fingerprint", path], check=1)
    err = proc.stderr.decode()
    assert f"{path}:2:" in err and "invalid JSON" in err
    # Records before the bad one may already be on stdout; none after it.
    ids = [o["id"] for o in jsonl(proc)]
    assert 3 not in ids and set(ids) <= {1}


def test_on_error_fail_with_output_file_writes_nothing(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id":1,"text":"good one"}\nnot json\n')
    out = tmp_path / "out.jsonl"
    proc = run(["fingerprint", "-o", out, path], check=1)
    assert "bad.jsonl:2:" in proc.stderr.decode()
    assert not out.exists()
    assert os.listdir(tmp_path) == ["bad.jsonl"]  # no temporary file left behind


def test_output_file_is_written_on_success(tmp_path, sample_records):
    path = write_jsonl(tmp_path / "docs.jsonl", sample_records)
    out = tmp_path / "fp.jsonl"
    proc = run(["fingerprint", "--output", out, path], check=0)
    assert proc.stdout == b""
    assert out.read_bytes() == run(["fingerprint", path], check=0).stdout
    assert sorted(os.listdir(tmp_path)) == ["docs.jsonl", "fp.jsonl"]


def test_on_error_skip_counts_and_reports(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"id":1,"text":"first text"}\n{"id":2}\n[1]\n{"id":4,"text":"fourth text"}\n')
    proc = run(["fingerprint", "--on-error", "skip", path], check=3)
    assert [o["id"] for o in jsonl(proc)] == [1, 4]
    err = proc.stderr.decode()
    assert f"{path}:2: missing text field 'text'" in err
    assert f"{path}:3:" in err
    assert "2 records written, 2 records skipped (invalid_input: 2)" in err


def mixed_bad_lines(path, records=2000):
    """Good records with malformed JSON (every 301st line, parsed by the workers) and lines over
    --max-record-mb 1 (every 701st, refused by the reader) among them, across many batches."""
    bad_json, too_long, good = [], [], []
    with open(path, "w") as f:
        for line in range(1, records + 1):
            if line % 701 == 0:
                f.write(json.dumps({"id": line, "text": "x" * (1 << 20)}) + "\n")
                too_long.append(line)
            elif line % 301 == 0:
                f.write('{"id": %d, "text": \n' % line)
                bad_json.append(line)
            else:
                f.write(json.dumps({"id": line, "text": f"record number {line} of many"}) + "\n")
                good.append(line)
    return good, bad_json, too_long


def test_on_error_skip_keeps_input_order_across_batches(tmp_path):
    path = tmp_path / "mixed.jsonl"
    good, bad_json, too_long = mixed_bad_lines(path)
    proc = run(["fingerprint", "--on-error", "skip", "--max-record-mb", "1", "--threads", "2",
                path], check=3)
    assert [o["id"] for o in jsonl(proc)] == good
    err = proc.stderr.decode()
    warned = [int(m) for m in re.findall(rf"skipped {re.escape(str(path))}:(\d+):", err)]
    assert warned == sorted(bad_json + too_long)  # in input order, whoever found them
    assert (f"{len(good)} records written, {len(bad_json) + len(too_long)} records skipped "
            f"(invalid_input: {len(bad_json)}, too_large: {len(too_long)})") in err


def test_on_error_fail_names_the_first_bad_record(tmp_path):
    # The first bad line is malformed JSON (found by a worker), a later one too long (found
    # by the reader first): the run stops at the first, and nothing after it is written.
    path = tmp_path / "mixed.jsonl"
    _, bad_json, too_long = mixed_bad_lines(path)
    assert bad_json[0] < too_long[0]
    proc = run(["fingerprint", "--max-record-mb", "1", "--threads", "2", path], check=1)
    err = proc.stderr.decode()
    assert f"stopped at {path}:{bad_json[0]}: invalid JSON" in err
    assert f":{too_long[0]}:" not in err
    ids = [o["id"] for o in jsonl(proc)]
    assert ids == list(range(1, len(ids) + 1)) and len(ids) < bad_json[0]
    proc = run(["dedup", "--max-record-mb", "1", "--threads", "2", path, "--out",
                tmp_path / "out"], check=1)
    assert f"stopped at {path}:{bad_json[0]}: invalid JSON" in proc.stderr.decode()


def test_invalid_utf8_is_repaired_and_counted(tmp_path):
    path = tmp_path / "u.txt"
    path.write_bytes(b"caf\xe9 au lait with some more words\nplain ascii line of text\n")
    proc = run(["fingerprint", path], check=0)
    out = jsonl(proc)
    assert [o["id"] for o in out] == [1, 2] and HEX16.match(out[0]["fingerprint"])
    assert "1 invalid UTF-8 sequences replaced" in proc.stderr.decode()
    jpath = tmp_path / "u.jsonl"
    jpath.write_bytes(b'{"id":"x","text":"caf\xe9 \xff au lait"}\n')
    proc = run(["fingerprint", jpath], check=0)
    assert HEX16.match(jsonl(proc)[0]["fingerprint"])
    assert "2 invalid UTF-8 sequences replaced" in proc.stderr.decode()


def test_stats_flag_prints_summary_and_quiet_silences(tmp_path, sample_records):
    path = write_jsonl(tmp_path / "docs.jsonl", sample_records)
    assert run(["fingerprint", path], check=0).stderr == b""
    err = run(["fingerprint", "--stats", path], check=0).stderr.decode()
    assert "5 records written, 0 records skipped" in err and "1 too_short" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id":1,"text":"a b c d e"}\nnope\n')
    assert run(["fingerprint", "-q", "--on-error", "skip", bad], check=3).stderr == b""


def test_hundred_megabyte_single_line(tmp_path):
    path = tmp_path / "huge.jsonl"
    sentence = "the quick brown fox jumps over the lazy dog again and again "
    with open(path, "w") as f:
        f.write('{"id":"huge","text":"')
        chunk = sentence * (1 << 14)
        for _ in range((100 << 20) // len(chunk) + 1):
            f.write(chunk)
        f.write('"}\n{"id":"small","text":"tiny document here"}\n')
    out = jsonl(run(["fingerprint", path], check=0, timeout=300))
    assert [o["id"] for o in out] == ["huge", "small"]
    assert HEX16.match(out[0]["fingerprint"])


def test_broken_pipe_is_quiet_and_successful(tmp_path):
    records = [{"id": i, "text": f"text number {i} with a few words"} for i in range(200000)]
    path = write_jsonl(tmp_path / "many.jsonl", records)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    proc = subprocess.run(f"'{simdup_bin()}' fingerprint '{path}' | head -1; "
                          "echo \"rc=${PIPESTATUS[0]}\"", shell=True, executable="/bin/bash",
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=300)
    lines = proc.stdout.decode().splitlines()
    assert json.loads(lines[0])["id"] == 0
    assert lines[-1] == "rc=0"
    assert proc.stderr == b""


def test_exit_codes_and_messages(tmp_path, sample_records):
    path = write_jsonl(tmp_path / "docs.jsonl", sample_records)
    assert run(["fingerprint", "--no-such-flag", path]).returncode == 2
    assert run(["fingerprint", "--format", "xml", path]).returncode == 2
    assert run(["fingerprint", "--weighting", "tfidf", path], check=2).stderr.decode().count(
        "--idf") >= 1
    missing = tmp_path / "missing.jsonl"
    assert str(missing) in run(["fingerprint", missing], check=1).stderr.decode()
    idf = tmp_path / "no-idf.txt"
    err = run(["fingerprint", "--weighting", "tfidf", "--idf", idf, path], check=1).stderr
    assert str(idf) in err.decode()
    stop = tmp_path / "no-stop.txt"
    assert str(stop) in run(["fingerprint", "--stopwords", stop, path], check=1).stderr.decode()
    # A misspelt command is named, with the list of commands, as a usage error.
    err = run(["fingerprnt", path], check=2).stderr.decode()
    assert "unknown command 'fingerprnt'" in err and "fingerprint" in err and "dedup" in err


def test_help_mentions_every_option():
    text = run(["fingerprint", "--help"], check=0).stdout.decode()
    for opt in ["--input-format", "--id-field", "--text-field", "--url-field", "--title-field",
                "--time-field", "--features-field", "--max-record-mb", "--html", "--no-nfkc",
                "--no-casefold", "--no-t2s", "--keep-punctuation", "--strip-digits",
                "--features", "--shingle-width", "--ngram", "--min-token-length", "--jieba-dict",
                "--min-features", "--weighting", "--idf", "--stopwords", "--top-k", "--hash",
                "--compat", "--output", "--format", "--on-error", "--threads", "--stats",
                "--quiet", "INPUT"]:
        assert opt in text, opt


def test_options_change_the_fingerprint(tmp_path):
    path = write_jsonl(tmp_path / "o.jsonl", [{"id": 1, "text": "Hello World 2024, hello again!"}])

    def fp(*opts):
        return jsonl(run(["fingerprint", *opts, path], check=0))[0]["fingerprint"]

    base = fp()
    assert fp("--hash", "fnv1a") != base
    assert fp("--features", "words") != base
    assert fp("--shingle-width", "3") != base
    assert fp("--no-casefold") != base
    assert fp("--strip-digits") != base
    assert fp("--hash", "xxh3", "--weighting", "count") == base
