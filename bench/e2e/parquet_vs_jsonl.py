#!/usr/bin/python3
"""`simdup dedup` on the same rows as JSONL and as Parquet: wall and CPU time of each, and the
Parquet run's cost over the JSONL run (the target: at most 10 % more wall time; docs/performance.md).

The rows are data/sample/news.jsonl repeated --copies times with fresh ids (so every copy is an
exact duplicate of the first), written as Parquet by DuckDB (snappy, DuckDB's default row
groups). Runs alternate between the formats, --runs each; medians are reported. With
--before OTHER_BUILD, every round also runs that build's simdup on the same files (before, then
after, each JSONL then Parquet), so a change is measured against its baseline under the same
load; the ratio of each round is printed too, and the load average before and after.

    bench/e2e/parquet_vs_jsonl.py --build build/release [--before BUILD] [--copies 20] [--runs 5]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]


def run_dedup(simdup, src, out, threads):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([simdup, "dedup", str(src), "--out", str(out), "--force", "-q",
                    *(["--threads", str(threads)] if threads else [])], check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", type=Path, default=SOURCE / "build" / "release")
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--before", type=Path, help="a baseline build, run alternately with --build")
    args = ap.parse_args()
    builds = {"after": str(args.build / "cli" / "simdup")} if args.before else {
        "": str(args.build / "cli" / "simdup")}
    if args.before:
        builds = {"before": str(args.before / "cli" / "simdup"), **builds}
    sql = str(args.build / "tests" / "simdup_duckdb_sql")
    sample = (SOURCE / "data" / "sample" / "news.jsonl").read_text().splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        jsonl = tmp / "rows.jsonl"
        with jsonl.open("w") as f:
            for c in range(args.copies):
                for i, line in enumerate(sample):
                    rec = json.loads(line)
                    rec["id"] = f"{c}-{i}"
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        parquet = tmp / "rows.parquet"
        subprocess.run([sql, f"COPY (SELECT * FROM read_json('{jsonl}', format = "
                        f"'newline_delimited')) TO '{parquet}' (FORMAT parquet)"], check=True)
        print("load average %.2f %.2f %.2f" % os.getloadavg())
        times = {(b, f): [] for b in builds for f in ("jsonl", "parquet")}
        same = True
        for _ in range(args.runs):
            for b, simdup in builds.items():
                for name, src in (("jsonl", jsonl), ("parquet", parquet)):
                    out = tmp / f"out-{b}-{name}"
                    times[(b, name)].append(run_dedup(simdup, src, out, args.threads))
                same = same and ((tmp / f"out-{b}-jsonl" / "duplicates.jsonl").read_bytes()
                                 == (tmp / f"out-{b}-parquet" / "duplicates.jsonl").read_bytes())
        rows = len(sample) * args.copies
        print(f"rows {rows}, JSONL {jsonl.stat().st_size / 1e6:.1f} MB, "
              f"Parquet {parquet.stat().st_size / 1e6:.1f} MB, same duplicates.jsonl: {same}")
        for b in builds:
            med = {}
            for name in ("jsonl", "parquet"):
                ts = times[(b, name)]
                med[name] = (statistics.median(t[0] for t in ts),
                             statistics.median(t[1] for t in ts))
                print(f"{b:6} {name:8} wall {med[name][0]:.3f} s  cpu {med[name][1]:.3f} s  "
                      f"(median of {args.runs}; walls {', '.join(f'{t[0]:.2f}' for t in ts)}; "
                      f"cpus {', '.join(f'{t[1]:.2f}' for t in ts)})")
            rounds = [p[0] / j[0] for j, p in zip(times[(b, "jsonl")], times[(b, "parquet")])]
            print(f"{b:6} parquet/jsonl: wall {med['parquet'][0] / med['jsonl'][0]:.3f}, "
                  f"cpu {med['parquet'][1] / med['jsonl'][1]:.3f}; wall ratio of each round "
                  f"{', '.join(f'{r:.2f}' for r in rounds)}")
        print("load average %.2f %.2f %.2f" % os.getloadavg())
        return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
