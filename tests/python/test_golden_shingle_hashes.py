"""The frozen --verify shingle-hash golden vectors are exactly what their generator (written
from the definition, not from the C++ code) produces."""

import os
import pathlib
import subprocess
import sys

GOLDEN = pathlib.Path(os.environ.get("SIMDUP_SOURCE_DIR", pathlib.Path(__file__).parents[2])) / "tests/data/golden"


def test_generator_reproduces_frozen_file(tmp_path):
    out = tmp_path / "shingle_hashes.tsv"
    subprocess.run([sys.executable, str(GOLDEN / "gen_shingle_hashes.py"), str(out)], check=True)
    assert out.read_bytes() == (GOLDEN / "shingle_hashes.tsv").read_bytes()
