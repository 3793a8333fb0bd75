"""A real, private PostgreSQL for the tests: initdb and pg_ctl (Debian's postgresql-15) in a
temporary directory, listening only on a Unix socket there, run as an unprivileged user (the
`postgres` system user when the tests run as root, as in CI), stopped at the end.

Tests use the `postgres` fixture of conftest.py (module scope), a Postgres: `pg.url(db)` is a
libpq URI, `pg.connect(db)` a psycopg2 connection, `pg.create_database()` a fresh database per
test."""

import importlib.util
import itertools
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from cli_harness import SOURCE_DIR

PG_BIN = Path(os.environ.get("SIMDUP_PG_BIN", "/usr/lib/postgresql/15/bin"))
NEWS = SOURCE_DIR / "data" / "sample" / "news.jsonl"
# The sample in file order: the rows' heap order is not their insertion order (the free space
# map reuses pages), so runs that must match the file run read them ORDER BY line.
IN_FILE_ORDER = "SELECT * FROM news ORDER BY line"
PORT = 5432  # only names the socket file (.s.PGSQL.5432) inside the private directory
SUPERUSER = "simdup"


def have_postgres():
    if importlib.util.find_spec("psycopg2") is None:
        return False
    return (PG_BIN / "initdb").exists() and (PG_BIN / "pg_ctl").exists()


def _as_server_user(args):
    """Runs the server's programs as `postgres` when we are root (initdb refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


class Postgres:
    def __init__(self, settings=()):
        self.dir = Path(tempfile.mkdtemp(prefix="simdup-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        try:
            self._start(settings)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self._names = itertools.count()
        # libpq's environment for the clients the tests start (simdup, psql).
        self.env = {"PGHOST": str(self.dir), "PGPORT": str(PORT), "PGUSER": SUPERUSER,
                    "PGDATABASE": "postgres"}

    def _start(self, settings):
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        subprocess.run(_as_server_user([str(PG_BIN / "initdb"), "-D", str(self.data), "-U",
                                        SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C"]),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        options = [f"-k {self.dir}", "-c listen_addresses=''", f"-p {PORT}",
                   # Tests need no durability across power loss; the bench documents its own.
                   "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
                   *settings]
        subprocess.run(_as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l",
                                        str(self.log), "-o", " ".join(options), "-w", "start"]),
                       check=True, stdout=subprocess.DEVNULL)

    def url(self, db):
        return f"postgresql://{SUPERUSER}@/{db}?host={self.dir}&port={PORT}"

    def connect(self, db="postgres"):
        import psycopg2
        conn = psycopg2.connect(host=str(self.dir), port=PORT, user=SUPERUSER, dbname=db)
        conn.autocommit = True
        return conn

    def create_database(self, prefix="t", encoding="UTF8"):
        name = f"{prefix}{next(self._names)}"
        conn = self.connect()
        try:
            conn.cursor().execute(f"CREATE DATABASE {name} ENCODING '{encoding}' "
                                  "LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
        finally:
            conn.close()
        return name

    def stop(self):
        subprocess.run(_as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m",
                                        "immediate", "-w", "stop"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def load_news(pg, db, table="news"):
    records = [json.loads(line) for line in NEWS.read_text(encoding="utf-8").splitlines()]
    conn = pg.connect(db)
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (line int, id text PRIMARY KEY, text text, url text, "
                "title text, time timestamptz)")
    cur.executemany(f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s, %s)",
                    [(i + 1, r["id"], r["text"], r.get("url"), r.get("title"), r.get("time"))
                     for i, r in enumerate(records)])
    conn.close()
    return records


def query(pg, db, sql, args=()):
    conn = pg.connect(db)
    cur = conn.cursor()
    cur.execute(sql, args)
    rows = cur.fetchall()
    conn.close()
    return rows


def slow_source(table="news", per_row=0.002):
    """Rows in file order, each delayed on the server as it is fetched (a volatile column the
    planner keeps), so a test can act mid-run."""
    return f"SELECT n.*, pg_sleep({per_row}) AS delay FROM (SELECT * FROM {table} ORDER BY line) n"


def terminate_when(pg, db, application, condition, timeout=60):
    """Kills the backend of `application` once condition() holds; returns whether it did."""
    conn = pg.connect(db)
    cur = conn.cursor()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if condition(cur):
                cur.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            "WHERE application_name = %s", (application,))
                return cur.fetchone()[0] > 0
            time.sleep(0.05)
        return False
    finally:
        conn.close()
