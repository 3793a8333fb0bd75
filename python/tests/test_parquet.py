"""Parquet through the Python package and the Dask driver: simdup.dedup("x.parquet") and
`python3 -m simdup.dask dedup 'shards/*.parquet'` decide exactly as `simdup dedup` does on the
same rows (docs/python.md, docs/distributed.md)."""

import json
import os
import subprocess
import sys

import simdup
from conftest import SAMPLE, run_cli
from parquet_harness import duckdb, duckdb_rows, lit


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
