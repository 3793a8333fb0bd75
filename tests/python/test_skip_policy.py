"""tests/support/simdup_skip_policy.py: under SIMDUP_REQUIRE_ALL=1 a skip fails (at collection
and at run time), a file in which no test ran fails, and an allow-listed skip passes and says
why; without the variable pytest behaves as usual. Each case runs pytest on a small file."""

import os
import pathlib
import subprocess
import sys

SUPPORT = pathlib.Path(__file__).resolve().parents[1] / "support"


def pytest_on(tmp_path, source, strict=True):
    test = tmp_path / "test_case.py"
    test.write_text(source)
    env = dict(os.environ, PYTHONPATH=str(SUPPORT))
    env.pop("SIMDUP_REQUIRE_ALL", None)
    if strict:
        env["SIMDUP_REQUIRE_ALL"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "simdup_skip_policy", str(test)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_skipped_test_fails(tmp_path):
    rc, out = pytest_on(tmp_path, """
import pytest
def test_runs(): pass
@pytest.mark.skipif(True, reason="frobnicator is not installed")
def test_needs_a_program(): pass
def test_skips_inside():
    pytest.skip("no server")
""")
    assert rc == 1, out
    assert "frobnicator is not installed" in out and "no server" in out
    assert "SIMDUP_REQUIRE_ALL=1" in out
    assert "1 passed" in out


def test_a_module_level_skip_fails(tmp_path):
    rc, out = pytest_on(tmp_path, """
import pytest
pytest.importorskip("no_such_module_here")
def test_never(): pass
""")
    assert rc != 0, out
    assert "no_such_module_here" in out


def test_a_file_where_nothing_ran_fails(tmp_path):
    rc, out = pytest_on(tmp_path, "def helper(): pass\n")
    assert rc != 0, out


def test_without_the_variable_skips_are_skips(tmp_path):
    rc, out = pytest_on(tmp_path, """
import pytest
def test_runs(): pass
@pytest.mark.skipif(True, reason="frobnicator is not installed")
def test_needs_a_program(): pass
""", strict=False)
    assert rc == 0, out
    assert "1 passed, 1 skipped" in out


def test_an_allowed_skip_passes_and_says_why(tmp_path, monkeypatch):
    rc, out = pytest_on(tmp_path, """
import pytest
import simdup_skip_policy
simdup_skip_policy.ALLOWED_SKIPS["needs a GPU"] = "no CI machine has one"
def test_runs(): pass
@pytest.mark.skipif(True, reason="needs a GPU")
def test_gpu(): pass
""")
    assert rc == 0, out
    assert "allowed skip:" in out and "needs a GPU" in out and "no CI machine has one" in out
