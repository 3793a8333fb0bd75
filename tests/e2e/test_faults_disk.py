"""A full disk, rehearsed: the dedup output directory, `simdup idf build`, the service's log (the
RocksDB WAL) and its segment files; and kill -9 in the middle of `idf build`.

A full disk is made with a file-size limit, which needs no privileges: RLIMIT_FSIZE with
SIGXFSZ ignored, so that a write past the limit fails with EFBIG ("File too large"), as a write to
a full file system fails with ENOSPC. The limit is per process and can be raised again
(prlimit) while the process runs, as space comes back. As root, the dedup output also gets a
real small tmpfs (ENOSPC)."""

import os
import random
import resource
import signal
import subprocess
import threading
import time

import pytest

from cli_harness import run, simdup_bin, snapshot, write_jsonl
from dedup_corpus import base_texts
from service_harness import assert_all_stored, Server, fp_hex

UNLIMITED = resource.RLIM_INFINITY


def ignore_sigxfsz(limit=UNLIMITED):
    """A preexec_fn: writes past `limit` bytes fail (EFBIG) instead of killing the process.
    Only the soft limit is set, so that it can be raised again without privileges."""

    def setup():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, UNLIMITED))

    return setup


def run_limited(args, limit, stdin=None):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    return subprocess.run([simdup_bin(), *[str(a) for a in args]], input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                          preexec_fn=ignore_sigxfsz(limit), env=env)


def corpus(tmp_path, n=300):
    # ~1 MB of JSONL: kept.jsonl alone is far beyond the limits below.
    records = [{"id": i, "text": t} for i, t in enumerate(base_texts(n, seed=5, sentences=30))]
    return write_jsonl(tmp_path / "in.jsonl", records)


# --- the dedup output directory ---------------------------------------------------------------

@pytest.mark.parametrize("mode", ["batch", "stream"])
def test_dedup_output_full_leaves_no_result(tmp_path, mode):
    path = corpus(tmp_path)
    out = tmp_path / "out"
    # --verify off: no spill file (test_dedup_spill.py has that one); the output is what fills.
    proc = run_limited(["dedup", path, "--out", out, "--quiet", "--verify", "off", "--mode", mode],
                       limit=65536)
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 1, err
    assert "File too large" in err and str(out) + ".tmp-" in err, err
    assert not out.exists()
    again = ["dedup", path, "--out", out, "--quiet", "--verify", "off", "--mode", mode]
    if mode == "stream":
        assert os.listdir(tmp_path) == ["in.jsonl"]  # the staging directory is gone
    else:
        # Only the resume journal of what was read and signed stays (test_dedup_resume.py).
        [staging] = [p for p in os.listdir(tmp_path) if p != "in.jsonl"]
        assert staging.startswith("out.tmp-") and os.listdir(tmp_path / staging) == ["resume"]
        assert "the same command with --resume continues from there" in err, err
        again.append("--resume")
    # Space is back: the same command succeeds.
    run(again, check=0)
    assert (out / "summary.json").exists()
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "out"]


def test_dedup_output_on_a_full_filesystem(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (the RLIMIT_FSIZE tests cover the rest)")
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(small)],
                      stderr=subprocess.PIPE).returncode != 0:
        pytest.skip("mount -t tmpfs is not permitted here (a container without CAP_SYS_ADMIN)")
    try:
        path = corpus(tmp_path)
        out = small / "out"
        proc = run(["dedup", path, "--out", out, "--quiet", "--tmp-dir", tmp_path])
        err = proc.stderr.decode(errors="replace")
        assert proc.returncode == 1, err
        assert "No space left on device" in err and str(out) + ".tmp-" in err, err
        # No result; of the staging directory only the resume journal of what was read, for
        # `--resume` once there is space (test_dedup_resume.py).
        [staging] = os.listdir(small)
        assert staging.startswith("out.tmp-") and os.listdir(small / staging) == ["resume"]
        # An earlier complete result under the same name survives a failed --force run.
        few = write_jsonl(tmp_path / "few.jsonl", [{"id": i, "text": t}
                                                   for i, t in enumerate(base_texts(5))])
        run(["dedup", few, "--out", out, "--quiet"], check=0)  # removes the interrupted run's
        assert os.listdir(small) == ["out"]
        before = snapshot(out)
        proc = run(["dedup", path, "--out", out, "--quiet", "--force", "--tmp-dir", tmp_path])
        assert proc.returncode == 1
        assert snapshot(out) == before
        assert sorted(os.listdir(small))[0] == "out" and all(
            name.startswith("out.tmp-") for name in sorted(os.listdir(small))[1:])
    finally:
        subprocess.run(["umount", str(small)], check=True)


