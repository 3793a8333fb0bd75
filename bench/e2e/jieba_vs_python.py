#!/usr/bin/python3
"""simdup's jieba against Python jieba on the same real Chinese text (manpages-zh): speed of both,
the ratio, and how many sentences get identical words.

  /usr/bin/python3 bench/e2e/jieba_vs_python.py --bin build/release/bench/bench_jieba_vs_python
      [--docs N] [--show K]

Builds the corpus (one sentence per line) in a temporary directory, times jieba.lcut over it
(dictionary already loaded), runs the C++ harness on the same file, compares line by line.
Speeds are CPU time of one thread on both sides."""

import argparse
import logging
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "e2e"))
import jieba_corpus  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="path of bench_jieba_vs_python")
    parser.add_argument("--docs", type=int, default=0, help="use only the first N manual pages")
    parser.add_argument("--show", type=int, default=10, help="print the first K differences")
    args = parser.parse_args()

    import jieba

    jieba.setLogLevel(logging.WARNING)
    t0 = time.process_time()
    jieba.initialize()
    py_load = time.process_time() - t0

    sents = jieba_corpus.sentences(jieba_corpus.documents(limit=args.docs or None))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        words_file = os.path.join(tmp, "words.txt")
        with open(corpus, "w", encoding="utf-8", newline="\n") as f:
            f.writelines(s + "\n" for s in sents)
        nbytes = sum(len(s.encode("utf-8")) for s in sents)

        t0 = time.process_time()  # CPU time, like the C++ side: fair on a busy machine
        expected = [jieba.lcut(s) for s in sents]
        py_s = time.process_time() - t0

        res = subprocess.run([args.bin, "--words", words_file, corpus], check=True, capture_output=True, text=True)
        stats = dict(line.split() for line in res.stdout.splitlines())
        with open(words_file, encoding="utf-8", newline="\n") as f:
            got = [line.rstrip("\n").split("\x1f") if line != "\n" else [] for line in f]

    same = sum(1 for e, g in zip(expected, got) if e == g)
    cpp_mb_s = float(stats["cpp_segment_mb_s"])
    py_mb_s = nbytes / 1e6 / py_s
    print(f"corpus: {len(sents)} sentences, {nbytes / 1e6:.2f} MB of UTF-8 (manpages-zh)")
    print(f"python jieba: {py_mb_s:.2f} MB/s (dictionary load {py_load:.2f} s)")
    print(f"simdup jieba: {cpp_mb_s:.2f} MB/s (dictionary load {float(stats['cpp_load_s']):.3f} s)")
    print(f"ratio: {cpp_mb_s / py_mb_s:.1f}x")
    print(f"identical sentences: {same}/{len(sents)} = {100.0 * same / len(sents):.3f}%")
    shown = 0
    for s, e, g in zip(sents, expected, got):
        if e != g and shown < args.show:
            print(f"  DIFF {s!r}\n    python {e}\n    simdup {g}")
            shown += 1
    return 0 if len(got) == len(sents) else 1


if __name__ == "__main__":
    sys.exit(main())
