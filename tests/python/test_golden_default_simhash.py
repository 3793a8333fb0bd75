"""The frozen default-mode golden vectors are exactly what their generator produces (needs
xxhsum from the Debian package xxhash, which scripts/install-deps.sh installs)."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

GOLDEN = pathlib.Path(os.environ.get("SIMDUP_SOURCE_DIR", pathlib.Path(__file__).parents[2])) / "tests/data/golden"


@pytest.mark.skipif(shutil.which("xxhsum") is None, reason="xxhsum (package xxhash) not installed")
def test_generator_reproduces_frozen_file(tmp_path):
    out = tmp_path / "default_simhash.jsonl"
    subprocess.run([sys.executable, str(GOLDEN / "gen_default_simhash.py"), str(out)], check=True)
    assert out.read_bytes() == (GOLDEN / "default_simhash.jsonl").read_bytes()
