"""`simdup dedup --from/--to postgresql://...` against a real PostgreSQL started by the tests:
the database run decides exactly as the file run, bad input gives clear errors and skip
counts, runs are idempotent, and --resume completes a run whose connection was killed."""

import json
import threading
import time

import pytest

from cli_harness import run
from postgres_harness import IN_FILE_ORDER, NEWS, load_news, query, slow_source, terminate_when

COLUMNS = ["--url-column", "url", "--title-column", "title", "--time-column", "time"]






def decisions(pg, db, table="decisions", run_name="default"):
    """{id: (keep, cluster, duplicate_of, distance, layer, jaccard)} of one run."""
    rows = query(pg, db, f"SELECT id, keep, cluster, duplicate_of, distance, layer, jaccard "
                         f"FROM {table} WHERE run = %s", (run_name,))
    return {r[0]: tuple(r[1:]) for r in rows}


def file_decisions(out_dir):
    """The same map from a file run's kept.jsonl and duplicates.jsonl."""
    result = {}
    for i, line in enumerate((out_dir / "kept.jsonl").read_text(encoding="utf-8").splitlines()):
        result[json.loads(line)["id"]] = None  # kept: cluster filled below
    dups = [json.loads(line) for line in (out_dir / "duplicates.jsonl").read_text().splitlines()]
    for d in dups:
        result[d["id"]] = (False, d["cluster"], d["duplicate_of"], d["distance"], d["layer"],
                           d.get("jaccard"))
    return result


def assert_same_decisions(db_rows, out_dir):
    expected = file_decisions(out_dir)
    assert set(db_rows) == set(expected)
    kept = {i for i, v in expected.items() if v is None}
    assert {i for i, v in db_rows.items() if v[0]} == kept
    for doc_id, row in db_rows.items():
        if doc_id in kept:
            assert row[2:5] == (None, None, None), row
            continue
        keep, cluster, dup_of, distance, layer, jaccard = row
        e = expected[doc_id]
        assert (keep, cluster, dup_of, distance, layer) == e[:5], (doc_id, row, e)
        if e[5] is None:
            assert jaccard is None
        else:
            assert jaccard == pytest.approx(e[5], abs=1e-4)


def dedup(pg, db, *args, check=0, **kw):
    return run(["dedup", "--from", pg.url(db), *args], check=check, **kw)


