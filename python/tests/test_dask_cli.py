"""The command line of simdup.dask (`python3 -m simdup.dask dedup`): help, usage errors refused
before any cluster starts, and summary.json's version, parameters and memory as the CLI's."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import SAMPLE, run_cli

HINT = "Run `python3 -m simdup.dask dedup --help` for the options."


@pytest.fixture(scope="module")
def tripwire(tmp_path_factory):
    """A directory whose `distributed` and `dask` packages fail on import: put first on the
    path of a run that must end before any cluster starts (neither is imported until then)."""
    root = tmp_path_factory.mktemp("tripwire")
    for name in ("distributed", "dask"):
        (root / name).mkdir()
        (root / name / "__init__.py").write_text(
            f"raise ImportError('tripwire: {name} imported, a cluster was about to start')\n")
    return root


def dask_cli(*args, path_first=None):
    env = dict(os.environ)
    if path_first is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path_first), env.get("PYTHONPATH", "")])
    # The guard fails only on a hang: a refused command line ends at once (the tripwire proves
    # that no cluster was started).
    return subprocess.run([sys.executable, "-m", "simdup.dask", *map(str, args)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          timeout=120)


def cli_options(help_text):
    """`simdup dedup --help` (CLI11): flag -> its default ('' when it shows none)."""
    out = {}
    # "  -k,--k INT:0..32=8          Near duplicates ...": the flag, its type and checks, and
    # "=default"; the description starts after two spaces or on the next line.
    for m in re.finditer(r"^  (?:-\w,)?(--[\w-]+)(.*?)(?: {2,}|$)", help_text, re.M):
        out[m[1]] = m[2].rsplit("=", 1)[1] if "=" in m[2] else ""
    return out


def dask_options(help_text):
    """`python3 -m simdup.dask dedup --help` (argparse): flag -> its default ('' when none)."""
    out = {}
    for block in re.split(r"\n(?=  -)", help_text):
        m = re.match(r"\s+(?:-\w(?: \S+)?, )?(--[\w-]+)", block)
        if m:
            default = re.search(r"\(default: ([^)]*)\)", " ".join(block.split()))
            out[m[1]] = default[1] if default else ""
    return out


def test_help_lists_every_option_with_its_default():
    proc = dask_cli("dedup", "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: python3 -m simdup.dask dedup")
    options = dask_options(proc.stdout)
    for flag in ("--out", "--k", "--verify", "--minhash", "--keep", "--clusters", "--layers",
                 "--threads", "--scheduler", "--partitions", "--partition-bytes",
                 "--no-pack-files", "--near-prefix-blocks", "--on-error", "--html"):
        assert flag in options, flag
    assert options["--k"] == "8" and options["--scheduler"] == "local:2"
    assert "-k K, --k K" in proc.stdout
    assert dask_cli("dedup", "-h").stdout == proc.stdout
    top = dask_cli("--help")
    assert top.returncode == 0 and "dedup" in top.stdout
    assert dask_cli("-h").stdout == top.stdout


def test_help_agrees_with_the_cli_on_shared_options():
    """Every option of `simdup dedup` is in the Dask form with the same default, or is named
    as missing in its help; the two that differ on purpose say why."""
    cli = cli_options(run_cli(["dedup", "--help"]).stdout.decode())
    proc = dask_cli("dedup", "--help")
    dask = dask_options(proc.stdout)
    assert len(cli) > 30, cli
    assert "--k" in cli and cli["--k"] == "8", cli
    # Different on purpose: Dask runs a task per worker thread (threads 1), and has no stdin.
    different = {"--threads", "--mode"}
    missing = " ".join(proc.stdout.split("Not in the Dask form:")[1].split())
    for flag in cli:
        if flag not in dask:
            assert re.search(re.escape(flag) + r"[ ,.]", missing), flag
        elif flag not in different and cli[flag]:
            assert dask[flag] == cli[flag], (flag, dask[flag], cli[flag])
    assert dask["--threads"] == "1" and cli["--threads"] == "0"
    assert dask["--clusters"] == cli["--clusters"] == "anchored"


@pytest.mark.parametrize("args,message", [
    (["--bogus"], "unknown option --bogus"),
    (["--bogus", "x"], "unknown option --bogus"),
    (["--verfy", "off"], "unknown option --verfy; did you mean --verify?"),
    (["--shingle-widht=3"], "unknown option --shingle-widht; did you mean --shingle-width?"),
    (["--report-clusters", "3"], "--report-clusters is an option of `simdup dedup` that the "
                                 "Dask form does not have"),
])
def test_unknown_options_refused_before_any_cluster(tripwire, tmp_path, args, message):
    proc = dask_cli("dedup", SAMPLE, "--out", tmp_path / "out", *args, path_first=tripwire)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"simdup.dask dedup: error: {message}\n{HINT}\n" or \
        proc.stderr.startswith(f"simdup.dask dedup: error: {message}"), proc.stderr
    assert proc.stderr.endswith(HINT + "\n")
    assert "tripwire" not in proc.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize("args,message", [
    (["-k", "40"], "--k must be in 0..32, got 40"),
    (["--k=-1"], "--k must be in 0..32, got -1"),
    (["-k", "x"], "argument -k/--k: invalid int value: 'x'"),
    (["--verify", "jaccard:1.5"], "--verify"),
    (["--verify", "cosine"], "--verify"),
    (["--minhash", "100x3"], "--minhash: expected off or BANDSxROWS"),
    (["--keep", "biggest"], "--keep"),
    (["--clusters", "ring"], "--clusters"),
    (["--mode", "fast"], "--mode"),
    (["--on-error", "ignore"], "--on-error"),
    (["--layers", "url,fuzzy"], "--layers"),
    (["--anchor-floor", "2"], "--anchor-floor must be in [0, 1]"),
    (["--threads", "-1"], "--threads must be in"),
    (["--shingle-width", "0"], "--shingle-width must be in"),
    (["--weighting", "tfidf"], "--weighting tfidf needs --idf FILE"),
    (["--scheduler", "local:0"], "--scheduler local:N needs N >= 1"),
    (["--partitions", "0"], "--partitions must be at least 1, got 0"),
    (["--partition-bytes", "-5"], "--partition-bytes must be at least 0"),
    (["--near-prefix-blocks", "0"], "--near-prefix-blocks must be at least 1"),
    (["-k", "32", "--near-prefix-blocks", "33"], "--near-prefix-blocks must be at most"),
])
def test_bad_values_refused_before_any_cluster(tripwire, tmp_path, args, message):
    """The library's own checks (simdup._core.dedup_parameters), in the flags' terms: exit 2,
    one line naming the flag, and the hint."""
    proc = dask_cli("dedup", SAMPLE, "--out", tmp_path / "out", *args, path_first=tripwire)
    assert proc.returncode == 2, proc.stderr
    first, hint, *rest = proc.stderr.split("\n")
    assert first.startswith(f"simdup.dask dedup: error: {message}"), proc.stderr
    assert hint == HINT and rest == [""], proc.stderr
    assert not (tmp_path / "out").exists()


def test_missing_pieces_refused_before_any_cluster(tripwire, tmp_path):
    for args, message in ((["--out", tmp_path / "o"], "give one or more inputs"),
                          ([SAMPLE], "--out DIR is required"),
                          (["-", "--out", tmp_path / "o"], "not stdin")):
        proc = dask_cli("dedup", *args, path_first=tripwire)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    proc = dask_cli("dedup", SAMPLE, "--out", tmp_path / "full", path_first=tripwire)
    assert proc.returncode == 2 and "is not empty" in proc.stderr, proc.stderr
    for args in ([], ["dedupe"]):
        proc = dask_cli(*args, path_first=tripwire)
        assert proc.returncode == 2, proc.stderr
    assert "did you mean dedup?" in proc.stderr


def test_summary_has_the_cli_version_parameters_and_memory(tmp_path):
    """summary.json of a run on a local cluster: version and parameters equal the CLI's for
    the same arguments; memory has the CLI's keys, the driver's and each worker's peak RSS."""
    args = [SAMPLE, "-k", "6", "--keep", "longest", "--minhash", "8x4", "--verify",
            "jaccard:0.7", "--layers", "url,title,exact,near", "--clusters", "anchored",
            "--anchor-floor", "0.6"]
    proc = dask_cli("dedup", *args, "--out", tmp_path / "dask", "--scheduler", "local:2", "-q")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_cli(["dedup", *args, "--out", tmp_path / "cli", "-q"])
    got = json.loads((tmp_path / "dask" / "summary.json").read_text())
    want = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert got["version"] == want["version"]
    assert got["parameters"] == want["parameters"]
    assert got["parameters"]["k"] == 6 and got["parameters"]["keep"] == "longest"
    assert got["documents"] == want["documents"]
    memory = got["memory"]
    assert set(want["memory"]) <= set(memory)
    assert set(got["resume"]) == set(want["resume"]) and got["resume"]["replayed_documents"] == 0
    assert memory["peak_rss_bytes"] > 10 << 20  # the driver has numpy and Dask loaded
    workers = memory["workers_peak_rss_bytes"]
    assert len(workers) == 2 and all(rss > 10 << 20 for rss in workers.values()), workers
    assert memory["engine_bytes"] >= memory["engine_bytes_largest_task"] > 0
    assert memory["engine_bytes_per_document"] == pytest.approx(
        memory["engine_bytes"] / got["documents"]["read"])
