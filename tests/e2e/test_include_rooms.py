"""scripts/check_includes.py: the repository keeps the include rules of docs/architecture.md, and
the checker fails on each kind of crossing (run on a copy of the sources with one crossing added).
"""

import shutil
import subprocess
import sys

import pytest

from cli_harness import SOURCE_DIR

CHECKER = SOURCE_DIR / "scripts" / "check_includes.py"


def check(root=None):
    args = [sys.executable, str(CHECKER)] + (["--root", str(root)] if root else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_the_repository_keeps_the_rules():
    proc = check()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""


@pytest.fixture
def tree(tmp_path):
    """The sources the checker reads, copied without git (the checker then walks the tree)."""
    for part in ("docs", "include", "src", "cli", "python/src", "tests/unit", "bench", "fuzz"):
        shutil.copytree(SOURCE_DIR / part, tmp_path / part,
                        ignore=shutil.ignore_patterns("*.md", "*.json", "*.py", "corpus"))
    shutil.copy(SOURCE_DIR / "docs" / "architecture.md", tmp_path / "docs" / "architecture.md")
    assert check(tmp_path).returncode == 0, check(tmp_path).stdout
    return tmp_path


def add_line(path, line):
    text = path.read_text()
    path.write_text(line + "\n" + text)


def failures(root):
    proc = check(root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout


def test_an_adapter_may_not_include_a_private_header(tree):
    add_line(tree / "cli" / "main.cpp", '#include "io/line_input.hpp"')
    out = failures(tree)
    assert "cli/main.cpp:1: io/line_input.hpp: private to io" in out


def test_a_component_may_not_include_a_public_header_it_may_not_depend_on(tree):
    add_line(tree / "src" / "index" / "planner.cpp", "#include <simdup/fingerprint.hpp>")
    out = failures(tree)
    assert "src/index/planner.cpp:1: simdup/fingerprint.hpp: public header of features" in out


def test_a_public_header_follows_its_owner(tree):
    add_line(tree / "include" / "simdup" / "plan.hpp", "#include <simdup/reader.hpp>")
    assert "include/simdup/plan.hpp:1: simdup/reader.hpp: public header of io" in failures(tree)


def test_a_dependency_shares_only_its_listed_internal_headers(tree):
    add_line(tree / "src" / "dedup" / "batch.cpp", '#include "io/line_input.hpp"')
    assert "src/dedup/batch.cpp:1: io/line_input.hpp: private to io" in failures(tree)


def test_a_unit_test_sees_only_its_component_and_dependencies(tree):
    add_line(tree / "tests" / "unit" / "index" / "plan_test.cpp", '#include "features/hash.hpp"')
    assert "tests/unit/index/plan_test.cpp:1: features/hash.hpp: private to features" in failures(
        tree)


def test_the_cmake_dependencies_match_the_table(tree):
    cmake = tree / "src" / "index" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text().replace("DEPENDS util", "DEPENDS util features"))
    assert ("src/index/CMakeLists.txt: DEPENDS util features, docs/architecture.md says util"
            in failures(tree))


def test_every_public_header_has_an_owner(tree):
    (tree / "include" / "simdup" / "stray.hpp").write_text("#pragma once\n")
    assert "include/simdup/stray.hpp: no component lists it" in failures(tree)


def test_the_umbrella_holds_the_library_and_not_the_service(tree):
    umbrella = tree / "include" / "simdup" / "simdup.hpp"
    text = umbrella.read_text()
    assert "#include <simdup/plan.hpp>\n" in text
    umbrella.write_text(text.replace("#include <simdup/plan.hpp>\n", "")
                        + "#include <simdup/service.hpp>\n")
    out = failures(tree)
    assert "include/simdup/simdup.hpp: does not include simdup/plan.hpp" in out
    assert ("include/simdup/simdup.hpp: includes simdup/service.hpp, a header of service, which "
            "is included on its own") in out
