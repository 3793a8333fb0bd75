"""`simdup dedup` on one huge record holds it a bounded number of times (issue 36, item 11: a
50 MB record took 851 MB peak RSS in dedup, 169 MB in fingerprint): its peak RSS stays within a
small multiple of `simdup fingerprint`'s on the same record, and of the record's size."""

import json
import os
import random
import subprocess

from cli_harness import simdup_bin

RECORD_BYTES = 24 << 20


def peak_rss_bytes(args, tmp_path):
    """Runs `simdup ARGS`; returns the peak RSS of that process alone (wait4's rusage)."""
    env = dict(os.environ)
    # ASan's quarantine would hold freed blocks of either command; shadow memory scales both.
    env["ASAN_OPTIONS"] = "detect_leaks=0:quarantine_size_mb=0"
    with open(tmp_path / "stderr", "wb") as err:
        proc = subprocess.Popen([simdup_bin(), *map(str, args)], stdout=subprocess.DEVNULL,
                                stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, (tmp_path / "stderr").read_text(errors="replace")
    return usage.ru_maxrss * 1024


def test_one_huge_record_is_held_a_bounded_number_of_times(tmp_path):
    rng = random.Random(36)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz")
                          for _ in range(rng.randint(2, 10))) for _ in range(20000)]
    words, size = [], 0
    while size < RECORD_BYTES:
        w = rng.choice(vocabulary)
        words.append(w)
        size += len(w) + 1
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"id": "big", "text": " ".join(words)}) + "\n")
    fingerprint = peak_rss_bytes(["fingerprint", path, "-o", tmp_path / "fp.jsonl"], tmp_path)
    dedup = peak_rss_bytes(["dedup", path, "--out", tmp_path / "out", "-q"], tmp_path)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["documents"]["kept"] == 1
    # Before the fix: 3.5 times fingerprint's (16 times the record); now about 1.5 (7 times).
    assert dedup < 2.5 * fingerprint, (dedup, fingerprint)
    if not os.environ.get("SIMDUP_SANITIZE"):  # sanitizers' shadow memory grows with both
        assert dedup < 10 * RECORD_BYTES, dedup
