"""`simdup fingerprint --from/--to postgresql://...` against a real PostgreSQL: the table holds
the file run's fingerprints (bigint, two's complement, converted back with the documented
SQL), and --resume finishes a run whose connection was killed without rewriting a row."""

import json
import threading

from cli_harness import jsonl, run
from postgres_harness import IN_FILE_ORDER, NEWS, load_news, query, slow_source, terminate_when

# docs/databases.md: the unsigned value as 16 hex digits, and as a numeric.
AS_HEX = "lpad(to_hex(fingerprint), 16, '0')"
AS_UNSIGNED = "fingerprint::numeric + CASE WHEN fingerprint < 0 THEN 18446744073709551616 ELSE 0 END"


def file_fingerprints():
    return {r["id"]: r["fingerprint"] for r in jsonl(run(["fingerprint", NEWS], check=0))}


def table_fingerprints(pg, db, table):
    rows = query(pg, db, f"SELECT id, {AS_HEX}, status, {AS_UNSIGNED} FROM {table}")
    for doc_id, hex_value, status, unsigned in rows:
        assert status == "ok" and int(hex_value, 16) == int(unsigned), (doc_id, hex_value)
    return {r[0]: r[1] for r in rows}


def test_fingerprints_table_matches_the_file_run(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    expected = file_fingerprints()
    assert any(int(v, 16) >= 1 << 63 for v in expected.values())  # negative bigints occur
    url = postgres.url(db)
    run(["fingerprint", "--from", url, "--table", "news", "--to", url, "--to-table", "fps"],
        check=0)
    assert table_fingerprints(postgres, db, "fps") == expected
    # Files in, table out; table in, JSONL out (the same lines as the file run).
    run(["fingerprint", NEWS, "--to", url, "--to-table", "fps_files"], check=0)
    assert table_fingerprints(postgres, db, "fps_files") == expected
    out = run(["fingerprint", "--from", url, "--query", IN_FILE_ORDER], check=0).stdout
    assert out == run(["fingerprint", NEWS], check=0).stdout


def test_short_and_null_texts(postgres):
    db = postgres.create_database()
    conn = postgres.connect(db)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id bigint, text text)")
    cur.executemany("INSERT INTO t VALUES (%s, %s)",
                    [(1, "a long enough text to have several shingles"), (2, "?"), (3, None)])
    conn.close()
    url = postgres.url(db)
    args = ["fingerprint", "--from", url, "--table", "t", "--to", url, "--to-table", "fps"]
    proc = run(args, check=1)
    assert b'table t row 3: text column "text" is NULL (id 3)' in proc.stderr
    proc = run([*args, "--on-error", "skip"], check=3)
    assert b"1 records skipped (null_text: 1)" in proc.stderr
    rows = query(postgres, db, "SELECT id, fingerprint IS NULL, status FROM fps ORDER BY id")
    assert rows == [("1", False, "ok"), ("2", True, "too_short")]


def test_killed_connection_then_resume(postgres):
    db = postgres.create_database()
    load_news(postgres, db)
    url = postgres.url(db)
    args = ["fingerprint", "--from", url, "--fetch-rows", "50", "--to", url, "--to-table", "fps",
            "--batch-rows", "100", "--run", "nightly"]

    def some_committed(cur):
        cur.execute("SELECT to_regclass('fps') IS NOT NULL")
        if not cur.fetchone()[0]:
            return False
        cur.execute("SELECT count(*) FROM fps")
        return cur.fetchone()[0] >= 300

    killed = []
    killer = threading.Thread(
        target=lambda: killed.append(terminate_when(postgres, db, "simdup source",
                                                    some_committed)))
    killer.start()
    proc = run([*args, "--query", slow_source()], check=1)
    killer.join()
    assert killed == [True]
    assert b"connection lost" in proc.stderr
    committed = query(postgres, db, "SELECT count(*) FROM fps")[0][0]
    assert 300 <= committed < 2103
    # The server skips the committed rows (MOVE); the rest is fingerprinted and written once.
    proc = run([*args, "--query", IN_FILE_ORDER, "--resume", "--stats"], check=0)
    assert f"{2103 - committed} records".encode() in proc.stderr
    assert table_fingerprints(postgres, db, "fps") == file_fingerprints()
    assert query(postgres, db, "SELECT DISTINCT run FROM fps") == [("nightly",)]
    # A run without --resume starts over (idempotent).
    run([*args, "--query", IN_FILE_ORDER], check=0)
    assert query(postgres, db, "SELECT count(*) FROM fps") == [(2103,)]


def test_file_input_resume_skips_written_rows(postgres, tmp_path):
    db = postgres.create_database()
    url = postgres.url(db)
    records = [json.loads(x) for x in NEWS.read_text(encoding="utf-8").splitlines()]
    part = tmp_path / "part.jsonl"
    part.write_text("".join(json.dumps(r) + "\n" for r in records[:700]))
    run(["fingerprint", part, "--to", url, "--to-table", "fps"], check=0)
    # The full file resumes after the 700 rows the interrupted run committed.
    run(["fingerprint", NEWS, "--to", url, "--to-table", "fps", "--resume"], check=0)
    assert table_fingerprints(postgres, db, "fps") == file_fingerprints()
