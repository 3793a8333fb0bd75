"""Parquet files for the end-to-end tests: written by DuckDB (the library simdup reads them with,
through tests/support/duckdb_sql.cpp) and by an independent writer (hyparquet-writer, run with
node), and read back by both."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

BUILD_DIR = Path(os.environ.get("SIMDUP_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
SUPPORT = Path(__file__).resolve().parents[1] / "support"
NODE_MODULES = Path(os.environ.get("SIMDUP_NODE_MODULES", "/opt/simdup/node/node_modules"))


def duckdb_sql_bin():
    """tests/simdup_duckdb_sql of the build under test ($SIMDUP_BUILD_DIR, else beside the CLI)."""
    path = BUILD_DIR / "tests" / "simdup_duckdb_sql"
    if not path.exists() and "SIMDUP_BIN" in os.environ:
        path = Path(os.environ["SIMDUP_BIN"]).resolve().parents[1] / "tests" / "simdup_duckdb_sql"
    if not path.exists():
        pytest.skip("this build has no Parquet support (no simdup_duckdb_sql: DuckDB not found)")
    return path


def duckdb(*statements):
    """Runs SQL statements in one DuckDB in-memory database."""
    proc = subprocess.run([str(duckdb_sql_bin()), *statements], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def lit(path):
    return "'" + str(path).replace("'", "''") + "'"


def duckdb_write(path, jsonl, compression="snappy", row_group_size=64, select="*"):
    """The rows of the JSONL file `jsonl` as a Parquet file written by DuckDB."""
    duckdb(f"COPY (SELECT {select} FROM read_json({lit(jsonl)}, format = 'newline_delimited')) "
           f"TO {lit(path)} (FORMAT parquet, COMPRESSION {compression}, "
           f"ROW_GROUP_SIZE {row_group_size})")
    return path


def duckdb_rows(path, tmp):
    """Every row of a Parquet file, read by DuckDB, as dicts in file order."""
    out = Path(tmp) / (Path(path).name + ".rows.json")
    duckdb(f"COPY (SELECT * FROM read_parquet({lit(path)})) TO {lit(out)} (FORMAT json)")
    return [json.loads(line) for line in out.read_text().splitlines() if line]


def duckdb_columns(path):
    """(name, type) of a Parquet file's columns, as DuckDB reads them."""
    out = Path(str(path) + ".schema.json")
    duckdb(f"COPY (SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "
           f"read_parquet({lit(path)}))) TO {lit(out)} (FORMAT json)")
    rows = [json.loads(line) for line in out.read_text().splitlines() if line]
    out.unlink()
    return [(r["column_name"], r["column_type"]) for r in rows]


def node_bin():
    node = shutil.which("node")
    if node is None or not (NODE_MODULES / "hyparquet-writer").is_dir():
        pytest.skip("node or hyparquet-writer missing (scripts/install-deps.sh installs them)")
    return node


def hyparquet_write(path, columns, codec="SNAPPY", row_group_size=64, dictionary_size=None):
    """A Parquet file written by hyparquet-writer: columns = [(name, type, values)]."""
    spec = {"columns": [{"name": n, "type": t, "data": v} for n, t, v in columns],
            "codec": codec, "rowGroupSize": row_group_size}
    if dictionary_size is not None:
        spec["dictionarySize"] = dictionary_size
    spec_path = Path(str(path) + ".spec.json")
    spec_path.write_text(json.dumps(spec))
    proc = subprocess.run([node_bin(), str(SUPPORT / "parquet_js.mjs"), "write", str(spec_path),
                           str(path)], capture_output=True, text=True, timeout=120)
    spec_path.unlink()
    assert proc.returncode == 0, proc.stderr
    return path


def hyparquet_rows(path):
    """Every row of a Parquet file, read by hyparquet (independent of DuckDB)."""
    out = Path(str(path) + ".hyparquet.json")
    proc = subprocess.run([node_bin(), str(SUPPORT / "parquet_js.mjs"), "read", str(path),
                           str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(out.read_text())
    out.unlink()
    return rows
