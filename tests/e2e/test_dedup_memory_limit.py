"""`simdup dedup --memory-limit` (the real binary): past half of the engine's share the MinHash
keys and candidate sketches move to files under --tmp-dir and the decisions stay the same; a
limit below reading's working set is refused with the smallest that works; an input whose
in-memory state outgrows the limit stops, naming its size; a spill that does not fit
is a clear error (tests/unit/dedup/record_column_test.cpp); summary.json reports the limit, the spill and each
phase's peak RSS."""

import json
import os
import random
import re
import subprocess

import pytest

from cli_harness import run, simdup_bin, write_jsonl
from dedup_corpus import WORDS

DOCS = 40_000
SMALLEST = re.compile(r"--memory-limit 1 MiB is too small: reading and signing on 1 thread hold "
                      r"up to (\d+) MiB beside the (\d+) MiB the process holds before reading; "
                      r"the smallest limit for reading is (\d+) MiB")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """DOCS short documents: families of light edits (near duplicates found by SimHash and by
    MinHash), exact copies in another case, re-crawls under one URL, and unrelated texts."""
    rng = random.Random(11)
    records, base = [], None
    for i in range(DOCS):
        r = rng.random()
        if base is not None and r < 0.25:
            words = list(base)
            for _ in range(rng.randint(1, 3)):
                words[rng.randrange(len(words))] = rng.choice(WORDS) + str(rng.randrange(50))
            text = " ".join(words)
        elif base is not None and r < 0.30:
            text = " ".join(base).upper()
        else:
            base = [rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(rng.randint(25, 40))]
            text = " ".join(base)
        rec = {"id": f"doc-{i}", "text": text}
        if r > 0.98:
            rec["url"] = f"http://example.org/{i // 3}"
        records.append(rec)
    d = tmp_path_factory.mktemp("dedup-limit")
    return write_jsonl(d / "corpus.jsonl", records)


@pytest.fixture(scope="module")
def smallest(corpus, tmp_path_factory):
    """The smallest limit for reading, in MiB, as the refusal of a 1 MiB limit names it: reading's
    working set (64 MiB on one thread), what the process holds before reading (code and
    libraries; far more under a sanitizer) and the engine's 8 MiB."""
    out = tmp_path_factory.mktemp("smallest") / "out"
    proc = dedup(corpus, out, "--memory-limit", "1M", check=1)
    m = SMALLEST.search(proc.stderr.decode())
    assert m, proc.stderr.decode()
    assert not out.exists()
    reading, start, least = map(int, m.groups())
    assert reading == 64 and 0 < start and reading + start + 8 <= least <= reading + start + 10
    return least


def dedup(corpus, out, *flags, check=0, **kw):
    return run(["dedup", corpus, "--out", out, "--quiet", "--threads", "1", *flags],
               check=check, timeout=600, **kw)


def summary(out):
    return json.loads((out / "summary.json").read_text())


def test_same_decisions_with_the_columns_on_disk(corpus, smallest, tmp_path):
    # 8 MiB over the smallest leaves the engine 16 MiB, whose half the corpus's band keys and
    # sketches (144 bytes of about 230 per document) pass near 35,000 documents.
    limit = smallest + 8
    whole, limited = tmp_path / "whole", tmp_path / "limited"
    dedup(corpus, whole, "--memory-limit", "0")
    spill = tmp_path / "spill"
    spill.mkdir()
    dedup(corpus, limited, "--memory-limit", f"{limit}M", "--tmp-dir", spill)
    assert (limited / "duplicates.jsonl").read_bytes() == (whole / "duplicates.jsonl").read_bytes()
    assert (limited / "kept.jsonl").read_bytes() == (whole / "kept.jsonl").read_bytes()
    s, w = summary(limited), summary(whole)
    assert s["pairs"] == w["pairs"]
    assert s["pairs"]["minhash_candidates"] > 0 and s["documents"]["duplicates"] > 8000
    memory = s["memory"]
    assert memory["limit_bytes"] == limit << 20
    assert 0 < memory["start_rss_bytes"] < memory["peak_rss_bytes"]
    # The band keys (10 x 8 bytes) and sketches (64 bytes) of every document went to disk,
    # but the last of each column's 1 MiB write blocks (read from memory, never written).
    columns = memory["spilled_bytes"] - memory["verify_spill_bytes"]
    assert DOCS * 144 - (2 << 20) <= columns <= DOCS * 144
    assert w["memory"]["spilled_bytes"] == w["memory"]["verify_spill_bytes"]
    assert w["memory"]["limit_bytes"] == 0
    phases = memory["peak_rss_bytes_by_phase"]
    assert list(phases) == list(s["timings"]["phases"])
    assert all(0 < v <= memory["peak_rss_bytes"] for v in phases.values())
    assert os.listdir(spill) == []


