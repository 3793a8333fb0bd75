"""The Debian package: cpack on this build tree, then the .deb taken apart with dpkg-deb.

Checks the control fields (Depends against the libraries the binaries really load, looked up
with dpkg -S), the files (CLI, libsimdup, man pages, docs, the systemd unit), the maintainer
scripts, and runs the packaged binary. `systemd-analyze verify` checks the unit when it exists."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import service_harness
from cli_harness import SOURCE_DIR, jsonl, run

BUILD_DIR = Path(os.environ.get("SIMDUP_BUILD_DIR", SOURCE_DIR / "build" / "asan"))
pytestmark = pytest.mark.skipif(not (BUILD_DIR / "CPackConfig.cmake").exists(),
                                reason="configured with SIMDUP_INSTALL=OFF (no install rules)")
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


def sh(cmd, timeout=600, **kwargs):
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, **kwargs)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def version():
    return run(["--version"], check=0).stdout.decode().split()[1]


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    out = tmp_path_factory.mktemp("cpack")
    # gzip rather than the package's xz: the content is the same, and a sanitizer build's
    # archives are large.
    sh(["cpack", "-G", "DEB", "--config", BUILD_DIR / "CPackConfig.cmake", "-B", out,
        "-D", "CPACK_DEBIAN_COMPRESSION_TYPE=gzip"])
    debs = list(out.glob("*.deb"))
    assert [d.name for d in debs] == [f"simdup_{version()}_amd64.deb"]
    return debs[0]


@pytest.fixture(scope="module")
def unpacked(deb, tmp_path_factory):
    root = tmp_path_factory.mktemp("root")
    sh(["dpkg-deb", "-x", deb, root])
    return root


def control(deb):
    fields, key = {}, None
    for line in sh(["dpkg-deb", "-f", deb]).splitlines():
        if line.startswith(" ") and key:
            fields[key] += "\n" + line
        else:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def owner(path):
    """The Debian package that ships a library file (dpkg -S), trying /lib and /usr/lib."""
    candidates = [path, os.path.realpath(path)]
    candidates += [p.replace("/usr/lib/", "/lib/", 1) if p.startswith("/usr/lib/")
                   else p.replace("/lib/", "/usr/lib/", 1) for p in list(candidates)]
    for candidate in candidates:
        proc = subprocess.run(["dpkg", "-S", candidate], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
        if proc.returncode == 0:
            return proc.stdout.split(":")[0]
    raise AssertionError(f"no package ships {path}")


def test_control_fields(deb):
    fields = control(deb)
    assert fields["Package"] == "simdup"
    assert fields["Version"] == version()
    assert fields["Architecture"] == "amd64"
    assert fields["Section"] == "text"
    assert fields["Priority"] == "optional"
    assert re.fullmatch(r".+ <[^@\s]+@[^@\s]+>", fields["Maintainer"])
    assert fields["Description"].startswith("near-duplicate text detection with SimHash\n")
    assert "systemd unit" in fields["Description"]


def depends(deb):
    return {re.split(r"[\s(]", d.strip())[0] for d in control(deb)["Depends"].split(",")}


def test_depends_cover_every_library_the_binaries_load(deb, unpacked):
    names = depends(deb)
    assert "adduser" in names  # the postinst's adduser
    library = [p for p in unpacked.glob("usr/lib*/**/libsimdup.so.*") if not p.is_symlink()]
    for binary in (unpacked / "usr" / "bin" / "simdup", *library):
        # The libraries it names itself (DT_NEEDED); theirs are their packages' business.
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]", sh(["readelf", "-d", binary]))
        paths = dict(re.findall(r"^\s*(\S+) => (/\S+)", sh(["ldd", binary]), re.M))
        assert needed and "libc.so.6" in needed
        for name in needed:
            if name.startswith("ld-linux"):
                continue
            # A library the package ships itself (libduckdb.so in /usr/lib/simdup: Debian has no
            # DuckDB) is found there through the binary's RUNPATH, not through a Depends.
            if os.path.realpath(paths[name]).startswith(str(unpacked.resolve()) + os.sep):
                continue
            assert owner(paths[name]) in names, f"{binary.name} needs {paths[name]}"
    assert {"libc6", "libstdc++6"} <= names


def test_files(unpacked):
    usr = unpacked / "usr"
    assert (usr / "bin" / "simdup").is_file()
    assert {p.parts[0] for p in (p.relative_to(unpacked) for p in unpacked.iterdir())} == {"usr"}
    lib = [p for p in usr.glob("lib*/**/libsimdup.so.*") if not p.is_symlink()]
    assert [p.name for p in lib] == [f"libsimdup.so.{version()}"]
    assert (usr / "include" / "simdup" / "simdup.hpp").is_file()
    man1 = usr / "share" / "man" / "man1"
    for page in ("simdup", "simdup-dedup", "simdup-serve", "simdup-fingerprint",
                 "simdup-idf-build"):
        assert (man1 / f"{page}.1.gz").is_file(), page
    docs = usr / "share" / "doc" / "simdup"
    assert (docs / "README.md").is_file() and (docs / "service.md").is_file()
    assert (usr / "share" / "simdup" / "jieba" / "jieba.bin").is_file()


def test_systemd_unit(unpacked):
    unit = (unpacked / "usr" / "lib" / "systemd" / "system" / "simdup.service").read_text()
    assert "ExecStart=/usr/bin/simdup serve --data /var/lib/simdup --listen 127.0.0.1:8080" in unit
    for line in ("User=simdup", "StateDirectory=simdup", "NoNewPrivileges=yes",
                 "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
                 "Environment=SIMDUP_JIEBA_DIR=/usr/share/simdup/jieba",
                 "WantedBy=multi-user.target"):
        assert line in unit.splitlines(), line
    assert str(unpacked) not in unit and "_CPack_Packages" not in unit


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verify(unpacked, tmp_path):
    # The unit as installed, except that ExecStart points at the unpacked binary (this machine
    # has no /usr/bin/simdup); --man=no because the man pages are not installed here either.
    unit = (unpacked / "usr" / "lib" / "systemd" / "system" / "simdup.service").read_text()
    unit = unit.replace("ExecStart=/usr/bin/simdup", f"ExecStart={unpacked}/usr/bin/simdup")
    (tmp_path / "simdup.service").write_text(unit)
    proc = subprocess.run([SYSTEMD_ANALYZE, "verify", "--man=no", tmp_path / "simdup.service"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout
    assert "simdup.service" not in proc.stdout, proc.stdout


def test_maintainer_scripts(deb, tmp_path):
    sh(["dpkg-deb", "-e", deb, tmp_path / "DEBIAN"])
    for name in ("postinst", "prerm", "postrm"):
        script = tmp_path / "DEBIAN" / name
        assert os.access(script, os.X_OK), name
        sh(["sh", "-n", script])
    postinst = (tmp_path / "DEBIAN" / "postinst").read_text()
    assert "adduser --system --group" in postinst and "/var/lib/simdup" in postinst
    shlibs = (tmp_path / "DEBIAN" / "shlibs").read_text().split()
    major, minor, _ = version().split(".")
    assert shlibs[:3] == ["libsimdup", f"{major}.{minor}", "simdup"]


def test_packaged_binary_runs(unpacked):
    simdup = unpacked / "usr" / "bin" / "simdup"
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    assert sh([simdup, "--version"], env=env).strip() == f"simdup {version()}"
    record = json.dumps({"id": 7, "text": "The quick brown fox jumps over the lazy dog."}) + "\n"
    packaged = sh([simdup, "fingerprint", "-"], input=record, env=env)
    expected = jsonl(run(["fingerprint", "-"], input=record, check=0))
    assert [json.loads(line) for line in packaged.splitlines()] == expected
    assert re.fullmatch(r"[0-9a-f]{16}", expected[0]["fingerprint"])


def test_packaged_library_through_pkg_config(unpacked, tmp_path):
    # simdup.pc locates the tree from its own path, so the unpacked /usr works as a prefix.
    pcdir = next(unpacked.glob("usr/lib*/**/pkgconfig/simdup.pc")).parent
    env = dict(os.environ, PKG_CONFIG_PATH=str(pcdir))
    flags = sh(["pkg-config", "--cflags", "--libs", "simdup"], env=env).split()
    libdir = next(os.path.realpath(f[2:]) for f in flags if f.startswith("-L"))
    program = tmp_path / "fingerprint_texts"
    cxx = os.environ.get("CXX") or shutil.which("c++")
    sh([cxx, "-std=c++20", SOURCE_DIR / "examples" / "fingerprint_texts.cpp", "-o", program,
        *flags, f"-Wl,-rpath,{libdir}"])
    out = sh([program, "near duplicate text", "near-duplicate text"]).splitlines()
    assert len(out) == 3 and out[2].startswith("distance 0 1 = ")


def test_packaged_binary_finds_its_jieba_data(unpacked, tmp_path):
    # Without SIMDUP_JIEBA_DIR the packaged CLI uses PREFIX/share/simdup/jieba next to itself.
    root = tmp_path / "root"
    shutil.copytree(unpacked, root, symlinks=True)
    simdup = root / "usr" / "bin" / "simdup"
    env = {k: v for k, v in os.environ.items() if k != "SIMDUP_JIEBA_DIR"}
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    record = json.dumps({"id": 1, "text": "我们去公园散步吧"}, ensure_ascii=False) + "\n"
    packaged = sh([simdup, "segment", "-"], input=record, env=env)
    assert json.loads(packaged) == jsonl(run(["segment", "-"], input=record, check=0))[0]
    # Proof that it was that copy: damaged, it is the one the error names.
    data = root / "usr" / "share" / "simdup" / "jieba"
    (data / "jieba.bin").write_bytes(b"not jieba data")
    proc = subprocess.run([simdup, "segment", "-"], input=record, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env)
    assert proc.returncode != 0 and str(data) in proc.stderr, proc.stderr


def test_packaged_service_answers(unpacked, tmp_path, monkeypatch):
    # The unit's command (its data directory in tmp, on a free port), run directly: systemd is
    # not PID 1 here.
    unit = (unpacked / "usr" / "lib" / "systemd" / "system" / "simdup.service").read_text()
    args = re.search(r"^ExecStart=/usr/bin/simdup serve (.*)$", unit, re.M).group(1).split()
    assert args == ["--data", "/var/lib/simdup", "--listen", "127.0.0.1:8080"]
    monkeypatch.setenv("SIMDUP_BIN", str(unpacked / "usr" / "bin" / "simdup"))
    monkeypatch.delenv("SIMDUP_JIEBA_DIR", raising=False)
    server = service_harness.Server(["--data", str(tmp_path / "data")])  # adds --listen :0
    try:
        client = server.client()
        assert client.request("GET", "/healthz")[0] == 200
        # A jieba collection: the packaged binary loads the packaged dictionaries.
        assert client.request("PUT", "/v1/zh", {"compat": "jieba-tfidf"})[0] in (200, 201)
        # Long enough for dedup's min-features (10), which the service applies too.
        text = ("今天天气很好，我们去公园散步吧。明天下雨，我们在家里看书。周末的时候，朋友们一起去"
                "博物馆参观历史文物，然后在附近的餐厅吃晚饭，大家聊起了工作、学习和旅行的计划。")
        status, first = client.post("/v1/zh/check-insert", {"id": "a", "text": text})
        assert status == 200 and first["status"] == "new", first
        status, second = client.post("/v1/zh/check-insert", {"id": "b", "text": text})
        assert status == 200 and second["status"] == "duplicate", second
        client.close()
        assert server.terminate() == 0
    finally:
        server.close()