# --- simdup idf build -------------------------------------------------------------------------

def test_idf_build_full_disk_and_kill9_leave_no_partial_table(tmp_path):
    # Made-up words, so that the table is large (~40,000 words).
    rng = random.Random(6)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(5, 9)))
             for _ in range(40000)]
    path = write_jsonl(tmp_path / "in.jsonl", [
        {"id": i, "text": " ".join(rng.sample(words, 40))} for i in range(2000)])
    idf = tmp_path / "idf.txt"
    run(["idf", "build", path, "-o", idf, "-q"], check=0)
    good = idf.read_bytes()
    assert len(good) > 100_000

    # Disk full while writing: the old table stays, nothing half-written is left.
    proc = run_limited(["idf", "build", path, "-o", idf, "-q"], limit=65536)
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 1, err
    assert f"cannot write {idf}.tmp: File too large" in err, err
    assert idf.read_bytes() == good
    assert not (tmp_path / "idf.txt.tmp").exists()

    # kill -9 while it reads: through a pipe, killed once more than the pipe's buffer has been
    # taken (the write below returns only as the process reads).
    data = path.read_bytes() * 4
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    proc = subprocess.Popen([simdup_bin(), "idf", "build", "-", "-o", str(idf), "-q"],
                            stdin=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write(data[:len(data) // 2])
    proc.stdin.flush()
    proc.kill()
    proc.wait(timeout=60)
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass
    assert proc.returncode == -signal.SIGKILL
    assert idf.read_bytes() == good

    # A run killed between writing FILE.tmp and the rename leaves FILE.tmp: the next run
    # replaces it.
    (tmp_path / "idf.txt.tmp").write_bytes(b"half a table")
    run(["idf", "build", path, "-o", idf, "-q"], check=0)
    assert idf.read_bytes() == good
    assert not (tmp_path / "idf.txt.tmp").exists()


# --- the service ------------------------------------------------------------------------------

def wait_for_line(stream, text, timeout=60):
    """Reads a server's stderr until a line contains `text`; returns that line."""
    result = []

    def read():
        for line in stream:
            if text in line:
                result.append(line)
                return

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(timeout)
    assert result, f"no line with {text!r} on stderr within {timeout} s"
    return result[0]


def largest_file(directory):
    return max(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def stored_ids(client, sent):
    """Which of the sent documents the store holds (GET of each id)."""
    held = set()
    for doc_id in sent:
        status, _ = client.request("GET", f"/v1/crawl/documents/{doc_id}")
        assert status in (200, 404)
        if status == 200:
            held.add(doc_id)
    return held


def preload(client, acked):
    """1000 documents inserted and acknowledged before the fault."""
    rng = random.Random(1)
    for b in range(10):
        docs = [(f"a{b}-{i}", rng.getrandbits(64)) for i in range(100)]
        status, body = client.post("/v1/crawl/check-insert", {"documents": [
            {"id": d, "fingerprint": fp_hex(v)} for d, v in docs]})
        assert status == 200, body
        acked.update((d, v) for (d, v), r in zip(docs, body["results"]) if r["status"] == "new")


def write_until_refused(s, acked, sent):
    """Four clients insert batches at once until the service has refused more than 20; returns
    every answer as (status, body, whether an error answer had come before it was sent)."""
    answers = []
    lock = threading.Lock()
    refused = threading.Event()  # some request was answered with an error

    def writer(w):
        c = s.client()
        r = random.Random(100 + w)
        for b in range(200):
            docs = [(f"w{w}-{b}-{i}", r.getrandbits(64)) for i in range(50)]
            with lock:
                sent.update(docs)
            after_refusal = refused.is_set()
            status, body = c.post("/v1/crawl/check-insert", {"documents": [
                {"id": d, "fingerprint": fp_hex(v)} for d, v in docs]})
            if status != 200:
                refused.set()
            with lock:
                answers.append((status, body, after_refusal))
                if status == 200:
                    acked.update((d, v) for (d, v), res in zip(docs, body["results"])
                                 if res["status"] == "new")
            if status != 200 and len([a for a in answers if a[0] != 200]) > 20:
                break
        c.close()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


def assert_stopped_after(answers, failed_status, reason):
    """The request whose log write failed is answered `failed_status`; every request after an
    error answer is refused (503), none acknowledged, and the refusals say why and what to do."""
    statuses = [a[0] for a in answers]
    assert failed_status in statuses, statuses
    assert set(statuses) <= {200, 503, failed_status}, statuses
    # (Requests in flight at the failure may be acknowledged, from an earlier sync.)
    assert not [a for a in answers if a[0] == 200 and a[2]], answers
    for status, body, _ in answers:
        if status == 503:
            assert reason in body["error"]["message"], body
            assert "restart" in body["error"]["message"], body
    return next(body for status, body, _ in answers if status == failed_status)


def assert_refuses_everything_then_ends(s):
    """Reads included (the index may hold documents the store never got); then it ends as asked
    (not aborted by RocksDB when closing its failed log)."""
    client = s.client()
    for method, path, body in [
            ("POST", "/v1/crawl/check", {"id": "x", "fingerprint": fp_hex(1)}),
            ("POST", "/v1/crawl/check-insert", {"id": "x", "fingerprint": fp_hex(1)}),
            ("GET", "/v1/crawl/documents/a0-0", None),
            ("DELETE", "/v1/crawl/documents/a0-0", None),
            ("GET", "/healthz", None)]:
        status, answer = client.request(method, path, body)
        assert status == 503, (path, status, answer)
        assert "restart" in answer["error"]["message"]
    assert s.terminate() >= 0
    stderr = s.proc.stderr.read()
    assert "failed write of its log" in stderr, stderr


def assert_restart_keeps(data, acked, sent):
    """Restarted without the fault: everything acknowledged is there, only documents that were
    sent, and it takes writes again."""
    s = Server(["--data", str(data)])
    try:
        client = s.client()
        assert_all_stored(client, acked)
        held = stored_ids(client, sent)
        assert set(acked) <= held
        status, stats = client.request("GET", "/v1/crawl/stats")
        assert stats["documents"] == len(held)
        status, body = client.post("/v1/crawl/check-insert", {"id": "after",
                                                              "fingerprint": fp_hex(12345)})
        assert status == 200 and body["status"] == "new"
    finally:
        s.close()


SERVE = ["--window", "0", "--collection", "crawl", "--k", "3"]


# Other requests write while the log's write fails: RocksDB 7.8 (Debian's, built with assertions)
# aborts if its WAL writer is used again after a failed write, so every call that may write the
# log passes the backend's gate, which none passes after a failure (rocks_backend::through_gate).
# Before the gate, about 1 run in 6 ended with the service dead instead of answering 507.
def test_service_log_full_answers_507_then_503_and_keeps_what_it_acknowledged(tmp_path):
    data = tmp_path / "db"
    s = Server(["--data", str(data), *SERVE], preexec_fn=ignore_sigxfsz())
    acked, sent = {}, {}
    try:
        preload(s.client(), acked)
        sent.update(acked)
        # The disk fills: no file may grow past 64 KiB beyond the largest one there now.
        resource.prlimit(s.proc.pid, resource.RLIMIT_FSIZE,
                         (largest_file(data) + 65536, UNLIMITED))
        answers = write_until_refused(s, acked, sent)
        full = assert_stopped_after(answers, 507, "File too large")
        assert full["error"]["code"] == "no_space"
        assert "File too large" in full["error"]["message"] and ".log" in full["error"]["message"]
        # Space comes back; the service still refuses everything and says why.
        resource.prlimit(s.proc.pid, resource.RLIMIT_FSIZE, (UNLIMITED, UNLIMITED))
        assert_refuses_everything_then_ends(s)
    finally:
        s.close()
    assert_restart_keeps(data, acked, sent)


# The group commit's fsync runs while other requests write (rocks_backend::sync_log): a failed
# fsync of the log must stop the service the same way, with RocksDB's writer still in use by
# them, and never acknowledge a later request (a later fsync may succeed without the lost pages).
def test_service_log_sync_failure_answers_500_then_503_and_keeps_what_it_acknowledged(tmp_path):
    shim = os.environ.get("SIMDUP_FAIL_LOG_SYNC_LIB")
    assert shim and os.path.exists(shim), "SIMDUP_FAIL_LOG_SYNC_LIB (set by CTest) names no library"
    data, trigger = tmp_path / "db", tmp_path / "fail-syncs"
    env = {"LD_PRELOAD": shim, "SIMDUP_FAIL_LOG_SYNC": str(trigger),
           "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0"}
    s = Server(["--data", str(data), *SERVE], env=env)
    acked, sent = {}, {}
    try:
        preload(s.client(), acked)
        sent.update(acked)
        trigger.touch()  # from now on every fsync of the log fails (EIO)
        answers = write_until_refused(s, acked, sent)
        failed = assert_stopped_after(answers, 500, "Input/output error")
        assert failed["error"]["code"] == "io_error"
        assert ".log" in failed["error"]["message"], failed
        assert_refuses_everything_then_ends(s)
    finally:
        s.close()
    assert_restart_keeps(data, acked, sent)


def test_segment_file_full_keeps_serving_and_leaves_no_partial_file(tmp_path):
    data = tmp_path / "db"
    # k = 6: many tables, so a segment file is ten times the size of the log's records.
    s = Server(["--data", str(data), "--window", "0", "--collection", "crawl", "--k", "6",
                "--snapshot-docs", "100", "--expire-interval-ms", "20"],
               preexec_fn=ignore_sigxfsz())
    acked = {}
    rng = random.Random(2)
    try:
        client = s.client()

        def insert(prefix, batches):
            for b in range(batches):
                docs = [(f"{prefix}{b}-{i}", rng.getrandbits(64)) for i in range(500)]
                status, body = client.post("/v1/crawl/insert", {"documents": [
                    {"id": d, "fingerprint": fp_hex(v)} for d, v in docs]})
                assert status == 200, body
                acked.update(docs)

        insert("a", 4)
        segments = data / "segments"
        deadline = time.time() + 60

        def saved():  # finished segment files only: a save writes NAME.tmp, then renames it
            return sorted(p for p in segments.iterdir() if not p.name.endswith(".tmp")) \
                if segments.exists() else []

        while not saved() and time.time() < deadline:
            time.sleep(0.02)
        first = saved()
        assert len(first) == 1
        # The next segment file is larger than the first; the log stays far below the limit.
        limit = first[0].stat().st_size
        assert max(p.stat().st_size for p in data.glob("*.log")) < limit // 2
        resource.prlimit(s.proc.pid, resource.RLIMIT_FSIZE, (limit, UNLIMITED))
        insert("b", 2)
        # The next save fails, and says so naming the file.
        line = wait_for_line(s.proc.stderr, ".idx.tmp: File too large")
        assert str(segments) in line, line
        assert sorted(segments.iterdir()) == first  # no partial file, no .tmp
        # The store is the source of truth: the service goes on serving.
        insert("c", 1)
        assert_all_stored(client, acked)
        status, _ = client.request("GET", "/healthz")
        assert status == 200
        s.kill9()
    finally:
        s.close()

    s = Server(["--data", str(data)])
    try:
        client = s.client()
        assert_all_stored(client, acked)
        assert client.request("GET", "/v1/crawl/stats")[1]["documents"] == len(acked)
    finally:
        s.close()
