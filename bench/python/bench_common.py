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


def machine_line():
    """"cpu: MODEL, N cores, load average A B C": what a figure was measured on (lscpu's model
    name, from /proc/cpuinfo)."""
    model = "unknown"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    return f"cpu: {model}, {os.cpu_count()} cores, load average {load}"


def cpu_seconds():
    """CPU time of this process and its finished children (user + system). On a shared, busy
    machine CPU time is the stable measure: wall time mostly says how long we waited for a
    core."""
    import resource
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def best_of(fn, repeat=3):
    """Smallest CPU time and smallest wall time of `repeat` runs (seconds), and the last
    result."""
    best_cpu, best_wall, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        c0, w0 = cpu_seconds(), time.perf_counter()
        result = fn()
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, cpu_seconds() - c0)
    return best_cpu, best_wall, result


def run_cli(args):
    subprocess.run([CLI, *map(str, args)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def utf8_mb(texts):
    return sum(len(t.encode("utf-8")) for t in texts) / 1e6