def test_database_run_decides_like_the_file_run(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    run(["dedup", NEWS, "--out", tmp_path / "file", "-q"], check=0)
    proc = dedup(postgres, db, "--query", IN_FILE_ORDER, *COLUMNS, "--to", postgres.url(db),
                 "--to-table", "decisions", "--out", tmp_path / "db")
    assert b"decisions   table decisions, run default" in proc.stdout
    # Same rows in the same order: the same duplicates.jsonl, byte for byte, and the same kept
    # records (written from the row's columns, not the file's bytes).
    name = "duplicates.jsonl"
    assert (tmp_path / "db" / name).read_bytes() == (tmp_path / "file" / name).read_bytes()
    file_kept = [json.loads(x) for x in (tmp_path / "file" / "kept.jsonl").read_text().splitlines()]
    db_kept = [json.loads(x) for x in (tmp_path / "db" / "kept.jsonl").read_text().splitlines()]
    assert [(r["id"], r["text"], r["url"]) for r in db_kept] == [
        (r["id"], r["text"], r["url"]) for r in file_kept]
    rows = decisions(postgres, db)
    assert len(rows) == 2103
    assert_same_decisions(rows, tmp_path / "file")
    summary = json.loads((tmp_path / "db" / "summary.json").read_text())
    assert summary["parameters"]["inputs"] == ["query"]


def test_table_source_without_files_and_stream_mode(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    # The file run reads the rows in the table's own order (a plain scan, as the cursor does).
    rows = query(postgres, db, "SELECT id, text, url, title FROM news")
    ordered = tmp_path / "ordered.jsonl"
    ordered.write_text("".join(json.dumps({"id": r[0], "text": r[1], "url": r[2],
                                           "title": r[3]}) + "\n" for r in rows))
    for mode in ("batch", "stream"):
        run(["dedup", ordered, "--mode", mode, "--out", tmp_path / mode, "-q"], check=0)
        # No --out: only the table is written.
        dedup(postgres, db, "--table", "news", "--url-column", "url", "--title-column", "title",
              "--mode", mode, "--to", postgres.url(db), "--to-table", f"d_{mode}", "-q")
        assert_same_decisions(decisions(postgres, db, f"d_{mode}"), tmp_path / mode)


def test_kept_table_and_idempotent_rerun(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    args = ["--query", IN_FILE_ORDER, *COLUMNS, "--to", postgres.url(db), "--to-table",
            "decisions", "--to-kept-table", "kept", "--batch-rows", "500"]
    for _ in range(2):  # the second run replaces the first one's rows
        proc = dedup(postgres, db, *args)
        kept_ids = {r[0] for r in query(postgres, db, "SELECT id FROM decisions WHERE keep")}
        assert 1000 < len(kept_ids) < 2103
        assert f"kept rows   {len(kept_ids)} in table kept".encode() in proc.stdout
    assert query(postgres, db, "SELECT count(*), count(DISTINCT id) FROM decisions") == [
        (2103, 2103)]
    # All source columns, values unchanged.
    assert query(postgres, db, "SELECT count(*) FROM kept") == [(len(kept_ids),)]
    assert {r[0] for r in query(postgres, db, "SELECT id FROM kept")} == kept_ids
    assert query(postgres, db, "SELECT count(*) FROM kept k JOIN news n USING (id) WHERE "
                               "(k.line, k.text, k.url, k.title, k.time) IS NOT DISTINCT FROM "
                               "(n.line, n.text, n.url, n.title, n.time)") == [(len(kept_ids),)]
    # Another run name writing the same ids is refused by the primary key, naming the id.
    proc = dedup(postgres, db, *args[:-4], "--run", "other", check=1)
    assert b"already exists" in proc.stderr and b"decisions" in proc.stderr


def test_bad_rows_name_table_row_and_column(postgres, tmp_path):
    db = postgres.create_database()
    conn = postgres.connect(db)
    cur = conn.cursor()
    cur.execute("CREATE TABLE docs (n int, body text)")
    texts = [f"document number {i} talks about topic {i % 7} in some detail" for i in range(20)]
    texts[4] = None
    texts[9] = ""
    cur.executemany("INSERT INTO docs VALUES (%s, %s)", list(enumerate(texts)))
    conn.close()
    src = ["--table", "docs", "--id-column", "n", "--text-column", "body"]
    to = ["--to", postgres.url(db), "--to-table", "decisions"]
    proc = dedup(postgres, db, *src, *to, check=1)
    assert b'table docs row 5: text column "body" is NULL (id 4)' in proc.stderr
    assert query(postgres, db, "SELECT count(*) FROM decisions") == [(0,)]
    proc = dedup(postgres, db, *src, *to, "--on-error", "skip", "--out", tmp_path / "o", check=3)
    assert b'table docs row 10: text column "body" is empty (id 9)' in proc.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["documents"]["skipped"] == 2
    assert summary["skipped_reasons"] == {"empty_text": 1, "null_text": 1}
    assert query(postgres, db, "SELECT count(*) FROM decisions") == [(18,)]
    # Numeric ids are written back as JSON numbers.
    assert json.loads((tmp_path / "o" / "kept.jsonl").read_text().splitlines()[0])["id"] == 0

    proc = dedup(postgres, db, "--table", "docs", "--id-column", "n", *to, check=2)
    assert b'--text-column text: table docs has no column "text" (its columns: n, body)' in (
        proc.stderr)
    proc = dedup(postgres, db, "--table", "nope", *to, check=1)
    assert b'--table nope: relation "nope" does not exist' in proc.stderr
    proc = dedup(postgres, db, "--query", "SELEC 1", *to, check=1)
    assert b"--query: syntax error" in proc.stderr


def test_connection_strings_and_options(postgres, tmp_path):
    db = postgres.create_database()
    proc = run(["dedup", "--from", f"postgresql://simdup:secret@/{db}?host=/tmp", "--table", "t",
                "--out", tmp_path / "o"], check=2)
    assert b"--from: refusing a password on the command line" in proc.stderr
    assert b"secret" not in proc.stderr
    proc = run(["dedup", "--from", postgres.url(db), "--table", "t", "--to", f"password=x "
                f"dbname={db}", "--to-table", "d"], check=2)
    assert b"--to: refusing a password" in proc.stderr
    proc = run(["dedup", "--from", postgres.url(db), "--out", tmp_path / "o"], check=2)
    assert b"exactly one of --table and --query" in proc.stderr
    proc = run(["dedup", NEWS, "--from", postgres.url(db), "--table", "t", "--out",
                tmp_path / "o"], check=2)
    assert b"INPUT files and --from cannot be combined" in proc.stderr
    proc = run(["dedup", "--from", postgres.url(db), "--table", "t"], check=2)
    assert b"--out is required (or --to)" in proc.stderr
    proc = run(["dedup", "--from", postgres.url(db), "--table", "t", "--keep", "field:n", "--out",
                tmp_path / "o"], check=2)
    assert b"--keep field:NAME reads JSONL or CSV fields" in proc.stderr
    proc = run(["dedup", "--from", "postgresql:///nodb?host=/nonexistent", "--table", "t",
                "--out", tmp_path / "o"], check=1)
    assert b"--from: cannot connect to PostgreSQL" in proc.stderr
    # The libpq environment is a connection string too (PGHOST, PGDATABASE, ...).
    load_news(postgres, db)
    env = dict(postgres.env, PGDATABASE=db)
    run(["dedup", "--from", "postgresql://", "--table", "news", "--to", "postgresql://",
         "--to-table", "d", "-q"], check=0, env=env)
    assert query(postgres, db, "SELECT count(*) FROM d") == [(2103,)]


def test_sql_ascii_database_is_refused_and_latin1_is_converted(postgres, tmp_path):
    ascii_db = postgres.create_database(encoding="SQL_ASCII")
    conn = postgres.connect(ascii_db)
    conn.cursor().execute("CREATE TABLE t (id int, text text)")
    conn.close()
    proc = dedup(postgres, ascii_db, "--table", "t", "--out", tmp_path / "o", check=1)
    assert b"encoding is SQL_ASCII" in proc.stderr
    latin1 = postgres.create_database(encoding="LATIN1")
    conn = postgres.connect(latin1)
    conn.set_client_encoding("UTF8")
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id int, text text)")
    cur.execute("INSERT INTO t VALUES (1, 'café crème brûlée à la française, très bon')")
    conn.close()
    dedup(postgres, latin1, "--table", "t", "--out", tmp_path / "l", "-q")
    kept = json.loads((tmp_path / "l" / "kept.jsonl").read_text(encoding="utf-8"))
    assert kept["text"] == "café crème brûlée à la française, très bon"






def test_killed_source_connection_then_resume(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    clean = ["--query", IN_FILE_ORDER, *COLUMNS, "--mode", "stream", "--to", postgres.url(db)]
    dedup(postgres, db, *clean, "--to-table", "clean", "-q")
    args = [*COLUMNS, "--mode", "stream", "--to", postgres.url(db), "--to-table", "decisions",
            "--batch-rows", "100", "--run", "r1"]

    def some_committed(cur):
        cur.execute("SELECT to_regclass('decisions') IS NOT NULL")
        if not cur.fetchone()[0]:
            return False
        cur.execute("SELECT count(*) FROM decisions")
        return cur.fetchone()[0] >= 300

    killer = threading.Thread(
        target=lambda: killed.append(terminate_when(postgres, db, "simdup source",
                                                    some_committed)))
    killed = []
    killer.start()
    proc = dedup(postgres, db, "--query", slow_source(), "--fetch-rows", "50", *args, check=1)
    killer.join()
    assert killed == [True]
    assert b"connection lost" in proc.stderr and b"reading after row" in proc.stderr
    committed = query(postgres, db, "SELECT count(*) FROM decisions")[0][0]
    assert 300 <= committed < 2103 and committed % 100 == 0
    # --resume writes the rest; nothing is written twice (the id key would refuse it).
    dedup(postgres, db, "--query", IN_FILE_ORDER, *args, "--resume", "-q")
    assert decisions(postgres, db, "decisions", "r1") == decisions(postgres, db, "clean")


def test_killed_sink_connection_then_resume_in_batch_mode(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    # A trigger slows each committed batch down, so the test can kill the writer mid-run.
    conn = postgres.connect(db)
    conn.cursor().execute(
        "CREATE TABLE decisions (id text PRIMARY KEY, keep bool NOT NULL, cluster bigint NOT "
        "NULL, duplicate_of text, distance int, layer text, jaccard real, run text NOT NULL);"
        "CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$;"
        "CREATE TRIGGER slow AFTER INSERT ON decisions FOR EACH STATEMENT EXECUTE FUNCTION slow()")
    conn.close()
    args = ["--query", IN_FILE_ORDER, *COLUMNS, "--to", postgres.url(db), "--to-table",
            "decisions", "--batch-rows", "200"]

    def some_committed(cur):
        cur.execute("SELECT count(*) FROM decisions")
        return cur.fetchone()[0] >= 400

    killed = []
    killer = threading.Thread(
        target=lambda: killed.append(terminate_when(postgres, db, "simdup sink", some_committed)))
    killer.start()
    proc = dedup(postgres, db, *args, "--out", tmp_path / "o", check=1)
    killer.join()
    assert killed == [True]
    assert b"writing decisions to decisions" in proc.stderr and b"connection lost" in proc.stderr
    assert not (tmp_path / "o").exists()  # the output directory is committed only at the end
    committed = query(postgres, db, "SELECT count(*) FROM decisions")[0][0]
    assert 400 <= committed < 2103
    query(postgres, db, "DROP TRIGGER slow ON decisions; SELECT 1")
    dedup(postgres, db, *args, "--resume", "--out", tmp_path / "o", "-q")
    run(["dedup", NEWS, "--out", tmp_path / "file", "-q"], check=0)
    assert_same_decisions(decisions(postgres, db), tmp_path / "file")


def test_table_written_concurrently_reads_one_snapshot(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    stop = threading.Event()
    inserted = []

    def writer():
        conn = postgres.connect(db)
        cur = conn.cursor()
        # From the moment the run's cursor is fetching (its snapshot is taken).
        while not stop.is_set():
            cur.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                        "'simdup source' AND query LIKE 'FETCH%%'")
            if cur.fetchone()[0]:
                break
            time.sleep(0.01)
        i = 0
        while not stop.is_set():
            cur.execute("INSERT INTO news VALUES (%s, %s, %s, NULL, NULL, NULL)",
                        (100000 + i, f"late-{i}", f"a row written during the run, number {i}"))
            cur.execute("UPDATE news SET text = text || ' changed' WHERE line = %s", (1 + i,))
            inserted.append(i)
            i += 1
            time.sleep(0.01)
        conn.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        # Batch mode with --out reads the source twice: both passes see the run's snapshot.
        proc = dedup(postgres, db, "--query", slow_source(per_row=0.001), *COLUMNS, "--to",
                     postgres.url(db), "--to-table", "decisions", "--out", tmp_path / "o")
    finally:
        stop.set()
        thread.join()
    assert inserted, "the writer ran during the dedup run"
    assert b"2,103 documents read" in proc.stdout
    ids = {r[0] for r in query(postgres, db, "SELECT id FROM decisions")}
    assert len(ids) == 2103 and not any(i.startswith("late-") for i in ids)
    # A new run sees the rows written meanwhile.
    dedup(postgres, db, "--table", "news", "--to", postgres.url(db), "--to-table", "decisions",
          "-q")
    assert query(postgres, db, "SELECT count(*) FROM decisions")[0][0] == 2103 + len(inserted)
