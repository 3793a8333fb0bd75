"""simdup.dask against earlier runs' indexes (docs/incremental.md) on a real LocalCluster: a new
dump checked against the index a `simdup dedup` run left gives the CLI's decisions byte for
byte (duplicates.jsonl, kept records, against_hits.jsonl, the against counts), in the Python
form and the command line, also for decontamination (against_only); a bad index is refused
before any task."""

import json

import pytest

import simdup
from conftest import run_cli
from test_dask import assert_same, dask_cli, family_corpus, shards

distributed = pytest.importorskip("distributed")
import simdup.dask as sdask  # noqa: E402

SECTIONS = ("documents", "duplicates_by_layer", "clusters", "distance_histogram", "against")


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    """The family corpus cut in input order: a first dump, run by the CLI (its index is the
    history), and a second dump in three shards, whose families continue the first's."""
    root = tmp_path_factory.mktemp("dumps")
    lines = family_corpus(seed=11, bases=300)
    cut = len(lines) * 2 // 5
    (root / "dump1.jsonl").write_text("".join(line + "\n" for line in lines[:cut]))
    run_cli(["dedup", root / "dump1.jsonl", "--out", root / "run1", "-q"])
    return root, shards(root, lines[cut:], 3, name="dump2")


@pytest.mark.parametrize("extra", [[], ["--against-only"], ["--keep", "longest"]])
def test_command_line_against_writes_the_cli_output(client, dumps, tmp_path, extra):
    root, paths = dumps
    history = str(root / "run1")
    out = tmp_path / "dask-out"
    proc = dask_cli(client, *paths, "--against", history, "--out", out, "--no-pack-files",
                    *extra)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    cli_out = tmp_path / "cli-out"
    run_cli(["dedup", *paths, "--against", history, "--out", cli_out, "--no-index", "-q",
             *extra])
    want_lines = (cli_out / "duplicates.jsonl").read_text().splitlines()
    against = [json.loads(line) for line in want_lines if '"against"' in line]
    assert len(against) > 50, len(against)  # the history is really used
    if not extra:
        assert len(want_lines) > len(against)  # and the dump is deduplicated within itself
    assert (out / "duplicates.jsonl").read_bytes() == (cli_out / "duplicates.jsonl").read_bytes()
    assert (out / "against_hits.jsonl").read_bytes() == \
        (cli_out / "against_hits.jsonl").read_bytes()
    kept = b"".join((out / f"kept-{i:05d}.jsonl").read_bytes() for i in range(3))
    assert kept == (cli_out / "kept.jsonl").read_bytes()
    got = json.loads((out / "summary.json").read_text())
    want = json.loads((cli_out / "summary.json").read_text())
    for section in SECTIONS:
        assert got[section] == want[section], section
    assert got["pairs"]["against_candidates"] == want["pairs"]["against_candidates"] > 0
    assert got["against"]["dropped"] == len(against)
    assert not (out / "index").exists()


def test_python_form_is_simdup_dedup(client, dumps):
    """sdask.dedup(against=...) returns simdup.dedup's frame, its against column included."""
    root, paths = dumps
    history = str(root / "run1")
    frame, summary = sdask.dedup(paths, client=client, against=history)
    reference, ref_summary = simdup.dedup(paths, against=history)
    got = assert_same(frame, reference)
    assert got["against"].tolist() == reference["against"].tolist()
    assert (reference["against"] == history).sum() == summary["against"]["dropped"] > 50
    assert summary["against"] == ref_summary["against"]


def test_bad_indexes_refused_before_any_task(client, dumps, tmp_path):
    root, paths = dumps
    with pytest.raises(ValueError, match=r"was built with k 8, this run uses 5"):
        sdask.dedup(paths, client=client, against=str(root / "run1"), k=5)
    with pytest.raises(ValueError, match="batch"):
        sdask.dedup(paths, client=client, against=str(root / "run1"), mode="stream")
    with pytest.raises(ValueError, match="against_only=True needs against="):
        sdask.dedup(paths, client=client, against_only=True)
    with pytest.raises(FileNotFoundError):
        sdask.dedup(paths, client=client, against=str(tmp_path / "nothing"))
    proc = dask_cli(client, *paths, "--against", root / "run1", "-k", "5", "--out",
                    tmp_path / "o")
    assert proc.returncode == 2 and b"was built with k 8, this run uses 5" in proc.stderr, \
        proc.stderr
    assert not (tmp_path / "o").exists()
