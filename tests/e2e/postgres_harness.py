"""A real, private PostgreSQL for the tests: initdb and pg_ctl (Debian's postgresql-15) in a
temporary directory, listening only on a Unix socket there, run as an unprivileged user (the
`postgres` system user when the tests run as root, as in CI), stopped at the end.

Use the `postgres` fixture (module scope): `pg.url(db)` is a libpq URI, `pg.connect(db)` a
psycopg2 connection, `pg.create_database()` a fresh database per test."""

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("SIMDUP_PG_BIN", "/usr/lib/postgresql/15/bin"))
PORT = 5432  # only names the socket file (.s.PGSQL.5432) inside the private directory
SUPERUSER = "simdup"


def have_postgres():
    try:
        import psycopg2  # noqa: F401
    except ImportError:
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
        self._names = itertools.count()
        # libpq's environment for the clients the tests start (simdup, psql).
        self.env = {"PGHOST": str(self.dir), "PGPORT": str(PORT), "PGUSER": SUPERUSER,
                    "PGDATABASE": "postgres"}

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


@pytest.fixture(scope="module")
def postgres():
    if not have_postgres():
        pytest.skip("PostgreSQL 15 (initdb, pg_ctl) or psycopg2 is not installed")
    pg = Postgres()
    try:
        yield pg
    finally:
        pg.stop()
