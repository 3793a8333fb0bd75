"""`cmake --install` of this build tree, and a C++ user's project built against the result.

The build tree is installed into a temporary prefix (no second build of simdup); examples/ is then
configured with -DCMAKE_PREFIX_PATH=PREFIX (find_package(simdup CONFIG)), built and run, shared and
static, and one example is also compiled with the flags pkg-config gives for simdup.pc. What the
programs print is checked against the simdup CLI of the build tree and against Python."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_harness import SOURCE_DIR, jsonl, run

BUILD_DIR = Path(os.environ.get("SIMDUP_BUILD_DIR", SOURCE_DIR / "build" / "asan"))
pytestmark = pytest.mark.skipif(not (BUILD_DIR / "CPackConfig.cmake").exists(),
                                reason="configured with SIMDUP_INSTALL=OFF (no install rules)")
SAMPLE = SOURCE_DIR / "data" / "sample" / "news.jsonl"


def sh(cmd, timeout=600, **kwargs):
    """Runs a command, returns stdout (text); fails the test with its output if it fails."""
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, **kwargs)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = tmp_path_factory.mktemp("prefix")
    sh(["cmake", "--install", BUILD_DIR, "--prefix", root])
    return root


def libdir(prefix):
    found = sorted(prefix.glob("lib*/**/libsimdup.so"))
    assert len(found) == 1, f"libsimdup.so under {prefix}: {found}"
    return found[0].parent


def commands():
    """Every command and subcommand, from the CLI's own help: ["dedup", "idf build", ...]."""
    names = []

    def walk(words):
        out = run([*words, "--help"], check=0).stdout.decode()
        listed = out.split("\nSubcommands:\n", 1)
        if len(listed) < 2:
            return
        for line in listed[1].split("\n\n", 1)[0].splitlines():
            match = re.match(r"^  ([a-z][a-z0-9-]*)\s", line)
            if match:
                names.append(" ".join([*words, match.group(1)]))
                walk([*words, match.group(1)])

    walk([])
    return names


def test_umbrella_header_includes_the_library_without_the_service():
    headers = sorted(p.name for p in (SOURCE_DIR / "include" / "simdup").glob("*.hpp"))
    umbrella = (SOURCE_DIR / "include" / "simdup" / "simdup.hpp").read_text()
    included = set(re.findall(r"#include <simdup/([a-z0-9_]+\.hpp)>", umbrella))
    assert included == set(headers) - {"simdup.hpp", "service.hpp"}


def test_installed_tree(prefix):
    include = prefix / "include" / "simdup"
    assert sorted(p.name for p in include.iterdir()) == sorted(
        p.name for p in (SOURCE_DIR / "include" / "simdup").glob("*.hpp"))

    lib = libdir(prefix)
    assert (lib / "libsimdup.a").is_file()
    # The shared library: the chain of names and a SONAME from the project version.
    real = (lib / "libsimdup.so").resolve()
    version = run(["--version"], check=0).stdout.decode().split()[1]
    major, minor, _ = version.split(".")
    soname = f"libsimdup.so.{major}.{minor}" if major == "0" else f"libsimdup.so.{major}"
    assert real.name == f"libsimdup.so.{version}"
    assert (lib / soname).resolve() == real
    dynamic = sh(["readelf", "-d", real])
    assert f"Library soname: [{soname}]" in dynamic

    assert sh([prefix / "bin" / "simdup", "--version"]).strip() == f"simdup {version}"

    cmake_dir = lib / "cmake" / "simdup"
    for name in ("simdup-config.cmake", "simdup-config-version.cmake", "simdup-targets.cmake",
                 "simdup-static-targets.cmake"):
        assert (cmake_dir / name).is_file(), name
    pc = (lib / "pkgconfig" / "simdup.pc").read_text()
    assert f"Version: {version}" in pc

    # One man page per command, as the CLI lists them, each a roff page of that command.
    man1 = prefix / "share" / "man" / "man1"
    expected = {"simdup.1.gz"} | {f"simdup-{c.replace(' ', '-')}.1.gz" for c in commands()}
    assert {"simdup-dedup.1.gz", "simdup-serve.1.gz", "simdup-idf-build.1.gz"} <= expected
    assert {p.name for p in man1.iterdir()} == expected
    page = sh(["zcat", man1 / "simdup-dedup.1.gz"])
    assert '.TH SIMDUP-DEDUP "1"' in page and "\\-\\-out" in page

    docs = prefix / "share" / "doc" / "simdup"
    assert (docs / "README.md").is_file() and (docs / "service.md").is_file()
    assert (prefix / "share" / "simdup" / "jieba" / "jieba.bin").is_file()

    unit = (prefix / "lib" / "systemd" / "system" / "simdup.service").read_text()
    assert f"ExecStart={prefix}/bin/simdup serve --data /var/lib/simdup --listen 127.0.0.1:" in unit
    assert f"SIMDUP_JIEBA_DIR={prefix}/share/simdup/jieba" in unit


