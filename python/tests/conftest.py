"""Shared helpers of the simdup Python package tests: the source tree, the CLI, references.

CTest runs these with PYTHONPATH at the build tree's python/ directory and SIMDUP_BIN at the
CLI; run by hand with e.g.
PYTHONPATH=build/release/python SIMDUP_BIN=build/release/cli/simdup /usr/bin/python3 -m pytest python/tests
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("SIMDUP_SOURCE_DIR", Path(__file__).resolve().parents[2]))
GOLDEN = SOURCE_DIR / "tests" / "data" / "golden"
SAMPLE = SOURCE_DIR / "data" / "sample" / "news.jsonl"

# The independent references: the stdlib re-implementation of the simhash package's rules.
sys.path.insert(0, str(GOLDEN))
sys.path.insert(0, str(SOURCE_DIR / "tests" / "e2e"))

from cli_harness import simdup_bin  # noqa: E402 (after the path is set)


def run_cli(args, input=None, check=0):
    """Runs the simdup CLI; returns the CompletedProcess (bytes), asserting the exit code."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)  # the CLI links its sanitizer runtime itself
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    proc = subprocess.run([simdup_bin(), *[str(a) for a in args]], input=input,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=600)
    if check is not None:
        assert proc.returncode == check, proc.stderr.decode(errors="replace")
    return proc


def jsonl_lines(data):
    return [json.loads(line) for line in data.decode().splitlines() if line]


@pytest.fixture(scope="session")
def sample_records():
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def client():
    """A real LocalCluster of 2 worker processes on 127.0.0.1 for a test module (the Dask
    tests), closed after it."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()

