#!/usr/bin/python3
"""Text check-insert through `simdup serve` with and without MinHash bands, beside a baseline.

    /usr/bin/python3 bench/e2e/service_minhash.py [--baseline OLD/cli/simdup]
        [--simdup build/release/cli/simdup] [--load build/release/bench/bench_service_load]
        [--preload 200000] [--seconds 10] [--rounds 2]

Each configuration runs on a fresh RocksDB store: a collection at k = 4 with verification,
preloaded with --preload run-unique texts of 60 words (bench_service_load --text 60), then
check-insert in batches of 100 (4 connections) and of single documents (16 connections), each for
--seconds, with the server's CPU time per document. Configurations, in alternating rounds:

  baseline        the --baseline build at its defaults (before MinHash and the sketch setting)
  bands off       this build, minhash off and 128-hash sketches (the baseline's behaviour)
  defaults        this build's defaults (minhash 10x6, 512-hash sketches)

Prints one line per run and a table of every run, with the index memory per document
(index_bytes of the collection's stats) and the server's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from bench_common import machine_line  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
LINE = re.compile(r"([\d.]+) documents/s; latency p50 ([\d.]+) ms, p99 ([\d.]+) ms")
CPU = re.compile(r"server cpu [\d.]+ s \(([\d.]+) us/document\)")


def serve(simdup: str, data: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([simdup, "serve", "--data", str(data), "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if not proc.stdout.readline().startswith("listening on"):
        raise SystemExit(f"service_minhash: {simdup} serve did not start")
    return proc


def load(args, port: int, pid: int, batch: int, threads: int, extra: list[str]) -> dict:
    cmd = [args.load, "--port", str(port), "--collection", "bench", "--k", "4",
           "--verify", "jaccard:0.8", "--text", "60", "--threads", str(threads),
           "--seconds", str(args.seconds), "--batch", str(batch), "--server-pid", str(pid), *extra]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m, c = LINE.search(out), CPU.search(out)
    return {"docs_s": float(m.group(1)), "p50_ms": float(m.group(2)), "p99_ms": float(m.group(3)),
            "cpu_us": float(c.group(1))}


def run_one(args, simdup: str, extra: list[str], port: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="simdup-bench-minhash-") as tmp:
        proc = serve(simdup, Path(tmp) / "db", port)
        try:
            subprocess.run([args.load, "--port", str(port), "--collection", "bench", "--k", "4",
                            "--verify", "jaccard:0.8", "--text", "60", "--preload",
                            str(args.preload), "--threads", "4", "--seconds", "0.5", "--batch",
                            "100", *extra], check=True, capture_output=True)
            batched = load(args, port, proc.pid, 100, 4, extra)
            single = load(args, port, proc.pid, 1, 16, extra)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/bench/stats") as r:
                stats = json.load(r)
            status = Path(f"/proc/{proc.pid}/status").read_text()
            hwm = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024
        finally:
            proc.terminate()
            proc.wait(timeout=120)
    docs = stats["documents"]
    return {"batched": batched, "single": single, "documents": docs,
            "index_b_doc": stats["index_bytes"] / docs, "peak_mb": hwm / 1e6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--simdup", default=str(ROOT / "build/release/cli/simdup"))
    ap.add_argument("--load", default=str(ROOT / "build/release/bench/bench_service_load"))
    ap.add_argument("--baseline", help="an earlier build's simdup")
    ap.add_argument("--preload", type=int, default=200_000)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--port", type=int, default=18451)
    args = ap.parse_args()
    configs = []
    if args.baseline:
        configs.append(("baseline", args.baseline, []))
    configs += [("bands off", args.simdup, ["--minhash", "off", "--sketch", "128"]),
                ("defaults", args.simdup, [])]
    print(machine_line())
    runs = []
    for r in range(args.rounds):
        for name, simdup, extra in configs:
            got = run_one(args, simdup, extra, args.port)
            print(f"round {r + 1} {name}: {json.dumps(got)}", flush=True)
            runs.append((name, r + 1, got))
            time.sleep(1)
    # One row per run: on a shared machine, compare a configuration with the others of its round.
    print()
    print("| configuration | round | batched docs/s | batched server CPU/doc | single docs/s |"
          " single p50 / p99 | single server CPU/doc | index B/doc | peak RSS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, r, b in sorted(runs, key=lambda run: run[:2]):
        print(f"| {name} | {r} | {b['batched']['docs_s']:,.0f} | {b['batched']['cpu_us']:.1f} µs | "
              f"{b['single']['docs_s']:,.0f} | {b['single']['p50_ms']:.2f} / "
              f"{b['single']['p99_ms']:.2f} ms | {b['single']['cpu_us']:.1f} µs | "
              f"{b['index_b_doc']:.0f} | {b['peak_mb']:.0f} MB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