def test_default_limit_is_half_of_physical_memory(corpus, tmp_path):
    out = tmp_path / "out"
    dedup(corpus, out)
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert summary(out)["memory"]["limit_bytes"] == physical // 2


def test_limit_below_reading_is_refused_with_the_smallest(corpus, smallest, tmp_path):
    out = tmp_path / "out"
    proc = dedup(corpus, out, "--memory-limit", f"{smallest - 1}M", check=1)
    assert f"--memory-limit {smallest - 1} MiB is too small: reading" in proc.stderr.decode()
    assert not out.exists()
    # The smallest named holds a small input (give or take the MiB by which what a process holds
    # before reading differs from one process to the next).
    small = write_jsonl(tmp_path / "small.jsonl",
                        [json.loads(line) for line in open(corpus)][:2000])
    dedup(small, out, "--memory-limit", f"{smallest + 1}M")


def test_state_outgrowing_the_limit_stops_with_its_size(corpus, smallest, tmp_path):
    # The corpus three times over, at the smallest limit (and the MiB by which processes differ before
    # reading): the state outgrows its 8 or 9 MiB on the way.
    out = tmp_path / "out"
    proc = run(["dedup", corpus, corpus, corpus, "--out", out, "--quiet", "--threads", "1",
                "--memory-limit", f"{smallest + 1}M"], check=1, timeout=600)
    err = proc.stderr.decode()
    m = re.search(rf"--memory-limit {smallest + 1} MiB is too small for this input: after (\d+) "
                  r"documents the state that stays in memory .*? takes (\d+) MiB beside "
                  r"reading's 64 MiB and the \d+ MiB the process held before reading", err)
    assert m, err
    assert DOCS < int(m.group(1)) < 3 * DOCS
    assert int(m.group(2)) > 9  # more than the 8 or 9 MiB left beside reading
    assert not out.exists()
    # What was read stays in the resume journal; with a larger limit the run continues.
    [staging] = os.listdir(tmp_path)
    assert staging.startswith("out.tmp-") and os.listdir(tmp_path / staging) == ["resume"]
    assert "the same command with --resume continues from there" in err
    run(["dedup", corpus, corpus, corpus, "--out", out, "--quiet", "--threads", "1",
         "--memory-limit", "0", "--resume"], check=0, timeout=600)
    assert 0 < summary(out)["resume"]["replayed_documents"] < 3 * DOCS
    assert os.listdir(tmp_path) == ["out"]


def test_peak_is_the_runs_own_when_started_from_a_large_process(tmp_path):
    """A pipeline's large Python process that starts the CLI: getrusage's peak keeps the process
    image before execve (1 GiB here), summary.json's is the run's own."""
    small = write_jsonl(tmp_path / "small.jsonl",
                        [{"id": i, "text": f"words of document {i} " * 30} for i in range(200)])
    out = tmp_path / "out"
    starter = ("import os, sys\n"
               "ballast = bytearray(1 << 30)\n"
               "for i in range(0, len(ballast), 4096): ballast[i] = 1\n"
               "os.execv(sys.argv[1], sys.argv[1:])\n")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    subprocess.run(["/usr/bin/python3", "-c", starter, simdup_bin(), "dedup", str(small),
                    "--out", str(out), "--quiet"], check=True, timeout=120, env=env)
    memory = summary(out)["memory"]
    assert 0 < memory["start_rss_bytes"] <= memory["peak_rss_bytes"] < 600 << 20, memory
