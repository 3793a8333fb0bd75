"""The frozen normalise, UTF-8 repair and jieba golden files are exactly what their generators
(Python's unicodedata and codecs, and Debian's python3-jieba: written from the definitions, not
from the C++ code) produce today. A generator or reference library that changed would
otherwise leave the C++ tests comparing against stale answers."""

import os
import pathlib
import subprocess
import sys

import pytest

GOLDEN = pathlib.Path(os.environ.get("SIMDUP_SOURCE_DIR", pathlib.Path(__file__).parents[2])) / "tests/data/golden"


@pytest.mark.parametrize(
    "generator, frozen",
    [
        ("gen_normalize.py", "normalize.tsv"),
        ("gen_utf8_repair.py", "utf8_repair.tsv"),
        ("jieba/make_golden.py", "jieba/jieba_golden.json"),
    ],
)
def test_generator_reproduces_frozen_file(tmp_path, generator, frozen):
    out = tmp_path / pathlib.Path(frozen).name
    subprocess.run([sys.executable, str(GOLDEN / generator), str(out)], check=True, capture_output=True)
    assert out.read_bytes() == (GOLDEN / frozen).read_bytes()
