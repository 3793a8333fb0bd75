"""Shared set-up of the Python benchmarks: the build tree's package, the CLI, the sample, timing.

Run from the repository root after a release build, e.g.
  /usr/bin/python3 bench/python/bench_binding.py
(SIMDUP_BUILD_DIR picks another build tree; default build/release)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("SIMDUP_BUILD_DIR", ROOT / "build" / "release"))
sys.path.insert(0, str(BUILD / "python"))
CLI = str(BUILD / "cli" / "simdup")
SAMPLE = ROOT / "data" / "sample" / "news.jsonl"


def sample_texts():
    return [json.loads(l)["text"] for l in SAMPLE.read_text(encoding="utf-8").splitlines() if l]


def best_of(fn, repeat=3):
    """Smallest wall time of `repeat` runs (seconds) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def run_cli(args):
    subprocess.run([CLI, *map(str, args)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def utf8_mb(texts):
    return sum(len(t.encode("utf-8")) for t in texts) / 1e6
