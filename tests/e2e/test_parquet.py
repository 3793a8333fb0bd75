"""Parquet in and out (docs/formats.md#parquet): `simdup dedup|fingerprint|features` on Parquet
files written by DuckDB and by hyparquet-writer (several row groups, dictionary and plain
pages, snappy/zstd/gzip/uncompressed, nulls) decide exactly as on the same rows as JSONL;
kept.parquet and annotated.parquet keep every column; missing or mistyped columns and corrupt
files fail or are skipped and counted like other inputs."""

import json

import pytest

from cli_harness import run, write_jsonl
from dedup_corpus import corpus
from parquet_harness import (duckdb, duckdb_columns, duckdb_rows, duckdb_write, hyparquet_rows,
                             hyparquet_write, lit)

RECORDS, _ = corpus()


def dedup(tmp_path, name, *inputs, extra=(), check=0):
    out = tmp_path / name
    proc = run(["dedup", *map(str, inputs), "--out", out, "-q", *extra], check=check)
    return out, proc


def summary_of(out):
    return json.loads((out / "summary.json").read_text())


@pytest.fixture()
def jsonl_run(tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", RECORDS)
    out, _ = dedup(tmp_path, "out-jsonl", src)
    return src, out


@pytest.mark.parametrize("compression", ["snappy", "zstd", "gzip", "uncompressed"])
def test_duckdb_written_parquet_gives_the_same_decisions_as_jsonl(tmp_path, jsonl_run,
                                                                  compression):
    src, jout = jsonl_run
    pq = duckdb_write(tmp_path / "rows.parquet", src, compression=compression, row_group_size=16)
    out, _ = dedup(tmp_path, "out-pq", pq)
    dups = (jout / "duplicates.jsonl").read_bytes()
    assert dups and (out / "duplicates.jsonl").read_bytes() == dups
    # kept.parquet: the kept input rows, every column, in input order.
    dropped = {json.loads(l)["id"] for l in dups.decode().splitlines()}
    rows = duckdb_rows(pq, tmp_path)
    assert duckdb_rows(out / "kept.parquet", tmp_path) == [r for r in rows if r["id"] not in dropped]
    assert duckdb_columns(out / "kept.parquet") == duckdb_columns(pq)
    s, js = summary_of(out), summary_of(jout)
    assert s["documents"] == js["documents"]
    assert s["parameters"]["output_format"] == "parquet"


def test_hyparquet_written_parquet_with_nulls_dictionary_and_plain_pages(tmp_path):
    # One column of each kind hyparquet-writer encodes: low-cardinality strings as dictionary
    # pages, unique texts as plain pages (dictionarySize 0 turns dictionaries off for it).
    records = [dict(r) for r in RECORDS]
    records[3]["text"] = None  # a null text: a bad record, as in JSONL
    records[5]["id"] = None  # a null id: generated, as in JSONL
    jsonl = write_jsonl(tmp_path / "rows.jsonl", records)
    jout, _ = dedup(tmp_path, "out-jsonl", jsonl, extra=["--on-error", "skip"], check=3)
    for codec in ["SNAPPY", "GZIP", "UNCOMPRESSED"]:
        pq = hyparquet_write(tmp_path / f"rows-{codec}.parquet", [
            ("id", "STRING", [r.get("id") for r in records]),
            ("text", "STRING", [r.get("text") for r in records]),
            ("url", "STRING", [r.get("url") for r in records]),
            ("time", "INT64", [r.get("time") for r in records]),
            ("site", "STRING", [("a", "b", None)[i % 3] for i in range(len(records))]),
        ], codec=codec, row_group_size=20)
        out = tmp_path / f"out-{codec}"
        proc = run(["dedup", pq, "--out", out, "--on-error", "skip"], check=3)  # not -q: messages
        # Generated ids name the file, so compare them apart from the rest.
        got = (out / "duplicates.jsonl").read_text().replace(str(pq), str(jsonl))
        assert got == (jout / "duplicates.jsonl").read_text()
        s = summary_of(out)
        assert s["documents"] == summary_of(jout)["documents"]
        assert s["skipped_reasons"] == {"invalid_input": 1}
        assert f"{pq}:4: missing text field 'text'" in proc.stderr.decode()
        # The independent reader sees every column of the kept rows, nulls included.
        kept = hyparquet_rows(out / "kept.parquet")
        dropped = {json.loads(l)["id"] for l in got.splitlines()}
        want = [{"id": r.get("id"), "text": r.get("text"), "url": r.get("url"),
                 "time": r.get("time"), "site": ("a", "b", None)[i % 3]}
                for i, r in enumerate(records)
                if r.get("text") is not None and (r.get("id") or f"{jsonl}:6") not in dropped]
        assert kept == want


def test_annotate_and_duplicates_parquet(tmp_path, jsonl_run):
    src, _ = jsonl_run
    jout, _ = dedup(tmp_path, "out-jsonl-annotated", src, extra=["--annotate"])
    pq = duckdb_write(tmp_path / "rows.parquet", src, row_group_size=32)
    out, _ = dedup(tmp_path, "out-pq", pq, extra=["--annotate", "--duplicates-parquet"])
    annotated = duckdb_rows(out / "annotated.parquet", tmp_path)
    notes = [json.loads(l)["simdup"] for l in (jout / "annotated.jsonl").read_text().splitlines()]
    assert len(annotated) == len(notes) == len(RECORDS)
    for row, note in zip(annotated, notes):
        assert {k[len("simdup_"):]: v for k, v in row.items() if k.startswith("simdup_")} == note
    names = [n for n, _ in duckdb_columns(out / "annotated.parquet")]
    assert names == [n for n, _ in duckdb_columns(pq)] + [
        "simdup_keep", "simdup_cluster", "simdup_duplicate_of", "simdup_distance",
        "simdup_layer", "simdup_jaccard"]
    dups = [json.loads(l) for l in (out / "duplicates.jsonl").read_text().splitlines()]
    as_parquet = duckdb_rows(out / "duplicates.parquet", tmp_path)
    # duplicates.jsonl leaves out a jaccard it does not have; the table has the column (null).
    assert as_parquet == [{"distance": None, "jaccard": None, **d} for d in dups]


def test_fingerprint_and_features_read_parquet(tmp_path, jsonl_run):
    src, _ = jsonl_run
    pq = duckdb_write(tmp_path / "rows.parquet", src, compression="zstd", row_group_size=10)
    for cmd in (["fingerprint"], ["features", "--top-k", "3"]):
        want = run([*cmd, src], check=0).stdout
        assert want and run([*cmd, pq], check=0).stdout == want


def test_globs_format_flag_and_magic(tmp_path, jsonl_run):
    src, jout = jsonl_run
    rows = duckdb_rows(duckdb_write(tmp_path / "all.parquet", src), tmp_path)
    half = len(rows) // 2
    shards = tmp_path / "shards"
    shards.mkdir()
    for i, (lo, hi) in enumerate([(0, half), (half, len(rows))]):
        duckdb(f"COPY (SELECT * FROM read_parquet({lit(tmp_path / 'all.parquet')}) "
               f"LIMIT {hi - lo} OFFSET {lo}) TO {lit(shards / f'part-{i}.parquet')} "
               "(FORMAT parquet)")
    out, _ = dedup(tmp_path, "out-glob", shards / "*.parquet")
    assert (out / "duplicates.jsonl").read_bytes() == (jout / "duplicates.jsonl").read_bytes()
    kept_ids = [r["id"] for r in duckdb_rows(out / "kept.parquet", tmp_path)]
    want_ids = [json.loads(l)["id"] for l in (jout / "kept.jsonl").read_text().splitlines()]
    assert kept_ids == want_ids  # both shards, in input order
    # No extension: --input-format parquet, or the PAR1 magic.
    bare = tmp_path / "rows.data"
    bare.write_bytes((tmp_path / "all.parquet").read_bytes())
    for extra in (["--input-format", "parquet"], []):
        out, _ = dedup(tmp_path, f"out-bare{len(extra)}", bare, extra=extra)
        assert (out / "duplicates.jsonl").read_bytes() == (jout / "duplicates.jsonl").read_bytes()


def test_missing_and_mistyped_columns_fail_or_are_skipped(tmp_path, jsonl_run):
    src, _ = jsonl_run
    no_text = duckdb_write(tmp_path / "no-text.parquet", src, select="id, url")
    int_text = duckdb_write(tmp_path / "int-text.parquet", src, select="id, length(text) AS text")
    list_url = duckdb_write(tmp_path / "list-url.parquet", src, select="id, text, [url] AS url")
    _, proc = dedup(tmp_path, "out1", no_text, check=1)
    assert (f"{no_text}: the Parquet file has no column 'text' (the text field; its columns: "
            "id, url)") in proc.stderr.decode()
    _, proc = dedup(tmp_path, "out2", int_text, check=1)
    assert (f"{int_text}: column 'text' (the text field) is BIGINT; it must be a string column"
            in proc.stderr.decode())
    _, proc = dedup(tmp_path, "out3", list_url, check=1)
    assert "column 'url' (the url field) is VARCHAR[]" in proc.stderr.decode()
    good = duckdb_write(tmp_path / "good.parquet", src)
    out, _ = dedup(tmp_path, "out4", no_text, good, int_text, extra=["--on-error", "skip"],
                   check=3)
    s = summary_of(out)
    assert s["documents"]["read"] == len(RECORDS)
    assert s["inputs"] == {"count": 3, "skipped": 2}
    # Another field name picks another column.
    renamed = duckdb_write(tmp_path / "body.parquet", src, select="id, text AS body")
    out, _ = dedup(tmp_path, "out5", renamed, extra=["--text-field", "body"])
    assert summary_of(out)["documents"]["read"] == len(RECORDS)


def test_corrupt_parquet_fails_or_is_skipped_and_counted(tmp_path, jsonl_run):
    src, _ = jsonl_run
    good = duckdb_write(tmp_path / "good.parquet", src, row_group_size=8)
    data = good.read_bytes()
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(data[: len(data) // 2])
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"PAR1" + bytes(range(256)) * 8 + b"PAR1")
    for bad in (truncated, garbage):
        _, proc = dedup(tmp_path, f"out-{bad.stem}", bad, check=1)
        err = proc.stderr.decode()
        assert f"{bad}: not a readable Parquet file: " in err and "--on-error skip" in err
        assert not (tmp_path / f"out-{bad.stem}").exists()
    out, proc = dedup(tmp_path, "out-skip", truncated, good, garbage,
                      extra=["--on-error", "skip"], check=3)
    s = summary_of(out)
    assert s["documents"]["read"] == len(RECORDS)
    assert s["inputs"] == {"count": 3, "skipped": 2}
    assert s["skipped_reasons"] == {"corrupt_input": 2}


def test_without_duckdb_parquet_is_a_clear_error_and_the_rest_works(tmp_path, jsonl_run):
    # libduckdb.so is loaded when a Parquet file is first read or written, not at start: a
    # machine without it (SIMDUP_DUCKDB_LIBRARY names the only place to look) runs every other
    # job, and a Parquet input or output fails naming the library and where it was looked for.
    src, out_jsonl = jsonl_run
    pq = duckdb_write(tmp_path / "rows.parquet", src)
    missing = tmp_path / "no" / "libduckdb.so"
    env = {"SIMDUP_DUCKDB_LIBRARY": str(missing)}
    proc = run(["fingerprint", pq], check=1, env=env)
    err = proc.stderr.decode()
    assert "Parquet needs DuckDB's libduckdb.so, which cannot be loaded" in err
    assert str(missing) in err and "docs/install.md" in err
    proc = run(["dedup", src, "--out", tmp_path / "pq-out", "-q", "--duplicates-parquet"],
               check=1, env=env)
    assert "libduckdb.so" in proc.stderr.decode()
    assert not (tmp_path / "pq-out").exists()
    out, _ = dedup(tmp_path, "plain", src)
    proc = run(["dedup", src, "--out", tmp_path / "no-duckdb", "-q"], check=0, env=env)
    assert ((tmp_path / "no-duckdb" / "duplicates.jsonl").read_bytes()
            == (out / "duplicates.jsonl").read_bytes())
    assert run(["fingerprint", src], check=0, env=env).stdout == run(["fingerprint", src],
                                                                      check=0).stdout
