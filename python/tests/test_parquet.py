"""Parquet through the Python package and the Dask driver: simdup.dedup("x.parquet") and
`python3 -m simdup.dask dedup 'shards/*.parquet'` decide exactly as `simdup dedup` does on the
same rows (docs/python.md, docs/distributed.md)."""

import json
import os
import subprocess
import sys

import simdup
from conftest import SAMPLE, run_cli
from parquet_harness import duckdb, duckdb_rows, hyparquet_write, lit


def test_dedup_of_a_parquet_file_equals_that_of_its_rows_as_jsonl(tmp_path):
    pq = tmp_path / "news.parquet"
    duckdb(f"COPY (SELECT * FROM read_json({lit(SAMPLE)}, format = 'newline_delimited')) TO "
           f"{lit(pq)} (FORMAT parquet, ROW_GROUP_SIZE 500, COMPRESSION zstd)")
    got, got_summary = simdup.dedup(str(pq))
    want, want_summary = simdup.dedup(str(SAMPLE))
    assert got.equals(want) and (~got.keep).sum() > 0
    assert got_summary["documents"] == want_summary["documents"]


def test_dask_on_parquet_shards_makes_the_cli_decisions(tmp_path):
    shards = tmp_path / "shards"
    shards.mkdir()
    rows = f"read_json({lit(SAMPLE)}, format = 'newline_delimited')"
    duckdb(f"COPY (SELECT * FROM {rows} LIMIT 1200) TO {lit(shards / 'part-0.parquet')} "
           "(FORMAT parquet, ROW_GROUP_SIZE 300)",
           f"COPY (SELECT * FROM {rows} OFFSET 1200) TO {lit(shards / 'part-1.parquet')} "
           "(FORMAT parquet, ROW_GROUP_SIZE 300)")
    glob = str(shards / "*.parquet")
    run_cli(["dedup", glob, "--out", tmp_path / "cli", "-q"])
    proc = subprocess.run([sys.executable, "-m", "simdup.dask", "dedup", glob, "--out",
                           tmp_path / "dask", "--scheduler", "local:2", "-q"],
                          capture_output=True, text=True, env=dict(os.environ), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    dask_dups = (tmp_path / "dask" / "duplicates.jsonl").read_bytes()
    cli_dups = (tmp_path / "cli" / "duplicates.jsonl").read_bytes()
    assert dask_dups and dask_dups.splitlines() == cli_dups.splitlines()
    # The kept shards are Parquet, the kept rows with every column, in input order.
    kept = [r for p in sorted((tmp_path / "dask").glob("kept-*.parquet"))
            for r in duckdb_rows(p, tmp_path)]
    assert kept == duckdb_rows(tmp_path / "cli" / "kept.parquet", tmp_path)
    summary = json.loads((tmp_path / "dask" / "summary.json").read_text())
    assert summary["documents"] == json.loads(
        (tmp_path / "cli" / "summary.json").read_text())["documents"]


def test_dask_splits_a_parquet_file_by_row_groups(tmp_path):
    """A Parquet file larger than --partition-bytes becomes several partitions of whole row
    groups, read as rows of the file (ids and lines of the whole file): the same decisions and
    kept rows as the CLI's, in input order."""
    # hyparquet-writer keeps small row groups (DuckDB writes at least 2048 rows per group).
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    columns = [(name, "STRING", [r[name] for r in rows])
               for name in ("id", "text", "url", "title", "time")]
    pq = hyparquet_write(tmp_path / "news.parquet", columns, row_group_size=250)
    run_cli(["dedup", pq, "--out", tmp_path / "cli", "-q"])
    target = os.path.getsize(pq) // 3  # two row groups of 250 rows fit, three do not
    proc = subprocess.run([sys.executable, "-m", "simdup.dask", "dedup", str(pq), "--out",
                           tmp_path / "dask", "--scheduler", "local:2", "-q",
                           "--partition-bytes", str(target)],
                          capture_output=True, text=True, env=dict(os.environ), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "dask" / "summary.json").read_text())
    assert 4 <= summary["distributed"]["partitions"] <= 6, summary["distributed"]
    dask_dups = (tmp_path / "dask" / "duplicates.jsonl").read_bytes()
    assert dask_dups and dask_dups == (tmp_path / "cli" / "duplicates.jsonl").read_bytes()
    kept = [r for p in sorted((tmp_path / "dask").glob("kept-*.parquet"))
            for r in duckdb_rows(p, tmp_path)]
    assert len(list((tmp_path / "dask").glob("kept-*.parquet"))) >= 4
    assert kept == duckdb_rows(tmp_path / "cli" / "kept.parquet", tmp_path)
