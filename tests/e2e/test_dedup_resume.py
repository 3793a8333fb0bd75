"""`simdup dedup --resume` (the real binary): a batch run killed with SIGKILL while reading, one
killed after its decisions, and one stopped by a full disk each continue from the journal in
their staging directory and write the same outputs as a run that was never interrupted; a
journal of other settings, or an input that changed since, is refused with the difference; a
run with nothing to resume starts from the beginning."""

import json
import os
import random
import re
import signal
import subprocess
import time

import pytest

from cli_harness import run, simdup_bin, snapshot, write_jsonl
from dedup_corpus import WORDS

FLAGS = ["--on-error", "skip", "--threads", "2"]
PARTIAL = 3  # finished, with skipped records (the corpus's malformed lines)
# Enough work that a run killed a few chunks in has most of its reading ahead of it.
TARGET_SECONDS = 4.0


def make_corpus(path, docs, seed):
    """Families of near copies, exact copies in another case, unrelated texts, and a malformed
    line every 997 records (skipped and counted: the journal keeps them too)."""
    rng = random.Random(seed)
    lines, base = [], None
    for i in range(docs):
        r = rng.random()
        if base is not None and r < 0.3:
            words = list(base)
            for _ in range(rng.randint(1, 4)):
                words[rng.randrange(len(words))] = rng.choice(WORDS)
            text = " ".join(words)
        elif base is not None and r < 0.35:
            text = " ".join(base).upper()
        else:
            base = [rng.choice(WORDS) + str(rng.randrange(300)) for _ in range(rng.randint(80, 160))]
            text = " ".join(base)
        lines.append(json.dumps({"id": f"s{seed}-{i}", "text": text}))
        if i % 997 == 500:
            lines.append('{"id": "broken", "text": ')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def outputs(out):
    """What a resumed run must write exactly as an uninterrupted one: every file but the
    summary and the report, whose timings differ."""
    files = snapshot(out)
    return {name: data for name, data in files.items()
            if name not in ("summary.json", "report.html")}


def staging_dirs(parent, name="out"):
    return sorted(p for p in parent.iterdir() if p.name.startswith(name + ".tmp-"))


def journal_bytes(parent, name="out"):
    for d in staging_dirs(parent, name):
        try:
            return os.path.getsize(d / "resume" / "chunks.bin")
        except OSError:
            pass
    return 0


