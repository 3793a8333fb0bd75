"""What a new user trips over (issue 36, items 3, 6, 7, 8, 10): messages that tell the truth
about what happened, one usage-error format with the way to --help for every command, warnings
for inputs that are not what was meant, tidy output, and explain --dedup-out naming the flags
it overrides (docs/cli.md); and no library warning on a machine (or container) that lets the
process use fewer CPUs than it has."""

import json
import os
import re

import pytest

from cli_harness import run, write_jsonl
from postgres_harness import NEWS, load_news, query

TEXTS = [
    "The harbour was closed on Tuesday after the storm damaged the northern breakwater badly.",
    "A new library opened in the old town hall, with a reading room and a children's corner.",
    "Farmers in the valley report the earliest cherry harvest in thirty years of records.",
]


def corpus(tmp_path, extra=()):
    records = [{"id": f"d{i}", "text": t} for i, t in enumerate(TEXTS)]
    return write_jsonl(tmp_path / "in.jsonl", [*records, *extra])


def stderr(proc):
    return proc.stderr.decode()


# --- item 3: an oversized record with the default --on-error fail ----------------------------

def big_corpus(tmp_path):
    path = tmp_path / "huge.jsonl"
    big = json.dumps({"id": "big", "text": "x" * (1 << 20)})
    path.write_text(json.dumps({"id": "a", "text": TEXTS[0]}) + "\n" + big + "\n" +
                    json.dumps({"id": "b", "text": TEXTS[1]}) + "\n")
    return path


@pytest.mark.parametrize("command", [["dedup", "--out", "OUT"], ["fingerprint"]])
def test_an_oversized_record_stops_the_run_and_says_so(tmp_path, command):
    path = big_corpus(tmp_path)
    args = [a if a != "OUT" else tmp_path / "out" for a in command]
    proc = run([*args, path, "--max-record-mb", "1"], check=1)
    err = stderr(proc)
    assert (f"error: stopped at {path}:2: record larger than 1048576 bytes; --on-error skip "
            "skips such records") in err, err
    assert "skipped" not in err.replace("skips", ""), err  # it was not skipped
    assert not (tmp_path / "out").exists()


def test_an_oversized_record_with_skip_is_skipped_and_counted(tmp_path):
    path = big_corpus(tmp_path)
    out = tmp_path / "out"
    proc = run(["dedup", path, "--out", out, "--max-record-mb", "1", "--on-error", "skip"],
               check=3)
    err = stderr(proc)
    assert f"skipped: {path}:2: record larger than 1048576 bytes\n" in err, err
    assert "bytes, skipped" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["skipped_reasons"] == {"too_large": 1}
    assert summary["documents"]["kept"] == 2


# --- item 6: every bad command line ends with the way to --help --------------------------------

HINT = re.compile(r"Run `(simdup [a-z ]+) --help` for the options\.\n$")

BAD_COMMAND_LINES = [
    # (arguments, the message's start after "simdup COMMAND: error: ")
    (["dedup", "IN", "--out", "OUT", "--verify", "jacard:0.8"], "--verify"),
    (["dedup", "IN", "--out", "OUT", "--minhash", "3"], "--minhash"),
    (["dedup", "IN", "--out", "OUT", "--keep", "biggest"], "--keep"),
    (["dedup", "IN", "--out", "OUT", "--layers", "exact,fuzzy"], "--layers"),
    (["dedup", "IN"], "--out is required"),
    (["dedup", "IN", "--out", "OUT", "-k", "40"], "--k: 40 is too large"),
    (["dedup", "IN", "--out", "OUT", "--mode", "fast"], "--mode"),
    (["explain", "only one text"], "need exactly two texts"),
    (["explain", "a", "b", "--verify", "nope"], "--verify"),
    (["fingerprint", "IN", "--weighting", "tfidf"], "--weighting tfidf needs --idf"),
    (["features", "IN", "--weighting", "tfidf"], "--weighting tfidf needs --idf"),
    (["clusters", "IN", "--mode", "star"], "--mode was renamed"),
    (["pairs", "IN", "--blocks", "zz"], ""),
    (["plan", "--n", "1000", "--blocks", "zz"], "--blocks"),
    (["serve", "--listen", "127.0.0.1:1"], "--data DIR is required"),
    (["idf", "build", "IN", "--weighting", "tfidf"], "--weighting tfidf needs --idf"),
]


