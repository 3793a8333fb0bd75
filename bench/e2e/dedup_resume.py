#!/usr/bin/python3
"""What the resume journal of `simdup dedup` costs and saves: an uninterrupted run of the build
under test beside the same run of a baseline build (one without the journal, e.g. the commit
before it), in alternating rounds; then a run killed with SIGKILL once the journal holds
--kill-at of it, and the --resume run that finishes it. Prints wall, CPU and peak RSS of each,
the journal's bytes per document and per input byte, and whether every output but summary.json
and report.html is byte-identical to the uninterrupted run's.

    /usr/bin/python3 bench/e2e/dedup_resume.py [--simdup BIN] [--baseline BIN]
        [--docs 500000] [--corpus DIR] [--rounds 3] [--kill-at 0.8] [--threads 0]

The corpus is bench/python/bench_dask.py's generator (8 JSONL shards, the random vocabulary),
made once in DIR (default /tmp/simdup-corpus-<docs>) and reused.
"""
import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "python"))



def outputs_digest(out):
    h = hashlib.md5()
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.name not in ("summary.json", "report.html"):
            h.update(str(p.relative_to(out)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def journal_bytes(parent):
    for d in parent.glob("out.tmp-*"):
        try:
            return os.path.getsize(d / "resume" / "chunks.bin")
        except OSError:
            pass
    return 0


def run(cmd, kill_when=None):
    """Runs cmd; with kill_when, SIGKILLs it once kill_when() holds. Wall, CPU, peak RSS (of
    this child alone: wait4's rusage)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if kill_when:
        while not kill_when():
            if proc.poll() is not None:
                sys.exit("the run ended before it could be killed")
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != (-signal.SIGKILL if kill_when else 0):
        sys.exit(f"{' '.join(cmd)} exited {code}: {proc.stderr.read().decode(errors='replace')}")
    # Peak RSS from summary.json: wait4's ru_maxrss keeps the forking Python process's.
    return {"wall": time.monotonic() - start, "cpu": usage.ru_utime + usage.ru_stime, "peak": 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simdup", default=str(ROOT / "build/release/cli/simdup"))
    ap.add_argument("--baseline", help="a build without the journal, run beside it")
    ap.add_argument("--docs", type=int, default=500_000)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kill-at", type=float, default=0.8,
                    help="the share of the whole journal written when the run is killed")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()

    from bench_common import machine_line
    from bench_dask import make_corpus

    corpus = args.corpus or Path(tempfile.gettempdir()) / f"simdup-corpus-{args.docs}"
    inputs = [str(p) for p in make_corpus(corpus, args.docs, 8, vocabulary="random")]
    size = sum(os.path.getsize(p) for p in inputs)
    flags = ["-q", "--threads", str(args.threads)]
    builds = {"journal": args.simdup}
    if args.baseline:
        builds["baseline"] = args.baseline
    best = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        digests = {}
        for _ in range(args.rounds):
            for name, binary in builds.items():
                out = tmp / f"out-{name}"
                shutil.rmtree(out, ignore_errors=True)
                r = run([binary, "dedup", *inputs, "--out", str(out), *flags])
                digests[name] = outputs_digest(out)
                done = json.loads((out / "summary.json").read_text())
                r["peak"] = done["memory"]["peak_rss_bytes"]
                if name == "journal":
                    r["journal"] = done["resume"]["journal_bytes"]
                if name not in best or r["wall"] < best[name]["wall"]:
                    best[name] = r
        whole = best["journal"]["journal"]
        work = tmp / "killed"
        work.mkdir()
        out = work / "out"
        cmd = [args.simdup, "dedup", *inputs, "--out", str(out), *flags]
        killed = run(cmd, kill_when=lambda: journal_bytes(work) >= args.kill_at * whole)
        replayed_bytes = journal_bytes(work)
        resumed = run(cmd + ["--resume"])
        summary = json.loads((out / "summary.json").read_text())
        resumed["peak"] = summary["memory"]["peak_rss_bytes"]
        same = outputs_digest(out) == digests["journal"]
        if args.baseline:
            same = same and digests["baseline"] == digests["journal"]

    print(machine_line())
    print(f"corpus: {corpus} ({args.docs:,} documents, {size / 1e6:,.0f} MB), best of "
          f"{args.rounds} alternating rounds")
    print(f"{'run':>34} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
    rows = [(f"uninterrupted, {name}", best[name]) for name in builds]
    rows += [(f"killed at {replayed_bytes / whole:.0%} of the journal", killed),
             ("--resume", resumed)]
    for label, r in rows:
        peak = f"{r['peak'] / 1e6:8.1f}" if r["peak"] else f"{'-':>8}"
        print(f"{label:>34} {r['wall']:8.2f} {r['cpu']:8.2f} {peak}")
    if args.baseline:
        print(f"journal cost: wall {best['journal']['wall'] / best['baseline']['wall']:.3f}x, "
              f"CPU {best['journal']['cpu'] / best['baseline']['cpu']:.3f}x the baseline")
    print(f"journal: {whole / 1e6:,.0f} MB, {whole / args.docs:,.0f} bytes per document, "
          f"{whole / size:.2f} bytes per input byte")
    phases = ", ".join(f"{name.split(',')[0]} {sec:.2f} s"
                       for name, sec in summary["timings"]["phases"].items())
    print(f"--resume phases: {phases}")
    print(f"resumed: {summary['resume']['replayed_documents']:,} documents replayed; killed + "
          f"resumed wall {(killed['wall'] + resumed['wall']) / best['journal']['wall']:.2f}x the "
          f"uninterrupted run; outputs identical: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