def start(inputs, out, *extra):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    return subprocess.Popen([simdup_bin(), "dedup", *map(str, inputs), "--out", str(out), "--quiet",
                             *FLAGS, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)


def kill_when(proc, ready, timeout=300):
    """SIGKILL once `ready()` holds; the process must still have been running."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, "the run ended before it could be killed: " + \
            proc.stderr.read().decode(errors="replace")
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def summary(out):
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The inputs (as many files as make an uninterrupted run last about TARGET_SECONDS on this
    build) and that run's output."""
    d = tmp_path_factory.mktemp("resume")
    first = make_corpus(d / "part0.jsonl", 3000, seed=0)
    began = time.monotonic()
    run(["dedup", first, "--out", d / "probe", "--quiet", *FLAGS], check=PARTIAL, timeout=600)
    one = max(time.monotonic() - began, 0.05)
    parts = [first] + [make_corpus(d / f"part{i}.jsonl", 3000, seed=i)
                       for i in range(1, min(40, max(4, round(TARGET_SECONDS / one))))]
    ref = d / "ref"
    run(["dedup", *parts, "--out", ref, "--quiet", *FLAGS], check=PARTIAL, timeout=900)
    return parts, ref


def test_killed_while_reading_resumes_to_the_same_outputs(corpus, tmp_path):
    parts, ref = corpus
    out = tmp_path / "out"
    proc = start(parts, out)
    # A few chunks in (each about 256 records): most of the reading is still to come.
    kill_when(proc, lambda: journal_bytes(tmp_path) > 1_000_000)
    [staging] = staging_dirs(tmp_path)
    assert sorted(os.listdir(staging / "resume")) == ["chunks.bin", "manifest", "shingles.bin",
                                                      "shingles.path"]
    assert not out.exists()

    done = run(["dedup", *parts, "--out", out, *FLAGS, "--resume"], check=PARTIAL, timeout=900)
    err = done.stderr.decode()
    m = re.search(r"resuming: (\d+) documents of the interrupted run taken from its journal", err)
    assert m, err
    s, r = summary(out), summary(ref)
    assert 0 < int(m.group(1)) == s["resume"]["replayed_documents"] < s["documents"]["read"]
    assert s["resume"]["replayed_decisions"] is False
    assert outputs(out) == outputs(ref)
    assert s["documents"] == r["documents"] and s["pairs"] == r["pairs"]
    assert 0 < s["pairs"]["prefiltered"] <= s["pairs"]["rejected_by_verify"]
    assert s["documents"]["skipped"] > 0
    assert staging_dirs(tmp_path) == []
    assert "resume" not in os.listdir(out)


def test_killed_after_deciding_resumes_without_deciding_again(corpus, tmp_path):
    parts, ref = corpus
    out = tmp_path / "out"
    proc = start(parts, out, "--annotate")
    kill_when(proc, lambda: any((d / "resume" / "decisions.bin").exists()
                                for d in staging_dirs(tmp_path)))
    run(["dedup", *parts, "--out", out, "--quiet", *FLAGS, "--annotate", "--resume"],
        check=PARTIAL, timeout=900)
    s = summary(out)
    assert s["resume"]["replayed_decisions"] is True
    assert s["resume"]["replayed_documents"] == s["documents"]["read"] - s["documents"]["skipped"]
    got = outputs(out)
    assert got.pop("annotated.jsonl")  # the reference run did not annotate
    assert got == outputs(ref)
    assert s["pairs"] == summary(ref)["pairs"]


def test_a_full_disk_stops_the_run_and_resume_finishes_it(corpus, tmp_path):
    parts, ref = corpus
    out = tmp_path / "out"

    def small_files():
        # Writes past 2 MB fail with EFBIG, as on a full disk; verification's shingle file (in
        # the journal) outgrows it first.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (2_000_000, resource.RLIM_INFINITY))

    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    proc = subprocess.run([simdup_bin(), "dedup", *map(str, parts), "--out", str(out), *FLAGS],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900, env=env,
                          preexec_fn=small_files)
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 1, err
    assert "cannot write the temporary file of --verify" in err and "File too large" in err, err
    assert "more bytes needed" in err, err
    m = re.search(r"the (\d+) documents read so far are kept in (\S+); the same command with "
                  r"--resume continues from there", err)
    assert m, err
    [staging] = staging_dirs(tmp_path)
    assert m.group(2) == str(staging) and os.listdir(staging) == ["resume"]
    run(["dedup", *parts, "--out", out, "--quiet", *FLAGS, "--resume"], check=PARTIAL,
        timeout=900)
    s = summary(out)
    assert s["resume"]["replayed_documents"] == int(m.group(1))
    assert outputs(out) == outputs(ref)


def interrupted(parts, tmp_path):
    out = tmp_path / "out"
    kill_when(start(parts, out), lambda: journal_bytes(tmp_path) > 300_000)
    return out


def test_other_settings_are_refused_and_the_journal_stays(corpus, tmp_path):
    parts, ref = corpus
    out = interrupted(parts, tmp_path)
    proc = run(["dedup", *parts, "--out", out, "--quiet", *FLAGS, "--k", "5", "--resume"], check=2)
    err = proc.stderr.decode()
    assert "--resume: the interrupted run had other settings or inputs" in err, err
    assert re.search(r'it had ""k":\d+,", this run has ""k":5,"', err), err
    [staging] = staging_dirs(tmp_path)
    assert (staging / "resume" / "chunks.bin").exists()
    # A run without --resume starts over and removes the interrupted run's directory.
    proc = run(["dedup", *parts, "--out", out, *FLAGS], check=PARTIAL, timeout=900)
    assert f"removed {staging}".encode() in proc.stderr
    assert outputs(out) == outputs(ref)
    assert summary(out)["resume"]["replayed_documents"] == 0


def test_an_input_changed_since_is_refused(corpus, tmp_path):
    parts, _ = corpus
    mine = []
    for p in parts:  # copies this test may change
        mine.append(tmp_path / p.name)
        mine[-1].write_bytes(p.read_bytes())
    out = interrupted(mine, tmp_path)
    # Appended records change the size, which the journal's manifest holds: refused, and the
    # journal stays for the input it was made of.
    original = mine[-1].read_bytes()
    stat = os.stat(mine[-1])
    with open(mine[-1], "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "late", "text": "a record added later"}) + "\n")
    proc = run(["dedup", *mine, "--out", out, "--quiet", *FLAGS, "--resume"], check=2)
    assert b"--resume: the interrupted run had other settings or inputs" in proc.stderr
    assert f"input {mine[-1]} bytes=".encode() in proc.stderr
    mine[-1].write_bytes(original)
    os.utime(mine[-1], ns=(stat.st_atime_ns, stat.st_mtime_ns))
    # The same size and modification time, another byte in the first record: only the chunk's
    # digest tells. The journal then serves no input and goes.
    stat = os.stat(mine[0])
    data = bytearray(mine[0].read_bytes())
    at = data.index(b'"text": "') + 9
    data[at] = ord("Q") if data[at] != ord("Q") else ord("R")
    mine[0].write_bytes(bytes(data))
    os.utime(mine[0], ns=(stat.st_atime_ns, stat.st_mtime_ns))
    proc = run(["dedup", *mine, "--out", out, "--quiet", *FLAGS, "--resume"], check=1, timeout=900)
    assert b"--resume: the input changed since the interrupted run (its chunk 1 of records " \
           b"differs)" in proc.stderr, proc.stderr
    assert staging_dirs(tmp_path) == []


def test_nothing_to_resume_starts_from_the_beginning(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl",
                       [{"id": i, "text": f"text number {i} " * 20} for i in range(50)])
    out = tmp_path / "out"
    proc = run(["dedup", path, "--out", out, "--resume"], check=0)
    assert b"--resume: no interrupted run of " + str(out).encode() + \
        b" to continue; starting from the beginning" in proc.stderr
    assert summary(out)["documents"]["read"] == 50
    assert summary(out)["resume"]["journal_bytes"] > 0
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "out"]


@pytest.mark.parametrize("how", [["--mode", "stream"], ["-"]])
def test_resume_needs_a_batch_run_over_files(tmp_path, how):
    path = write_jsonl(tmp_path / "in.jsonl", [{"id": 1, "text": "one two three four five six"}])
    args = ["dedup", "--out", tmp_path / "out", "--resume"]
    args += [path, *how] if how[0] == "--mode" else ["--mode", "batch", "-"]
    proc = run(args, input=path.read_bytes(), check=2)
    assert b"--resume: only a batch run with an output directory over files" in proc.stderr, \
        proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


@pytest.mark.parametrize("fmt", ["csv.gz", "jsonl"])
def test_resume_keeps_every_setting_of_the_run(tmp_path, fmt):
    """CSV under gzip with --keep field:score, and JSONL against an earlier run's index with
    --annotate: a run stopped by a full disk and resumed writes what an uninterrupted one does."""
    import csv
    import gzip
    import io
    rng = random.Random(5)
    rows = []
    for i in range(2500):
        base = i - i % 3  # families of three light edits
        words = [WORDS[(base * 7 + j * 3) % len(WORDS)] + str((base + j) % 97) for j in range(90)]
        if i % 3:
            words[rng.randrange(len(words))] = rng.choice(WORDS)
        rows.append({"id": f"r{i}", "text": " ".join(words), "score": rng.randrange(100)})
    if fmt == "csv.gz":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=["id", "text", "score"])
        w.writeheader()
        w.writerows(rows)
        path = tmp_path / "in.csv.gz"
        path.write_bytes(gzip.compress(buf.getvalue().encode()))
        extra = ["--keep", "field:score"]
    else:
        path = write_jsonl(tmp_path / "in.jsonl", rows[500:])
        earlier = write_jsonl(tmp_path / "earlier.jsonl", rows[:700])
        run(["dedup", earlier, "--out", tmp_path / "earlier", "--quiet"], check=0)
        extra = ["--against", tmp_path / "earlier", "--annotate"]
    ref = tmp_path / "ref"
    run(["dedup", path, "--out", ref, "--quiet", "--threads", "2", *extra], check=0)

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_200_000, resource.RLIM_INFINITY))

    out = tmp_path / "out"
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    args = [simdup_bin(), "dedup", str(path), "--out", str(out), "--threads", "2",
            *map(str, extra)]
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                          env=env, preexec_fn=small_files)
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 1 and "File too large" in err, err
    assert "--resume continues from there" in err, err
    run(["dedup", path, "--out", out, "--quiet", "--threads", "2", *extra, "--resume"], check=0)
    s = summary(out)
    assert 0 < s["resume"]["replayed_documents"] < s["documents"]["read"]
    assert outputs(out) == outputs(ref)
    assert s["documents"] == summary(ref)["documents"] and s["documents"]["duplicates"] > 500
    if fmt == "jsonl":
        assert s["against"] == summary(ref)["against"] and s["against"]["dropped"] > 0