@pytest.mark.parametrize("args, start", BAD_COMMAND_LINES,
                         ids=[" ".join(a) for a, _ in BAD_COMMAND_LINES])
def test_every_usage_error_ends_with_the_help_hint(tmp_path, args, start):
    path = corpus(tmp_path)
    argv = [path if a == "IN" else tmp_path / "out" if a == "OUT" else a for a in args]
    proc = run(argv, check=2)
    err = stderr(proc)
    command = "simdup " + (" ".join(args[:2]) if args[0] == "idf" else args[0])
    assert err.startswith(f"{command}: error: {start}"), err
    hint = HINT.search(err)
    assert hint and hint.group(1) == command, err
    assert err.count("--help") == 1, err  # once, also where CLI11 found the error
    assert not (tmp_path / "out").exists()


# The library's checks of a setting, worded by the CLI from the error's parameter (name, value,
# reason): the flag stands where the library names its option, the rest is the library's.
LIBRARY_SETTING_ERRORS = [
    (["dedup", "IN", "--out", "OUT", "--verify", "jacard:0.8"],
     "--verify: expected jaccard:T with T in (0, 1], got 'jacard:0.8'"),
    (["dedup", "IN", "--out", "OUT", "--minhash", "3"],
     "--minhash: expected off or BANDSxROWS (bands 1-64, rows 1-16, e.g. 16x4), got '3'"),
    (["dedup", "IN", "--out", "OUT", "--keep", "biggest"],
     "--keep: expected first, longest, newest or field:NAME, got 'biggest'"),
    (["dedup", "IN", "--out", "OUT", "--layers", "exact,fuzzy"],
     "--layers: unknown layer 'fuzzy' (url, title, exact, near)"),
    (["explain", "a", "b", "--verify", "nope"],
     "--verify: expected jaccard:T with T in (0, 1], got 'nope'"),
]


@pytest.mark.parametrize("args, line", LIBRARY_SETTING_ERRORS,
                         ids=[" ".join(a) for a, _ in LIBRARY_SETTING_ERRORS])
def test_library_setting_errors_name_the_flag(tmp_path, args, line):
    path = corpus(tmp_path)
    argv = [path if a == "IN" else tmp_path / "out" if a == "OUT" else a for a in args]
    err = stderr(run(argv, check=2))
    assert err.startswith(f"simdup {args[0]}: error: {line}\n"), err


@pytest.mark.parametrize("command", [["dedup", "IN", "--out", "OUT"], ["fingerprint", "IN"],
                                     ["features", "IN"], ["segment", "IN"], ["pairs", "IN"],
                                     ["clusters", "IN"], ["idf", "build", "IN"]])
def test_threads_out_of_range_names_the_flag_and_the_range(tmp_path, command):
    path = corpus(tmp_path)
    argv = [path if a == "IN" else tmp_path / "out" if a == "OUT" else a for a in command]
    prefix = "simdup " + " ".join(c for c in command if c not in ("IN", "OUT", "--out"))
    allowed = "the number of worker threads (0: every usable core): an integer from 0 to 4096"
    for value, what in [("-3", "-3 is negative"), ("many", "'many' is not a number"),
                        ("100000", "100000 is too large")]:
        err = stderr(run([*argv, "--threads", value], check=2))
        assert err.startswith(f"{prefix}: error: --threads: {what}; {allowed}\n"), err
        assert "Could not convert" not in err and HINT.search(err), err
    run([*argv[:1], "--help"] if command[0] != "idf" else ["idf", "build", "--help"], check=0)


@pytest.mark.parametrize("args", [["explain", "a", "b", "--top"], ["dedup", "IN", "--out", "OUT",
                                                                   "--report-clusters"],
                                  ["fingerprint", "IN", "--top-k"]])
