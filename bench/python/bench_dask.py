"""simdup.dask against the single-machine CLI on a synthetic corpus: time, CPU, shuffle bytes per
document per table, peak RSS per worker and of the CLI, the fraction of worker CPU outside C++,
and whether the decisions are the CLI's (its duplicates.jsonl).

    /usr/bin/python3 bench/python/bench_dask.py [--docs 1000000] [--shards 16] [--workers 1,2]
                                                [--dir /tmp/simdup-bench-dask] [--no-compare]
                                                [--partitions N]
                                                [--vocabulary uniform|zipf|random]

The corpus (written once per size and shard count into --dir): documents of 40-120 words; a
third belong to families of near copies (a few words changed), some are exact copies (case
changed) or re-crawls under one URL. The words: `uniform` (default, the corpus of the earlier
measurements) draws them uniformly from 20,000 words "w<number><letter>", whose shared
characters bias the fingerprints (most SimHash candidates are then chance collisions that
verification rejects, and their number grows with the square of the corpus); `zipf` from 50,000
random letter strings with Zipf frequencies, whose frequent words bias them too; `random`
uniformly from 200,000 random letter strings: unbiased fingerprints, candidates that grow with
the corpus. Run after a release build (SIMDUP_BUILD_DIR picks another build tree). Each run is
measured on a fresh LocalCluster (threads_per_worker=1), the CLI with --threads equal to the
workers.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import CLI  # noqa: E402  (puts the build's package on sys.path)

import simdup.dask as sdask  # noqa: E402


def zipf_vocabulary(rng, size: int = 50000):
    """Word-like strings (2-12 letters) and the cumulative Zipf distribution (s = 1) over them,
    as in natural text: a few words are frequent, most are rare."""
    lengths = np.clip(rng.poisson(5, size=size) + 2, 2, 12)
    letters = rng.integers(97, 123, size=(size, 12)).astype(np.uint8)
    words = np.unique([bytes(letters[i, :lengths[i]]).decode() for i in range(size)])
    rng.shuffle(words)
    weights = np.cumsum(1.0 / np.arange(1, len(words) + 1))
    return words, weights / weights[-1]


def random_vocabulary(rng, size: int = 200000):
    """Distinct random letter strings (3-10 letters), drawn uniformly: few character shingles
    are shared by chance, so the fingerprints are unbiased and chance SimHash candidates stay
    rare as the corpus grows."""
    lengths = rng.integers(3, 11, size=size)
    letters = rng.integers(97, 123, size=(size, 10)).astype(np.uint8)
    return np.unique([bytes(letters[i, :lengths[i]]).decode() for i in range(size)])


def make_corpus(directory: Path, docs: int, shards: int, seed: int = 5,
                vocabulary: str = "uniform") -> list:
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"part-{i:04d}.jsonl" for i in range(shards)]
    if all(p.exists() for p in paths) and (directory / "DONE").exists():
        return [str(p) for p in paths]
    rng = np.random.default_rng(seed)
    if vocabulary == "zipf":
        vocab, cdf = zipf_vocabulary(rng)

        def draw(n):
            return vocab[np.minimum(np.searchsorted(cdf, rng.random(n)), len(vocab) - 1)]
    else:
        vocab = (random_vocabulary(rng) if vocabulary == "random"
                 else np.array([f"w{i}{chr(97 + i % 26)}" for i in range(20000)]))

        def draw(n):
            return vocab[rng.integers(0, len(vocab), size=n)]
    per_shard = (docs + shards - 1) // shards
    made = 0
    for s, path in enumerate(paths):
        n = min(per_shard, docs - made)
        lines = []
        base = None
        for i in range(n):
            gid = made + i
            r = rng.random()
            if base is not None and r < 0.25:  # near copy of the previous original
                words = base.copy()
                at = rng.integers(0, len(words), size=int(rng.integers(1, 4)))
                words[at] = draw(len(at))
                text = " ".join(words)
            elif base is not None and r < 0.30:  # exact copy, case changed
                text = " ".join(base).upper()
            else:
                base = draw(int(rng.integers(40, 120)))
                text = " ".join(base)
            rec = {"id": gid, "text": text}
            if r > 0.98:
                rec["url"] = f"http://example.org/{gid // 3}"
            lines.append(json.dumps(rec))
        path.write_text("\n".join(lines) + "\n")
        made += n
    (directory / "DONE").write_text("")
    return [str(p) for p in paths]


def run_cli(paths, threads, out):
    """Wall seconds, CPU seconds, summary and peak RSS (bytes) of one `simdup dedup` run."""
    t0 = time.perf_counter()
    cli = subprocess.Popen([CLI, "dedup", *paths, "--out", str(out), "-q", "--force",
                            "--threads", str(threads)])
    _, status, usage = os.wait4(cli.pid, 0)
    cli.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if cli.returncode != 0:
        raise subprocess.CalledProcessError(cli.returncode, cli.args)
    summary = json.loads((Path(out) / "summary.json").read_text())
    return wall, usage.ru_utime + usage.ru_stime, summary, usage.ru_maxrss * 1024


def cli_decisions(out):
    """The CLI's duplicates.jsonl as {id: (duplicate_of, cluster)} (the corpus's ids are their
    ordinals, as the Dask frame's cluster column is)."""
    with open(Path(out) / "duplicates.jsonl") as f:
        rows = (json.loads(line) for line in f)
        return {r["id"]: (r["duplicate_of"], r["cluster"]) for r in rows}