def test_the_shingle_file_lives_in_tmp_dir_and_goes_with_the_journal(corpus, tmp_path):
    """With --tmp-dir, verification's arrays (the journal's shingle file) are there: a resumed
    run finds them, and both a finished run and a run that starts over leave --tmp-dir empty."""
    parts, ref = corpus
    spill = tmp_path / "spill"
    spill.mkdir()
    out = tmp_path / "out"
    kill_when(start(parts, out, "--tmp-dir", spill), lambda: journal_bytes(tmp_path) > 300_000)
    [staging] = staging_dirs(tmp_path)
    assert os.listdir(spill) == [staging.name + ".shingles"]
    assert (staging / "resume" / "shingles.path").read_text() == str(spill / os.listdir(spill)[0])
    run(["dedup", *parts, "--out", out, "--quiet", *FLAGS, "--tmp-dir", spill, "--resume"],
        check=PARTIAL, timeout=900)
    assert summary(out)["resume"]["replayed_documents"] > 0
    assert outputs(out) == outputs(ref)
    assert os.listdir(spill) == [] and staging_dirs(tmp_path) == []
    # Killed again; the next run starts over and removes the journal's file in --tmp-dir too.
    again = tmp_path / "again"
    kill_when(start(parts, again, "--tmp-dir", spill),
              lambda: journal_bytes(tmp_path, "again") > 300_000)
    assert len(os.listdir(spill)) == 1 and len(staging_dirs(tmp_path, "again")) == 1
    run(["dedup", parts[0], "--out", again, "--quiet", *FLAGS], check=PARTIAL, timeout=900)
    assert os.listdir(spill) == [] and staging_dirs(tmp_path, "again") == []