def test_a_bad_count_is_refused_not_wrapped_around(tmp_path, args):
    """CLI11 alone reads -3 into a std::size_t as 2^64 - 3 and runs; every unsigned option
    refuses it, and a word gets the type instead of 'Could not convert'."""
    argv = [corpus(tmp_path) if a == "IN" else tmp_path / "out" if a == "OUT" else a for a in args]
    flag = args[-1]
    prefix = "simdup " + args[0]
    err = stderr(run([*argv, "-3"], check=2))
    assert err.startswith(f"{prefix}: error: {flag}: -3 is negative; expected a non-negative "
                          "integer\n"), err
    assert HINT.search(err)
    err = stderr(run([*argv, "abc"], check=2))
    assert err.startswith(f"{prefix}: error: {flag}: 'abc' is not a non-negative integer\n"), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, meant", [
    (["dedup", "IN", "--out", "OUT", "--verfy", "off"], "--verify"),
    (["dedup", "IN", "--out", "OUT", "--max-record", "5"], "--max-record-mb"),
    (["dedup", "IN", "--out", "OUT", "--on_error=skip"], "--on-error"),
    (["fingerprint", "IN", "--shingle-widht", "3"], "--shingle-width"),
    (["pairs", "IN", "--kk", "3"], "--k"),
    (["explain", "a", "b", "--jsno"], "--json"),
    (["idf", "build", "IN", "--min-dff", "2"], "--min-df"),
])
def test_an_unknown_flag_gets_did_you_mean(tmp_path, args, meant):
    path = corpus(tmp_path)
    argv = [path if a == "IN" else tmp_path / "out" if a == "OUT" else a for a in args]
    err = stderr(run(argv, check=2))
    assert f"; did you mean {meant}?\n" in err, err
    assert HINT.search(err), err


def test_an_unknown_flag_far_from_every_flag_gets_no_guess(tmp_path):
    err = stderr(run(["dedup", corpus(tmp_path), "--out", tmp_path / "out", "--zzzzzzzz"],
                     check=2))
    assert "not expected: --zzzzzzzz\n" in err and "did you mean" not in err, err


# --- item 7: inputs that are not what was meant ------------------------------------------------

