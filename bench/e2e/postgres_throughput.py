#!/usr/bin/python3
"""Throughput of PostgreSQL in and out: `simdup dedup --from ... --to ...` (table to written
decisions) and `simdup fingerprint --from ... --to ...`, beside `psql \\copy` of the same rows
to a file (the ceiling: the server's cost of handing the texts out).

Starts its own server (initdb/pg_ctl in a temporary directory, the settings printed below),
loads data/sample/news.jsonl COPIES times, each copy's texts made distinct by a per-copy word
(so the copies are near duplicates of each other, as re-crawled pages are), and prints MB/s of
text. Run from the repository root:

  /usr/bin/python3 bench/e2e/postgres_throughput.py [--copies 40] [--simdup build/release/cli/simdup]
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from postgres_harness import Postgres, load_news  # noqa: E402

SETTINGS = ["-c shared_buffers=1GB", "-c max_wal_size=4GB", "-c checkpoint_timeout=30min"]


def timed(args, env):
    start = time.monotonic()
    proc = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.monotonic() - start
    if proc.returncode not in (0, 3):
        sys.exit(f"{args[:3]} failed ({proc.returncode}):\n{proc.stderr.decode()}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--simdup", default=str(ROOT / "build" / "release" / "cli" / "simdup"))
    parser.add_argument("--threads", default="0")
    args = parser.parse_args()
    pg = Postgres(SETTINGS)
    try:
        db = pg.create_database("bench")
        load_news(pg, db, table="news")
        conn = pg.connect(db)
        cur = conn.cursor()
        cur.execute("CREATE TABLE docs AS SELECT n.line + 10000 * k AS line, n.id || '-' || k AS id, "
                    "'copy' || k || ' ' || n.text AS text, n.url, n.title, n.time "
                    "FROM news n, generate_series(0, %s) k ORDER BY k, n.line", (args.copies - 1,))
        cur.execute("ALTER TABLE docs ADD PRIMARY KEY (id)")
        cur.execute("VACUUM ANALYZE docs")
        cur.execute("SELECT count(*), sum(octet_length(text)) FROM docs")
        rows, text_bytes = cur.fetchone()
        cur.execute("SELECT name, setting FROM pg_settings WHERE name IN ('shared_buffers', "
                    "'fsync', 'synchronous_commit', 'full_page_writes', 'max_wal_size', "
                    "'server_version') ORDER BY name")
        settings = ", ".join(f"{n}={v}" for n, v in cur.fetchall())
        conn.close()
        env = {**os.environ, **pg.env, "PGDATABASE": db}
        mb = text_bytes / 1e6
        print(f"rows {rows}, text {mb:.1f} MB; server: {settings}; cores {os.cpu_count()}")

        out = Path(pg.dir) / "copy.tsv"
        copy = ["psql", "-X", "-q", "-c", f"\\copy (SELECT id, text FROM docs) TO '{out}'"]
        timed(copy, env)  # warm the cache
        t = timed(copy, env)
        print(f"psql \\copy (id, text) to a file:            {t:6.2f} s  {mb / t:7.1f} MB/s")
        url = "postgresql://"
        # The same rows from the file \copy wrote (simdup's TSV escapes are COPY's): what
        # simdup costs without a database.
        runs = [
            ("simdup fingerprint FILE.tsv (no database)",
             ["fingerprint", str(out), "-o", "/dev/null"]),
            ("simdup dedup FILE.tsv (batch, no database)",
             ["dedup", str(out), "--out", str(Path(pg.dir) / "file-run"), "-q"]),
            ("simdup fingerprint --from --to (table)",
             ["fingerprint", "--from", url, "--table", "docs", "--to", url, "--to-table", "fps"]),
            ("simdup dedup --from --to (batch, default)",
             ["dedup", "--from", url, "--table", "docs", "--to", url, "--to-table", "decisions",
              "-q"]),
            ("simdup dedup --from --to (stream)",
             ["dedup", "--from", url, "--table", "docs", "--mode", "stream", "--to", url,
              "--to-table", "decisions_stream", "-q"]),
        ]
        for name, cmd in runs:
            t = timed([args.simdup, *cmd, "--threads", args.threads], env)
            print(f"{name:44s} {t:6.2f} s  {mb / t:7.1f} MB/s")
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
