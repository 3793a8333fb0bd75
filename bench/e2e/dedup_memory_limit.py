#!/usr/bin/python3
"""`simdup dedup` without a memory limit beside the same run under each --memory-limit given:
wall, CPU (wait4), the process's peak RSS (summary.json), each phase's peak and the bytes spilled from
summary.json, and whether duplicates.jsonl is byte-identical to the unlimited run's. The runs
alternate (no limit, then each limit) ROUNDS times; the best wall of each is printed.

Issue 33's target: at --memory-limit 256M on a 2M-document, roughly 1 GB corpus, peak RSS
<= 320 MB, the same duplicates.jsonl, wall <= 1.5x the unlimited run.

    /usr/bin/python3 bench/e2e/dedup_memory_limit.py [--simdup BIN] [--docs 2000000]
        [--corpus DIR] [--limits 256M] [--rounds 1] [--threads 0]

The corpus is bench/python/bench_dask.py's generator (8 JSONL shards, the random vocabulary),
made once in DIR (default /tmp/simdup-corpus-<docs>) and reused.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "python"))



def run(simdup, inputs, out, limit, threads):
    cmd = [simdup, "dedup", *inputs, "--out", str(out), "--force", "-q", "--threads", str(threads)]
    cmd += ["--memory-limit", limit]
    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed with {os.waitstatus_to_exitcode(status)}")
    summary = json.loads((out / "summary.json").read_text())
    digest = hashlib.md5((out / "duplicates.jsonl").read_bytes()).hexdigest()
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        # summary.json's peak: wait4's ru_maxrss keeps this Python process's peak across execve
        # (the corpus generator's, when it just made the corpus).
        "peak": summary["memory"]["peak_rss_bytes"],
        "memory": summary["memory"],
        "phases": summary["timings"]["phases"],
        "digest": digest,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simdup", default=str(ROOT / "build/release/cli/simdup"))
    ap.add_argument("--docs", type=int, default=2_000_000)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--limits", default="256M", help="comma-separated --memory-limit values")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()

    from bench_common import machine_line
    from bench_dask import make_corpus

    corpus = args.corpus or Path(tempfile.gettempdir()) / f"simdup-corpus-{args.docs}"
    inputs = make_corpus(corpus, args.docs, 8, vocabulary="random")
    size = sum(os.path.getsize(p) for p in inputs)
    limits = ["0"] + args.limits.split(",")
    best = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for limit in limits:
                r = run(args.simdup, inputs, Path(tmp) / f"out-{limit}", limit, args.threads)
                if limit not in best or r["wall"] < best[limit]["wall"]:
                    best[limit] = r
    print(machine_line())
    print(f"corpus: {corpus} ({args.docs:,} documents, {size / 1e6:,.0f} MB), best of {args.rounds}")
    base = best["0"]
    print(f"{'limit':>8} {'wall s':>8} {'x base':>7} {'CPU s':>8} {'peak MB':>8} "
          f"{'spilled MB':>11}  same duplicates.jsonl  peak MB by phase")
    for limit in limits:
        r = best[limit]
        phases = ", ".join(f"{name.split(',')[0]} {v / 1e6:.0f}"
                           for name, v in r["memory"]["peak_rss_bytes_by_phase"].items())
        print(f"{'none' if limit == '0' else limit:>8} {r['wall']:8.1f} {r['wall'] / base['wall']:7.2f} "
              f"{r['cpu']:8.1f} {r['peak'] / 1e6:8.1f} {r['memory']['spilled_bytes'] / 1e6:11.0f}  "
              f"{'yes' if r['digest'] == base['digest'] else 'NO':<21}  {phases}")
    return 0 if all(r["digest"] == base["digest"] for r in best.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