def build_examples(prefix, build, *extra, targets=()):
    sh(["cmake", "-S", SOURCE_DIR / "examples", "-B", build, "-G", "Ninja",
        f"-DCMAKE_PREFIX_PATH={prefix}", *extra])
    sh(["cmake", "--build", build, "-j", "2", *[a for t in targets for a in ("--target", t)]])


def check_fingerprint_texts(program):
    out = sh([program])
    lines = out.splitlines()
    texts = [line.split("\t", 1)[1] for line in lines[:3]]
    prints = [int(line.split("\t", 1)[0], 16) for line in lines[:3]]
    # The same fingerprints as the CLI gives for the same texts.
    records = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts))
    cli = jsonl(run(["fingerprint", "-"], input=records, check=0))
    assert [int(r["fingerprint"], 16) for r in cli] == prints
    distances = [f"distance {i} {j} = {bin(prints[i] ^ prints[j]).count('1')}"
                 for i in range(3) for j in range(i + 1, 3)]
    assert lines[3:] == distances
    assert bin(prints[0] ^ prints[1]).count("1") < bin(prints[0] ^ prints[2]).count("1")


def test_examples_against_the_installed_shared_library(prefix, tmp_path):
    build = tmp_path / "build"
    build_examples(prefix, build)
    # The programs load the installed libsimdup.so, not a copy from the build tree.
    needed = sh(["ldd", build / "fingerprint_texts"])
    assert f"{libdir(prefix)}/libsimdup.so." in needed

    check_fingerprint_texts(build / "fingerprint_texts")

    out = sh([build / "query_index"]).splitlines()
    assert out[:3] == ["page 0: new (indexed)", "page 1: new (indexed)",
                       "page 2: near duplicate of page 0 (distance 3)"]
    assert out[3:] == ["query: page 1 at distance 3", "indexed 2 pages"]

    # The dedup job through the library decides as `simdup dedup` with the same settings.
    sh([build / "dedup_files", tmp_path / "lib-out", SAMPLE])
    # The example keeps the detection profile's defaults but k, as the CLI does with --k 3.
    run(["dedup", SAMPLE, "--out", tmp_path / "cli-out", "--mode", "batch", "--k", "3", "-q"],
        check=0)
    lib_summary = json.loads((tmp_path / "lib-out" / "summary.json").read_text())
    cli_summary = json.loads((tmp_path / "cli-out" / "summary.json").read_text())
    assert lib_summary["parameters"] == cli_summary["parameters"]
    assert lib_summary["documents"] == cli_summary["documents"]
    assert lib_summary["documents"]["duplicates"] > 0
    assert ((tmp_path / "lib-out" / "kept.jsonl").read_bytes() ==
            (tmp_path / "cli-out" / "kept.jsonl").read_bytes())


def test_examples_against_the_installed_static_library(prefix, tmp_path):
    build = tmp_path / "build"
    build_examples(prefix, build, "-DSIMDUP_EXAMPLES_STATIC=ON", targets=["fingerprint_texts"])
    assert "libsimdup.so" not in sh(["ldd", build / "fingerprint_texts"])
    check_fingerprint_texts(build / "fingerprint_texts")


def test_installed_service_header_stands_alone_and_beside_the_umbrella(prefix, tmp_path):
    cxx = os.environ.get("CXX") or shutil.which("c++")
    for name, includes in (("service", ["service"]), ("both", ["simdup", "service"])):
        source = tmp_path / f"{name}.cpp"
        source.write_text("".join(f"#include <simdup/{h}.hpp>\n" for h in includes)
                          + "int main() { simdup::service_options o; return o.port == 0; }\n")
        sh([cxx, "-std=c++20", "-fsyntax-only", f"-I{prefix / 'include'}", source])


def test_pkg_config_compile(prefix, tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=str(libdir(prefix) / "pkgconfig"))
    flags = sh(["pkg-config", "--cflags", "--libs", "simdup"], env=env).split()
    assert str(libdir(prefix).resolve()) in [os.path.realpath(f[2:]) for f in flags
                                             if f.startswith("-L")]
    program = tmp_path / "fingerprint_texts"
    cxx = os.environ.get("CXX") or shutil.which("c++")
    sh([cxx, "-std=c++20", SOURCE_DIR / "examples" / "fingerprint_texts.cpp", "-o", program,
        *flags, f"-Wl,-rpath,{libdir(prefix)}"])
    check_fingerprint_texts(program)
