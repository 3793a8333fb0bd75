"""Progress on stderr: shown when stderr is a terminal (a pseudo-terminal here), never with
--quiet, and never mixed into stdout. Input arrives slowly on stdin so that the run lasts long
enough for the periodic redraw."""

import json
import os
import pty
import subprocess
import threading
import time

from cli_harness import simdup_bin


def feed_slowly(pipe, records, seconds):
    """Writes the JSONL records over `seconds`, then closes the pipe."""
    step = seconds / len(records)
    for r in records:
        pipe.write((json.dumps(r) + "\n").encode())
        pipe.flush()
        time.sleep(step)
    pipe.close()


def run_with_terminal_stderr(args, records, seconds=1.6):
    """Runs simdup with stdout on a pipe and stderr on a pseudo-terminal; returns (rc, stdout,
    what the terminal received)."""
    master, slave = pty.openpty()
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    proc = subprocess.Popen([simdup_bin(), *[str(a) for a in args]], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    feeder = threading.Thread(target=feed_slowly, args=(proc.stdin, records, seconds))
    feeder.start()
    stdout = []
    reader = threading.Thread(target=lambda: stdout.append(proc.stdout.read()))
    reader.start()
    terminal = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed its side
            break
        if not chunk:
            break
        terminal += chunk
    feeder.join()
    reader.join()
    rc = proc.wait(timeout=60)
    os.close(master)
    return rc, stdout[0], terminal


RECORDS = [{"id": i, "text": f"record number {i} with some words to fingerprint " * 3}
           for i in range(40)]


def test_fingerprint_shows_progress_on_a_terminal_only():
    rc, out, term = run_with_terminal_stderr(["fingerprint", "-"], RECORDS)
    assert rc == 0
    assert len(out.decode().splitlines()) == len(RECORDS)  # stdout stays clean JSONL
    assert b"records" in term and b"MB/s" in term, term
    rc, out, term = run_with_terminal_stderr(["fingerprint", "--quiet", "-"], RECORDS)
    assert rc == 0 and len(out.decode().splitlines()) == len(RECORDS)
    assert b"records" not in term, term


def test_dedup_draws_a_progress_bar_on_a_terminal(tmp_path):
    out_dir = tmp_path / "out"
    rc, _, term = run_with_terminal_stderr(["dedup", "--out", out_dir, "-"], RECORDS)
    assert rc == 0
    assert b"docs" in term or b"documents" in term, term
    assert b"MB/s" in term, term
    assert (out_dir / "summary.json").exists()
    quiet_dir = tmp_path / "quiet"
    rc, _, term = run_with_terminal_stderr(["dedup", "--quiet", "--out", quiet_dir, "-"], RECORDS)
    assert rc == 0
    assert b"MB/s" not in term, term
