#!/usr/bin/python3
"""simdup.compat.Simhash against the simhash package's own algorithm, in pure Python, on real
paragraphs (data/sample/news.jsonl, English and Chinese, split at blank lines), in CPU time.
The target is >= 50x. The package itself is not installable here, so two baselines are run beside it:

  package algorithm  the simhash 2.x build_by_text steps (str.lower, re.findall, width-4
                     slide, sorted counts, md5 per feature, numpy unpackbits and sums in
                     batches of 200) written out here;
  stdlib reference   tests/e2e/simhash_reference.py (the tests' golden source), bit loops.

Every value is checked equal before timing. Arguments: [paragraphs (1000)] [rounds (5)]."""

import collections
import hashlib
import re
import sys
import time
from itertools import groupby

import numpy as np

from bench_common import ROOT, best_of, run_cli, sample_texts

sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import simhash_reference  # noqa: E402

from simdup.compat import Simhash  # noqa: E402

REG = r'[\w\u4e00-\u9fcc]+'


def package_algorithm(text, batch_size=200, cutoff=50):
    """The package's Simhash(text).value, step by step (count weights: the batch path)."""
    content = ''.join(re.findall(REG, text.lower()))
    shingles = [content[i:i + 4] for i in range(max(len(content) - 3, 1))]
    features = {k: sum(1 for _ in g) for k, g in groupby(sorted(shingles))}
    sums, batch, count = [], [], 0
    for f, w in features.items():
        count += w
        h = hashlib.md5(f.encode('utf-8')).digest()[-8:]
        if w > cutoff:
            sums.append(np.unpackbits(np.frombuffer(h, dtype='>B')) * w)
        else:
            batch.append(h * w)
            if len(batch) >= batch_size:
                sums.append(np.sum(np.reshape(np.unpackbits(np.frombuffer(b''.join(batch), dtype='>B')), (-1, 64)), 0))
                batch = []
        if len(sums) >= batch_size:
            sums = [np.sum(sums, 0)]
    if batch:
        sums.append(np.sum(np.reshape(np.unpackbits(np.frombuffer(b''.join(batch), dtype='>B')), (-1, 64)), 0))
    return int.from_bytes(np.packbits(np.sum(sums, 0) > count / 2).tobytes(), 'big')


def stdlib_reference(text):
    content = ''.join(re.findall(REG, text.lower()))
    shingles = [content[i:i + 4] for i in range(max(len(content) - 3, 1))]
    return simhash_reference.vote(collections.Counter(shingles).items())


def interleaved(fns, items, block=20):
    """CPU seconds (of this thread) per item of each fn, timed block by block in turn, so that
    the load of a shared machine falls on all of them alike."""
    totals = [0.0] * len(fns)
    for start in range(0, len(items), block):
        chunk = items[start:start + block]
        for i, fn in enumerate(fns):
            t0 = time.thread_time()
            for t in chunk:
                fn(t)
            totals[i] += time.thread_time() - t0
    return [t / len(items) for t in totals]


def main():
    paragraphs = [p.strip() for t in sample_texts() for p in t.split("\n\n") if len(p.strip()) >= 200]
    paragraphs = paragraphs[:int(sys.argv[1]) if len(sys.argv) > 1 else 1000]
    mean_len = sum(len(p) for p in paragraphs) / len(paragraphs)
    for p in paragraphs[:200]:
        assert Simhash(p).value == package_algorithm(p) == stdlib_reference(p), p[:60]
    # Several rounds, each interleaved: on a shared machine the load changes between rounds,
    # so the ratio of each round (both sides timed under the same load) is what is reported.
    # Each round gets new copies of the texts, so none has its UTF-8 form cached by an earlier
    # call.
    rounds = [interleaved([lambda t: Simhash(t).value, package_algorithm],
                          [p.encode().decode() for p in paragraphs])
              for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5)]
    ratios = sorted(pkg / fast for fast, pkg in rounds)
    fasts = sorted(fast for fast, _ in rounds)
    pkgs = sorted(pkg for _, pkg in rounds)
    fast2, ref = interleaved([lambda t: Simhash(t).value, stdlib_reference], paragraphs[:200])
    mid = len(rounds) // 2
    print(f"{len(paragraphs)} paragraphs, mean {mean_len:.0f} code points (values checked equal on 200), "
          f"{len(rounds)} rounds (min / median / max)")
    print(f"  simdup.compat.Simhash   {fasts[0] * 1e6:6.1f} / {fasts[mid] * 1e6:6.1f} / {fasts[-1] * 1e6:6.1f} us/paragraph")
    print(f"  package algorithm       {pkgs[0] * 1e6:6.1f} / {pkgs[mid] * 1e6:6.1f} / {pkgs[-1] * 1e6:6.1f} us/paragraph")
    print(f"  simdup is               {ratios[0]:6.1f} / {ratios[mid]:6.1f} / {ratios[-1]:6.1f} x faster "
          f"than the package algorithm (the ratio of each round)")
    print(f"  stdlib reference        {ref * 1e6:9.1f} us/paragraph   simdup is {ref / fast2:6.1f}x faster "
          f"(on the first 200)")
    fast = fasts[mid]
    # The library's own speed in this mode, through the CLI, on the same paragraphs.
    import json
    import tempfile
    from pathlib import Path
    mb = sum(len(p.encode()) for p in paragraphs) / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "paragraphs.jsonl"
        path.write_text("".join(json.dumps({"id": i, "text": p}) + "\n" for i, p in enumerate(paragraphs)))
        cli, _, _ = best_of(lambda: run_cli(["fingerprint", "--compat", "python-simhash", "--threads", 1,
                                             "-q", "-o", Path(tmp) / "out", path]))
    print(f"  MB per CPU second: simdup.compat.Simhash {mb / (fast * len(paragraphs)):.1f}, "
          f"simdup fingerprint --compat python-simhash (CLI, 1 thread) {mb / cli:.1f}")


if __name__ == "__main__":
    main()
