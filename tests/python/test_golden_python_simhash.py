"""The frozen python-simhash golden vectors are exactly what their generator produces."""

import os
import pathlib
import subprocess
import sys

GOLDEN = pathlib.Path(os.environ.get("SIMDUP_SOURCE_DIR", pathlib.Path(__file__).parents[2])) / "tests/data/golden"


def test_generator_reproduces_frozen_file(tmp_path):
    out = tmp_path / "python_simhash.jsonl"
    subprocess.run([sys.executable, str(GOLDEN / "gen_python_simhash.py"), str(out)], check=True)
    assert out.read_bytes() == (GOLDEN / "python_simhash.jsonl").read_bytes()


def test_reference_matches_the_package_test_suite():
    # Values asserted by the simhash package's own tests (v2.x), checked against our reference.
    sys.path.insert(0, str(GOLDEN))
    try:
        import gen_python_simhash as ref
    finally:
        sys.path.pop(0)
    assert ref.simhash_features(["aaa", "bbb"]) == 57087923692560392
    many = [str(i) for i in range(500)]
    assert ref.simhash_features(many) == 7984652473404407437
    assert ref.simhash_features([(f, 50 * i) for i, f in enumerate(many)]) == 3372825719632739723
