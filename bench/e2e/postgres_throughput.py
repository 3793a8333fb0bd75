#!/usr/bin/python3
"""Throughput of PostgreSQL in and out: `simdup dedup --from ... --to ...` (table to written
decisions) and `simdup fingerprint --from ... --to ...`, beside `psql \\copy` of the same rows
to a file (the ceiling: the server's cost of handing the texts out).

Starts its own server (initdb/pg_ctl in a temporary directory, the settings printed below) and
loads two corpora, each measured against the \\copy of its own rows, printing MB/s of text
(wall clock) and each simdup command's own CPU seconds (which a loaded machine inflates less):

- sample x COPIES, the worst case: data/sample/news.jsonl COPIES times, each copy's texts made
  distinct by a per-copy word (so every document has COPIES - 1 near duplicates, as re-crawled
  pages do);
- the evaluation corpus (--eval, default eval/out/en.jsonl: real English with planted
  near-duplicate families; `/usr/bin/python3 eval/generate.py --lang en` writes it), the
  realistic case. `--eval none` leaves it out.

Run from the repository root:

  /usr/bin/python3 bench/e2e/postgres_throughput.py [--copies 20] [--eval eval/out/en.jsonl]
      [--simdup build/release/cli/simdup]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from postgres_harness import Postgres, load_news  # noqa: E402

SETTINGS = ["-c shared_buffers=1GB", "-c max_wal_size=4GB", "-c checkpoint_timeout=30min"]


def timed(args, env):
    """Wall seconds and the command's own CPU seconds (user + system; not the server's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 3):
        sys.exit(f"{args[:3]} failed ({proc.returncode}):\n{proc.stderr.decode()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu


def load_sample_copies(pg, db, table, copies):
    load_news(pg, db, table="news")
    conn = pg.connect(db)
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} AS SELECT n.line + 10000 * k AS line, "
                "n.id || '-' || k AS id, 'copy' || k || ' ' || n.text AS text, "
                "n.url, n.title, n.time "
                "FROM news n, generate_series(0, %s) k ORDER BY k, n.line", (copies - 1,))
    conn.close()


def load_jsonl(pg, db, table, path):
    """The records of a JSONL corpus (id, text, url, title, time), in file order."""
    conn = pg.connect(db)
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (line int, id text, text text, url text, title text, "
                "time timestamptz)")
    with open(path, encoding="utf-8") as f:
        rows = [(i + 1, r["id"], r["text"], r.get("url"), r.get("title"), r.get("time"))
                for i, r in enumerate(map(json.loads, f))]
    cur.executemany(f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s, %s)", rows)
    conn.close()


def measure(pg, db, table, label, args):
    conn = pg.connect(db)
    cur = conn.cursor()
    cur.execute(f"ALTER TABLE {table} ADD PRIMARY KEY (id)")
    cur.execute(f"VACUUM ANALYZE {table}")
    cur.execute(f"SELECT count(*), sum(octet_length(text)) FROM {table}")
    rows, text_bytes = cur.fetchone()
    conn.close()
    env = {**os.environ, **pg.env, "PGDATABASE": db}
    mb = text_bytes / 1e6
    print(f"\n{label}: table {table}, rows {rows}, text {mb:.1f} MB")
    out = Path(pg.dir) / f"{table}.tsv"
    copy = ["psql", "-X", "-q", "-c", f"\\copy (SELECT id, text FROM {table}) TO '{out}'"]
    timed(copy, env)  # warm the cache
    t, _ = timed(copy, env)
    name = "psql \\copy (id, text) to a file (ceiling)"
    print(f"  {name:44s} {t:6.2f} s  {mb / t:7.1f} MB/s")
    url = "postgresql://"
    # The same rows from the file \copy wrote (simdup's TSV escapes are COPY's): what
    # simdup costs without a database.
    runs = [
        ("simdup fingerprint FILE.tsv (no database)",
         ["fingerprint", str(out), "-o", "/dev/null"]),
        ("simdup dedup FILE.tsv (batch, no database)",
         ["dedup", str(out), "--out", str(Path(pg.dir) / f"{table}-file-run"), "-q"]),
        ("simdup fingerprint --from --to (table)",
         ["fingerprint", "--from", url, "--table", table, "--to", url, "--to-table",
          f"{table}_fps"]),
        ("simdup dedup --from --to (batch, default)",
         ["dedup", "--from", url, "--table", table, "--to", url, "--to-table",
          f"{table}_decisions", "-q"]),
        ("simdup dedup --from --to (stream)",
         ["dedup", "--from", url, "--table", table, "--mode", "stream", "--to", url,
          "--to-table", f"{table}_decisions_stream", "-q"]),
    ]
    for name, cmd in runs:
        t, cpu = timed([args.simdup, *cmd, "--threads", args.threads], env)
        print(f"  {name:44s} {t:6.2f} s  {mb / t:7.1f} MB/s  (CPU {cpu:5.2f} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--eval", default=str(ROOT / "eval" / "out" / "en.jsonl"),
                        help="JSONL evaluation corpus, or none")
    parser.add_argument("--simdup", default=str(ROOT / "build" / "release" / "cli" / "simdup"))
    parser.add_argument("--threads", default="0")
    args = parser.parse_args()
    if args.eval != "none" and not Path(args.eval).is_file():
        sys.exit(f"{args.eval} does not exist: run /usr/bin/python3 eval/generate.py --lang en "
                 "first, or pass --eval none")
    pg = Postgres(SETTINGS)
    try:
        db = pg.create_database("bench")
        load_sample_copies(pg, db, "docs", args.copies)
        if args.eval != "none":
            load_jsonl(pg, db, "eval_docs", args.eval)
        conn = pg.connect(db)
        cur = conn.cursor()
        cur.execute("SELECT name, setting FROM pg_settings WHERE name IN ('shared_buffers', "
                    "'fsync', 'synchronous_commit', 'full_page_writes', 'max_wal_size', "
                    "'server_version') ORDER BY name")
        settings = ", ".join(f"{n}={v}" for n, v in cur.fetchall())
        conn.close()
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"server: {settings}; cores {os.cpu_count()}; load average {load}")
        measure(pg, db, "docs", f"sample x {args.copies} (worst case: every document has "
                f"{args.copies - 1} near copies)", args)
        if args.eval != "none":
            measure(pg, db, "eval_docs", f"{Path(args.eval).name} (realistic)", args)
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
