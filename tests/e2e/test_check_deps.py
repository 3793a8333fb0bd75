"""scripts/check-deps.sh: the build's system files and the tests' Python modules all come from
packages that scripts/install-deps.sh installs, and a package missing from that list is caught,
named with the file that needs it."""

import os
import re
import subprocess
from pathlib import Path

import pytest


SOURCE = Path(os.environ["SIMDUP_SOURCE_DIR"])
BUILD = Path(os.environ["SIMDUP_BUILD_DIR"])
SCRIPT = SOURCE / "scripts" / "check-deps.sh"
INSTALL = SOURCE / "scripts" / "install-deps.sh"


def check(*args):
    return subprocess.run(["bash", str(SCRIPT), str(BUILD), *args], capture_output=True, text=True)


def without(tmp_path, package):
    """A copy of install-deps.sh whose package list lacks `package`."""
    text = INSTALL.read_text()
    pattern = rf"^\s*{re.escape(package)}\s.*\n"
    assert re.search(pattern, text, re.M), f"{package} is not listed in install-deps.sh"
    copy = tmp_path / "install-deps.sh"
    copy.write_text(re.sub(pattern, "", text, flags=re.M))
    return copy


def test_every_dependency_is_installed_by_the_script():
    out = check()
    assert out.returncode == 0, out.stderr
    files = int(re.search(r"(\d+) system files", out.stdout).group(1))
    assert files > 300  # headers of the C++ and C libraries, the link lines, the CMake look-ups


def test_every_listed_package_has_a_comment_saying_what_uses_it():
    body = re.search(r"^packages=\((.*?)^\)", INSTALL.read_text(), re.S | re.M).group(1)
    for line in body.splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            assert len(name.split()) == 1, f"one package per line: {line!r}"
            assert "#" in line and line.split("#", 1)[1].strip(), f"{name} has no comment"


def test_a_header_only_library_left_out_of_the_list_is_caught(tmp_path):
    out = check("--install-script", str(without(tmp_path, "libcli11-dev")))
    assert out.returncode == 1
    assert "'libcli11-dev'" in out.stderr
    assert "/usr/include/CLI/" in out.stderr


def test_a_python_module_left_out_of_the_list_is_caught(tmp_path):
    out = check("--install-script", str(without(tmp_path, "python3-pytest")))
    assert out.returncode == 1
    assert "'python3-pytest'" in out.stderr and "Python module 'pytest'" in out.stderr


def test_a_program_the_tests_run_left_out_of_the_list_is_caught(tmp_path):
    out = check("--install-script", str(without(tmp_path, "zstd")))
    assert out.returncode == 1
    assert "'zstd'" in out.stderr and "/usr/bin/zstd" in out.stderr


def test_a_listed_package_that_is_not_installed_is_reported(tmp_path):
    copy = tmp_path / "install-deps.sh"
    copy.write_text(INSTALL.read_text().replace("packages=(\n", "packages=(\n  no-such-pkg  # x\n"))
    out = check("--install-script", str(copy))
    assert out.returncode == 1
    assert "'no-such-pkg', which is not installed" in out.stderr


def test_a_directory_that_is_not_a_build_is_a_usage_error(tmp_path):
    out = subprocess.run(["bash", str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 2 and "not a configured Ninja build directory" in out.stderr


def test_an_npm_library_whose_pin_differs_from_its_manifest_is_caught(tmp_path):
    # DuckDB comes from npm into /opt/simdup/duckdb; its SIMDUP-NPM manifest must name the very
    # package and integrity install-deps.sh pins, or its files count as installed by hand.
    text = INSTALL.read_text()
    pin = re.search(r'"@duckdb/node-bindings-linux-x64@\S+ (sha512-\S+) ', text)
    assert pin, "install-deps.sh pins no DuckDB"
    if "libduckdb" not in check("--verbose").stdout:
        pytest.skip("this build does not link DuckDB (configured without Parquet)")
    copy = tmp_path / "install-deps.sh"
    copy.write_text(text.replace(pin.group(1), "sha512-AAAA"))
    out = check("--install-script", str(copy))
    assert out.returncode == 1
    assert "/opt/simdup/duckdb/lib/libduckdb.so" in out.stderr
    assert "belongs to no Debian package" in out.stderr
