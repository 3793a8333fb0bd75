#!/usr/bin/python3
"""simdup.fingerprint on 1M short texts (lines of data/sample/news.jsonl, 20..200 code points,
cycled) against the library through the CLI (`simdup fingerprint --input-format text`) on the
same lines, at 1 thread and at all cores. Prints MB per CPU second (and per wall second); the
target is the library's MB/s.
Usage: bench_fingerprint_1m.py [N]"""

import os
import sys
import tempfile
from pathlib import Path

from bench_common import best_of, run_cli, sample_texts, utf8_mb

import simdup


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    lines = [l.strip() for t in sample_texts() for l in t.split("\n") if 20 <= len(l.strip()) <= 200]
    texts = [lines[i % len(lines)] for i in range(n)]
    mb = utf8_mb(texts)
    print(f"{n} texts, {mb:.1f} MB, mean {mb * 1e6 / n:.0f} bytes ({len(lines)} distinct lines)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lines.txt"
        path.write_text("\n".join(texts) + "\n", encoding="utf-8")
        for threads in (1, os.cpu_count()):
            cli, cli_wall, _ = best_of(lambda: run_cli(["fingerprint", "-q", "--input-format", "text",
                                              "--threads", threads, "-o", Path(tmp) / "out", path]), 2)
            py, py_wall, fps = best_of(lambda: simdup.fingerprint(texts, threads=threads), 2)
            assert len(fps) == n
            print(f"  threads={threads:<3} CLI {mb / cli:7.1f} MB/s per CPU s ({mb / cli_wall:6.1f} wall)   "
                  f"simdup.fingerprint {mb / py:7.1f} MB/s per CPU s ({mb / py_wall:6.1f} wall)   "
                  f"{n / py / 1e6:5.2f} M texts per CPU s")


if __name__ == "__main__":
    main()