def same_decisions(frame, ref) -> bool:
    """Every document kept or dropped as the CLI decided, each duplicate with the CLI's
    representative and cluster."""
    dropped = frame[~frame["keep"]]
    if len(dropped) != len(ref):
        return False
    return all(ref.get(i) == (d, c) for i, d, c in zip(
        dropped["id"].tolist(), dropped["duplicate_of"].tolist(), dropped["cluster"].tolist()))


def worker_usage(client):
    """Peak RSS (bytes), CPU seconds and CPU seconds inside simdup._core of each worker."""
    def usage():
        import simdup.dask
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_maxrss * 1024, r.ru_utime + r.ru_stime, simdup.dask._TimedCore.seconds
    return client.run(usage)


def task_seconds(client):
    """Seconds spent in simdup tasks per task prefix, from the scheduler's task streams."""
    def collect(dask_scheduler=None):
        out = {}
        for ts in dask_scheduler.task_prefixes.values():
            out[ts.name] = out.get(ts.name, 0.0) + sum(ts.all_durations.values())
        return out
    return client.run_on_scheduler(collect)


def run_dask(paths, workers, partitions):
    """The run's wall seconds, frame, summary, worker usage, task seconds and the CPU seconds of
    this process (the scheduler and the client)."""
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, host="127.0.0.1")
    client = Client(cluster)
    try:
        t0 = time.perf_counter()
        cpu0 = time.process_time()
        frame, summary = sdask.dedup(paths, client=client, partitions=partitions)
        got = frame.compute()
        wall = time.perf_counter() - t0
        driver = time.process_time() - cpu0
        rss = worker_usage(client)
        durations = task_seconds(client)
    finally:
        client.close()
        cluster.close()
    return wall, got, summary, rss, durations, driver


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--dir", default="/tmp/simdup-bench-dask")
    ap.add_argument("--no-compare", action="store_true", help="skip the CLI run")
    ap.add_argument("--partitions", type=int, default=None,
                    help="reduce partitions of the shuffles (default: simdup.dask's)")
    ap.add_argument("--vocabulary", choices=("uniform", "zipf", "random"), default="uniform")
    args = ap.parse_args()
    suffix = "" if args.vocabulary == "uniform" else f"-{args.vocabulary}"
    corpus = Path(args.dir) / f"docs-{args.docs}{suffix}-{args.shards}shards"
    t0 = time.perf_counter()
    paths = make_corpus(corpus, args.docs, args.shards, vocabulary=args.vocabulary)
    print(f"corpus: {args.docs} documents in {len(paths)} shards "
          f"({sum(os.path.getsize(p) for p in paths) / 1e6:.0f} MB), "
          f"{time.perf_counter() - t0:.1f} s to make or find")
    ref = None
    for workers in [int(w) for w in args.workers.split(",")]:
        if not args.no_compare:
            wall, cpu, summary, peak = run_cli(paths, workers, Path(args.dir) / "cli-out")
            print(f"CLI --threads {workers}: {wall:.1f} s wall, {cpu:.1f} s CPU, "
                  f"peak RSS {peak / 2**20:.0f} MiB, "
                  f"{args.docs / wall / workers:,.0f} docs/s per core, "
                  f"{summary['documents']['duplicates']} duplicates, "
                  f"{summary['pairs']['candidates']} candidate pairs of which "
                  f"{summary['pairs']['rejected_by_verify']} fail verification")
            if ref is None:
                ref = cli_decisions(Path(args.dir) / "cli-out")
        wall, got, summary, rss, durations, driver = run_dask(paths, workers, args.partitions)
        d = summary["distributed"]
        shuffled = d.get("shuffle_bytes", {})
        tables = d.get("near_tables", 1)
        print(f"dask {workers} worker(s): {wall:.1f} s wall, "
              f"{args.docs / wall / workers:,.0f} docs/s per worker, "
              f"{summary['documents']['duplicates']} duplicates, "
              f"CC rounds {d['components_rounds']}, {d['shuffle_partitions']} reduce partitions; "
              f"scheduler and client (this process) {driver:.1f} s CPU")
        for name, nbytes in shuffled.items():
            per_doc = nbytes / max(1, args.docs)
            extra = f" ({per_doc / tables:.1f} per table)" if name == "simhash" else ""
            print(f"  shuffle {name}: {nbytes / 1e6:.1f} MB, {per_doc:.1f} bytes/doc{extra}")
        tops = d.get("verified_by_top_byte_counts")
        if tops:
            print(f"  pairs across partitions sent with top-byte counts: {tops['pairs']}, "
                  f"ruled out by them {tops['ruled_out']}, sent again with shingle arrays "
                  f"{tops['sent_again']}")
        print("  peak RSS per worker: " + ", ".join(f"{v[0] / 2**20:.0f} MiB" for v in rss.values())
              + f"; worker CPU {sum(v[1] for v in rss.values()):.1f} s, "
              f"{args.docs / sum(v[1] for v in rss.values()):,.0f} docs per CPU second")
        print("  stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in summary["timings"].items()))
        total = sum(durations.values())
        in_core = sum(v for k, v in durations.items()
                      if k.startswith("simdup-") and k.split("-")[1] in C_HEAVY)
        print(f"  task time {total:.1f} s; in C++-heavy tasks {in_core / total:.0%} "
              f"(outside: {1 - in_core / total:.0%})")
        cpu = sum(v[1] for v in rss.values())
        in_cpp = sum(v[2] for v in rss.values())
        print(f"  worker CPU inside simdup._core calls: {in_cpp:.1f} s of {cpu:.1f} s "
              f"(outside C++: {1 - in_cpp / cpu:.0%}: numpy, pickling, Dask)")
        slowest = sorted(durations.items(), key=lambda kv: -kv[1])[:8]
        print("  task time by prefix: " + ", ".join(f"{k} {v:.1f} s" for k, v in slowest))
        if ref is not None:
            print(f"  same decisions as the CLI: {same_decisions(got, ref)}")


# Task prefixes whose time is mostly in simdup._core (signing, re-signing the shingle arrays of
# documents in pairs, all-pairs, Jaccard, clustering).
C_HEAVY = {"sign", "sketch", "simhash", "minhash", "verify", "cluster"}

if __name__ == "__main__":
    main()