def test_an_empty_input_is_not_an_error_but_warns(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    out = tmp_path / "out"
    proc = run(["dedup", empty, "--out", out], check=0)
    assert f"simdup dedup: warning: no records in {empty}; the output is empty\n" in stderr(proc)
    assert (out / "kept.jsonl").read_text() == ""
    proc = run(["fingerprint", empty], check=0)
    assert stderr(proc) == (f"simdup fingerprint: warning: no records in {empty}; the output is "
                            "empty\n")
    proc = run(["fingerprint"], input=b"", check=0)
    assert "no records in stdin" in stderr(proc)
    for command in ("pairs", "clusters"):
        proc = run([command, empty, empty], check=0)
        assert stderr(proc) == (f"simdup {command}: warning: no fingerprints in the 2 inputs; the "
                                "output is empty\n")
    # --quiet is errors only; a non-empty input gets no warning.
    assert run(["fingerprint", empty, "-q"], check=0).stderr == b""
    assert b"warning" not in run(["fingerprint", corpus(tmp_path)], check=0).stderr
    # idf build needs documents: an error, not a warning.
    err = stderr(run(["idf", "build", empty, "-o", tmp_path / "idf.txt"], check=1))
    assert "no documents in the input" in err and "warning" not in err


def test_repaired_utf8_is_reported_by_dedup_as_by_fingerprint(tmp_path):
    path = tmp_path / "latin1.jsonl"
    lines = [json.dumps({"id": f"d{i}", "text": t}).encode() for i, t in enumerate(TEXTS)]
    lines[1] = b'{"id": "d1", "text": "caf\xe9 cr\xe8me, ' + TEXTS[1].encode() + b'"}'
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "out"
    proc = run(["dedup", path, "--out", out], check=0)
    repaired = json.loads((out / "summary.json").read_text())["documents"]["invalid_utf8"]
    assert repaired == 2
    assert re.search(r"^  invalid UTF-8 +2 sequences replaced by U\+FFFD$", proc.stdout.decode(),
                     re.M), proc.stdout.decode()
    assert "simdup dedup: warning: 2 invalid UTF-8 sequences replaced" in stderr(proc)
    assert "2 invalid UTF-8 sequences replaced" in stderr(run(["fingerprint", path], check=0))
    clean = run(["dedup", corpus(tmp_path), "--out", tmp_path / "clean"], check=0)
    assert b"invalid UTF-8" not in clean.stdout + clean.stderr


# --- item 8: output that reads as written ------------------------------------------------------

@pytest.mark.parametrize("form, shown", [("out/", "out/"), ("out//", "out/"), ("./out", "./out/"),
                                         ("out", "out/")])
def test_the_output_line_names_the_directory_once(tmp_path, form, shown):
    proc = run(["dedup", corpus(tmp_path), "--out", form], check=0, cwd=tmp_path)
    line = next(li for li in proc.stdout.decode().splitlines() if li.startswith("  output"))
    assert line == (f"  output      {shown}{{kept.jsonl, duplicates.jsonl, summary.json, "
                    "report.html, index/}"), line


def test_explain_prints_jaccard_and_decision_once_each(tmp_path):
    near = TEXTS[0].replace("badly", "very badly")
    text = run(["explain", TEXTS[0], near], check=0).stdout.decode()
    jaccard = re.search(r"^jaccard: (.*)$", text, re.M).group(1)
    assert re.fullmatch(r"0\.\d{4}", jaccard), jaccard
    js = json.loads(run(["explain", "--json", TEXTS[0], near], check=0).stdout)
    assert f"{js['jaccard']:.4f}" == jaccard and js["jaccard"] != float(jaccard)  # JSON: all digits
    decision = re.search(r"^decision: (.*)$", text, re.M).group(1)
    assert decision.startswith("duplicate (near layer): distance "), decision
    same = run(["explain", TEXTS[0], TEXTS[0].upper()], check=0).stdout.decode()
    assert "decision: duplicate (exact layer): same normalised text\n" in same, same
    js = json.loads(run(["explain", "--json", TEXTS[0], TEXTS[0].upper()], check=0).stdout)
    assert (js["layer"], js["reason"]) == ("exact", "same normalised text")


def test_stream_summary_reports_the_star_it_makes(tmp_path):
    path = corpus(tmp_path, [{"id": "dup", "text": TEXTS[0].replace("badly", "very badly")}])
    for extra in ([], ["--clusters", "components"], ["--clusters", "anchored"]):
        out = tmp_path / f"stream{len(extra)}{extra[-1] if extra else ''}"
        run(["dedup", path, "--out", out, "--mode", "stream", "-q", *extra], check=0)
        p = json.loads((out / "summary.json").read_text())["parameters"]
        assert (p["mode"], p["linking"], p["minhash"]) == ("stream", "star", None), p
        dups = [json.loads(li) for li in (out / "duplicates.jsonl").read_text().splitlines()]
        assert [(d["id"], d["duplicate_of"]) for d in dups] == [("dup", "d0")]
    run(["dedup", path, "--out", tmp_path / "batch", "-q"], check=0)
    p = json.loads((tmp_path / "batch" / "summary.json").read_text())["parameters"]
    assert (p["mode"], p["linking"]) == ("batch", "anchored")


def dedup_run(tmp_path, *flags):
    path = corpus(tmp_path, [{"id": "dup", "text": TEXTS[0].replace("badly", "very badly")}])
    out = tmp_path / "run"
    run(["dedup", path, "--out", out, "-q", *flags], check=0)
    return out


def test_explain_dedup_out_names_each_flag_that_differs_from_the_run(tmp_path):
    out = dedup_run(tmp_path, "--features", "words", "-k", "6", "--no-casefold")
    p = json.loads((out / "summary.json").read_text())["parameters"]
    assert p["fingerprint"]["features"] == "words" and p["fingerprint"]["casefold"] is False
    assert p["verify"]["shingle_width"] == 5
    plain = run(["explain", "--json", "--dedup-out", out, "d0", "dup"], check=0)
    assert plain.stderr == b""  # no flags given: nothing differs
    # A flag given with the run's value (--verify) is no difference.
    proc = run(["explain", "--json", "--dedup-out", out, "d0", "dup", "--features", "jieba",
                "--k", "3", "--verify", "jaccard:0.8", "--hash", "md5"], check=0)
    warnings = stderr(proc).splitlines()
    where = f"({out}/summary.json); explaining with the run's"
    assert warnings == [
        f"simdup explain: warning: -k 3 differs from the run's -k 6 {where}",
        f"simdup explain: warning: --features jieba differs from the run's --features words "
        f"{where}",
        f"simdup explain: warning: --hash md5 differs from the run's --hash xxh3 {where}",
    ], warnings
    # The run's settings were used: the same answer as without the flags.
    assert json.loads(proc.stdout) == json.loads(plain.stdout)
    # ... which are the run's fingerprints, not the defaults' (words, no case folding).
    fp = {r["id"]: r["fingerprint"] for r in map(json.loads, run(
        ["fingerprint", tmp_path / "in.jsonl", "--features", "words", "--no-casefold",
         "--min-features", "10"], check=0).stdout.decode().splitlines())}
    explained = json.loads(plain.stdout)
    assert (explained["a"]["fingerprint"], explained["b"]["fingerprint"]) == (fp["d0"], fp["dup"])
    # A switch given that the run did not use is named too.
    err = stderr(run(["explain", "--dedup-out", out, "d0", "dup", "--strip-digits"], check=0))
    assert err == (f"simdup explain: warning: --strip-digits differs from the run's no "
                   f"--strip-digits {where}\n"), err


def test_explain_dedup_out_of_an_older_run_uses_the_flags_quietly(tmp_path):
    out = dedup_run(tmp_path, "--features", "words")
    summary = json.loads((out / "summary.json").read_text())
    del summary["parameters"]["fingerprint"]  # as written before the settings were recorded
    (out / "summary.json").write_text(json.dumps(summary))
    proc = run(["explain", "--json", "--dedup-out", out, "d0", "dup", "--features", "words"],
               check=0)
    assert proc.stderr == b""
    assert json.loads(proc.stdout)["a"]["features"] > 0


# --- item 10: fingerprint --to says what it wrote ----------------------------------------------

def test_fingerprint_to_a_table_says_what_was_written(postgres):
    db = postgres.create_database()
    load_news(postgres, db)
    url = postgres.url(db)
    args = ["fingerprint", "--from", url, "--table", "news", "--to", url, "--to-table", "fps"]
    proc = run(args, check=0)
    assert proc.stdout == b""
    assert stderr(proc) == "simdup fingerprint: 2103 rows written to table fps (run default)\n"
    assert query(postgres, db, "SELECT count(*) FROM fps") == [(2103,)]
    assert run([*args, "-q"], check=0).stderr == b""
    args = ["fingerprint", NEWS, "--to", url, "--to-table", "fps_files", "--run", "files"]
    proc = run(args, check=0)
    assert stderr(proc) == "simdup fingerprint: 2103 rows written to table fps_files (run files)\n"
    # A resumed run that finds every row written writes none, and says after what.
    proc = run([*args, "--resume"], check=0)
    assert stderr(proc) == ("simdup fingerprint: 0 rows written to table fps_files (run files, "
                            "after the 2103 rows an earlier try wrote)\n")


# --- one CPU of two: the default thread count is the affinity mask's ---------------------------
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to leave one out")
def test_one_allowed_cpu_means_one_thread_and_no_warning(tmp_path):
    """Under `taskset -c N` (a container's cpuset) the commands run one thread, as many as they
    may use, and oneTBB has no reason to warn that it cannot start the others."""
    cpu = min(os.sched_getaffinity(0))
    pin = {"preexec_fn": lambda: os.sched_setaffinity(0, {cpu})}
    path = corpus(tmp_path, [{"id": f"c{i}", "text": TEXTS[0] + f" copy {i}"} for i in range(40)])
    out = tmp_path / "out"
    for args in (["dedup", path, "--out", out, "-q"], ["fingerprint", path, "-o", tmp_path / "f"]):
        proc = run(args, check=0, **pin)
        assert stderr(proc) == "", stderr(proc)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["timings"]["threads"] == 1
    assert summary["documents"]["duplicates"] > 0

