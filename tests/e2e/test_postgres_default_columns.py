"""`simdup dedup --from` reads the url, title and time columns by their default names, as the
file fields default to url, title and time; a layer whose column the source lacks does not run,
and the run says so (issue 36, item 4: --table news without --url-column kept 1,576 rows
instead of the file run's 1,570, and summary.json still listed the url layer)."""

import json

from cli_harness import run
from postgres_harness import IN_FILE_ORDER, NEWS, load_news, query

NOTE_URL = b'has no column "url": the url layer does not run'


def dedup(pg, db, *args, check=0):
    return run(["dedup", "--from", pg.url(db), *args], check=check)


def summary(out_dir):
    return json.loads((out_dir / "summary.json").read_text())


def test_default_columns_decide_as_the_file_run(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    run(["dedup", NEWS, "--out", tmp_path / "file", "-q"], check=0)
    file_summary = summary(tmp_path / "file")
    assert file_summary["duplicates_by_layer"]["url"] > 0  # the sample has URL duplicates
    # No column flags: the same rows in the same order decide byte for byte as the file does.
    proc = dedup(postgres, db, "--query", IN_FILE_ORDER, "--out", tmp_path / "db")
    assert b"note:" not in proc.stderr
    name = "duplicates.jsonl"
    assert (tmp_path / "db" / name).read_bytes() == (tmp_path / "file" / name).read_bytes()
    kept = [json.loads(x) for x in (tmp_path / "db" / "kept.jsonl").read_text().splitlines()]
    assert all("url" in r and "title" in r and "time" in r for r in kept)
    db_summary = summary(tmp_path / "db")
    assert db_summary["parameters"]["layers"] == ["url", "exact", "near"]
    assert db_summary["documents"]["kept"] == file_summary["documents"]["kept"]
    # The table in its own order, as the report's user ran it: the same clusters, so the same
    # number kept.
    dedup(postgres, db, "--table", "news", "--out", tmp_path / "table", "-q")
    assert summary(tmp_path / "table")["documents"]["kept"] == file_summary["documents"]["kept"]
    assert summary(tmp_path / "table")["duplicates_by_layer"] == file_summary["duplicates_by_layer"]


def test_a_layer_without_its_column_does_not_run_and_says_so(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    query(postgres, db, "CREATE TABLE bare AS SELECT line, id, text FROM news; SELECT 1")
    proc = dedup(postgres, db, "--table", "bare", "--layers", "url,title,exact,near",
                 "--keep", "newest", "--out", tmp_path / "bare")
    err = proc.stderr
    assert b'simdup dedup: note: table bare has no column "url": the url layer does not run' in err
    assert b'table bare has no column "title": the title layer does not run' in err
    assert b'table bare has no column "time"' in err and b"--keep newest sees no times" in err
    s = summary(tmp_path / "bare")
    assert s["parameters"]["layers"] == ["exact", "near"]
    assert s["duplicates_by_layer"]["url"] == 0 and s["duplicates_by_layer"]["title"] == 0
    # The same rows as a file without url fields decide the same way.
    rows = query(postgres, db, "SELECT id, text FROM bare ORDER BY line")
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in rows))
    run(["dedup", plain, "--out", tmp_path / "plain", "-q"], check=0)
    in_order = dedup(postgres, db, "--query", "SELECT * FROM bare ORDER BY line", "--out",
                     tmp_path / "ordered", "-q")
    assert in_order.stderr == b""  # -q: errors only
    name = "duplicates.jsonl"
    assert (tmp_path / "ordered" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    # An empty --url-column reads none: the layer is off, and the note names the flag.
    proc = dedup(postgres, db, "--table", "news", "--url-column", "", "--out", tmp_path / "e")
    assert b"note: --url-column is empty: the url layer does not run" in proc.stderr
    assert summary(tmp_path / "e")["parameters"]["layers"] == ["exact", "near"]


def test_named_columns_must_exist_and_a_default_time_must_hold_times(postgres, tmp_path):
    db = postgres.create_database()
    load_news(postgres, db)
    proc = dedup(postgres, db, "--table", "news", "--url-column", "link", "--out",
                 tmp_path / "x", check=2)
    assert b'--url-column link: table news has no column "link"' in proc.stderr
    assert not (tmp_path / "x").exists()
    # A "time" column of a type that holds no point in time (a time of day) is not read by
    # default: no bad records, and --keep newest is told it sees no times.
    query(postgres, db, "CREATE TABLE clock AS SELECT id, text, url, time::time AS time "
                        "FROM news; SELECT 1")
    proc = dedup(postgres, db, "--table", "clock", "--keep", "newest", "--out", tmp_path / "c")
    assert b'table clock has no column "time" (or not a time)' in proc.stderr
    s = summary(tmp_path / "c")
    assert s["documents"]["skipped"] == 0 and s["parameters"]["layers"] == ["url", "exact", "near"]
    # Named otherwise, a column must exist; a text column of ISO-8601 times is read.
    query(postgres, db, "CREATE TABLE stamped AS SELECT id, text, url, "
                        "to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
                        "AS published FROM news; SELECT 1")
    dedup(postgres, db, "--table", "stamped", "--time-column", "published", "--keep", "newest",
          "--out", tmp_path / "s", "-q")
    kept = [json.loads(x) for x in (tmp_path / "s" / "kept.jsonl").read_text().splitlines()]
    assert sum("time" in r for r in kept) > 0
