"""simdup.dask on a real LocalCluster (2 worker processes on 127.0.0.1): the same decisions as
single-machine dedup (simdup.dedup, which runs the CLI's engine; the sample is also checked
against the `simdup dedup` binary), bad records counted as there, and a worker killed in the
near phase changes nothing."""

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import simdup
from pathlib import Path

from conftest import SAMPLE, run_cli

distributed = pytest.importorskip("distributed")
import simdup.dask as sdask  # noqa: E402

COLUMNS = ["id", "keep", "cluster", "duplicate_of", "distance", "layer", "jaccard"]


def dask_cli(client, *args):
    """`python3 -m simdup.dask dedup ARGS... --scheduler (the test cluster) -q`."""
    return subprocess.run([sys.executable, "-m", "simdup.dask", "dedup", *map(str, args),
                           "--scheduler", client.scheduler.address, "-q"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)


def shards(tmp_path, lines, count, name="part"):
    """Writes `lines` (JSONL text lines) into `count` files in order; returns their paths."""
    paths = []
    size = (len(lines) + count - 1) // count
    for i in range(count):
        p = tmp_path / f"{name}-{i:02d}.jsonl"
        p.write_text("".join(line + "\n" for line in lines[i * size:(i + 1) * size]))
        paths.append(str(p))
    return paths


def assert_same(distributed_frame, reference):
    got = distributed_frame.compute().reset_index(drop=True)
    ref = reference.reset_index(drop=True)
    assert len(got) == len(ref)
    for col in COLUMNS:
        if col == "jaccard":
            np.testing.assert_allclose(got[col].to_numpy(), ref[col].to_numpy(), rtol=0,
                                       atol=1e-6, equal_nan=True)
        elif col == "layer":
            assert got[col].astype(str).tolist() == ref[col].astype(str).tolist()
        else:
            assert got[col].tolist() == ref[col].tolist(), col
    return got


def largest_clusters(report: Path) -> str:
    """report.html's sample clusters: sizes, representatives, members and their texts."""
    page = report.read_text()
    section = page[page.index("<h2>Largest clusters</h2>"):page.index("<h2>Timings</h2>")]
    assert section.count('<div class="cluster">') >= 3, section[:500]
    return section


def family_corpus(seed=7, bases=450):
    """Families of near copies (word edits), exact copies (case and punctuation changed), pages
    re-crawled under one URL, and unrelated documents; one family larger than MinHash's bucket
    cap (64), so the cap must count the whole corpus."""
    rng = random.Random(seed)
    vocab = ["w%03d%s" % (i, rng.choice("abcdefghij")) for i in range(3000)]
    docs = []

    def add(text, url=None, score=None):
        rec = {"id": f"d{len(docs)}", "text": text}
        if url:
            rec["url"] = url
        rec["score"] = score if score is not None else rng.randint(0, 100)
        docs.append(rec)

    big = [rng.choice(vocab) for _ in range(300)]
    for b in range(bases):
        words = [rng.choice(vocab) for _ in range(rng.randint(60, 160))]
        add(" ".join(words), url=f"http://site{b % 50}.example/p{b}")
        kind = b % 7
        if kind in (0, 1, 2):
            for _ in range(rng.randint(1, 4)):
                w = list(words)
                for _ in range(rng.randint(1, 6)):
                    w[rng.randrange(len(w))] = rng.choice(vocab)
                add(" ".join(w))
        elif kind == 3:
            add(" ".join(words).upper() + "!")
        elif kind == 4:
            add(" ".join(rng.choice(vocab) for _ in range(80)),
                url=f"https://www.site{b % 50}.example/p{b}/")
        if b % 10 == 5:
            w = list(big)
            for _ in range(rng.randint(0, 25)):
                w[rng.randrange(len(w))] = rng.choice(vocab)
            add(" ".join(w))
    rng.shuffle(docs)
    # A family of 80 close copies, beyond the bucket cap.
    for _ in range(80):
        w = list(big)
        for _ in range(rng.randint(0, 3)):
            w[rng.randrange(len(w))] = rng.choice(vocab)
        add(" ".join(w))
    add("tiny text")
    add("tiny text")
    return [json.dumps(d) for d in docs]


def test_command_line_form_writes_the_cli_output(client, tmp_path):
    """`python3 -m simdup.dask dedup` on the sample in 3 shards writes what `simdup dedup`
    writes: the same duplicates.jsonl byte for byte, the kept records (one shard per input),
    and the same counts in summary.json."""
    paths = shards(tmp_path, SAMPLE.read_text().splitlines(), 3)
    out = tmp_path / "dask-out"
    proc = dask_cli(client, *paths, "--out", out, "--no-pack-files")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    cli_out = tmp_path / "cli-out"
    run_cli(["dedup", *paths, "--out", cli_out, "-q"])
    assert (out / "duplicates.jsonl").read_bytes() == (cli_out / "duplicates.jsonl").read_bytes()
    kept = b"".join((out / f"kept-{i:05d}.jsonl").read_bytes() for i in range(3))
    assert kept == (cli_out / "kept.jsonl").read_bytes()
    got = json.loads((out / "summary.json").read_text())
    want = json.loads((cli_out / "summary.json").read_text())
    assert want["documents"]["duplicates"] > 400
    for section in ("documents", "duplicates_by_layer", "pairs", "clusters",
                    "distance_histogram", "skipped_reasons"):
        if section == "pairs":
            # The CLI engine's in-memory pre-check count: the Dask form verifies every pair.
            assert "prefiltered" not in got["pairs"] and want["pairs"].pop("prefiltered") > 0
        assert got[section] == want[section], section
    # report.html: the CLI's page; its cards (counts) and cluster-size table say the same.
    cards = re.compile(r'<div class="card"><div class="n">[^<]*</div><div class="k">'
                       r'(?:kept|duplicates|clusters with duplicates|near pairs verified)</div>')
    got_html, want_html = ((d / "report.html").read_text() for d in (out, cli_out))
    assert cards.findall(got_html) == cards.findall(want_html) != []
    # Its sample clusters are the CLI's: the same clusters, members and texts.
    assert largest_clusters(out / "report.html") == largest_clusters(cli_out / "report.html")
    # A non-empty output directory is refused, as by the CLI.
    again = dask_cli(client, paths[0], "--out", out)
    assert again.returncode == 2 and b"not empty" in again.stderr


def test_zstd_shards_decompress_to_the_cli_kept_file(client, tmp_path):
    """--zstd: one kept-NNNNN.jsonl.zst per partition, written by the CLI's writer; decompressed
    in order they are the CLI's kept.jsonl.zst decompressed. The last input repeats earlier
    records only, so its shard is an empty zstd frame (the CLI too writes a kept file then)."""
    lines = SAMPLE.read_text().splitlines()
    paths = shards(tmp_path, lines, 3)
    repeat = tmp_path / "repeat.jsonl"
    repeat.write_text("".join(line + "\n" for line in lines[:20]))
    paths.append(str(repeat))
    out, cli_out = tmp_path / "dask-out", tmp_path / "cli-out"
    proc = dask_cli(client, *paths, "--out", out, "--zstd", "--no-pack-files")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    run_cli(["dedup", *paths, "--out", cli_out, "--zstd", "-q"])
    names = sorted(p.name for p in out.iterdir() if p.name.startswith("kept-"))
    assert names == [f"kept-{i:05d}.jsonl.zst" for i in range(4)]

    def unzstd(*files):
        return subprocess.run(["zstd", "-dcq", *map(str, files)], stdout=subprocess.PIPE,
                              check=True).stdout

    assert unzstd(out / names[-1]) == b""
    kept = unzstd(*(out / name for name in names))
    assert kept == unzstd(cli_out / "kept.jsonl.zst")
    assert kept.count(b"\n") == json.loads((out / "summary.json").read_text())["documents"]["kept"]
    assert (out / "duplicates.jsonl").read_bytes() == (cli_out / "duplicates.jsonl").read_bytes()


def test_annotate_shards_are_the_cli_annotated_file(client, tmp_path):
    """--annotate: one annotated-NNNNN.jsonl per partition with every record and its `simdup`
    object, written by the CLI's writer: in order they are the CLI's annotated.jsonl byte for
    byte, numeric ids (written as numbers in duplicate_of) included. A text input, which cannot
    carry annotations, fails as in the CLI and leaves no output directory."""
    lines = SAMPLE.read_text().splitlines()
    paths = shards(tmp_path, lines, 3)
    numbered = tmp_path / "numbered.jsonl"
    # Ten texts twice each, under numeric ids: the second copies' representatives are numbers.
    texts = [" ".join(f"term{j}v{i}" for j in range(40)) for i in range(10)]
    numbered.write_text("".join(json.dumps({"id": 1000 + i, "text": texts[i % 10]}) + "\n"
                                for i in range(20)))
    paths.append(str(numbered))
    out, cli_out = tmp_path / "dask-out", tmp_path / "cli-out"
    proc = dask_cli(client, *paths, "--out", out, "--annotate", "--no-pack-files")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    run_cli(["dedup", *paths, "--out", cli_out, "--annotate", "-q"])
    annotated = b"".join((out / f"annotated-{i:05d}.jsonl").read_bytes() for i in range(4))
    assert annotated == (cli_out / "annotated.jsonl").read_bytes()
    records = [json.loads(line) for line in annotated.decode().splitlines()]
    assert len(records) == len(lines) + 20
    numeric_dups = [r["simdup"]["duplicate_of"] for r in records
                    if isinstance(r["id"], int) and not r["simdup"]["keep"]]
    assert numeric_dups == list(range(1000, 1010))
    kept = b"".join((out / f"kept-{i:05d}.jsonl").read_bytes() for i in range(4))
    assert kept == (cli_out / "kept.jsonl").read_bytes()

    text = tmp_path / "plain.txt"
    text.write_text("one line of plain text that is long enough to be signed\n" * 3)
    failed = dask_cli(client, text, "--out", tmp_path / "x", "--annotate")
    assert failed.returncode == 1, failed.stderr
    assert b"--annotate writes JSONL, CSV and TSV records; the input has text" in failed.stderr
    assert not (tmp_path / "x").exists()


def test_sample_matches_single_machine(client, tmp_path):
    paths = shards(tmp_path, SAMPLE.read_text().splitlines(), 4)
    frame, summary = sdask.dedup(paths, client=client, pack_files=False)
    ref, ref_summary = simdup.dedup(paths)
    assert_same(frame, ref)
    assert summary["documents"]["kept"] == ref_summary["documents"]["kept"]
    assert summary["pairs"] == {k: ref_summary["pairs"][k] for k in summary["pairs"]}


def test_small_files_packed_into_partitions(client, tmp_path):
    """Consecutive small files of one kind share partitions of up to partition_bytes (a corpus
    of many small files would otherwise make a shuffle task per pair of them); a file of another
    kind starts a new one, and a missing input is counted as the CLI counts it. The decisions,
    counts and kept records are the CLI's; --no-pack-files keeps a partition per file."""
    import gzip
    paths = shards(tmp_path, family_corpus(seed=5), 6)
    size = max(os.path.getsize(p) for p in paths)
    zipped = tmp_path / "part-03.jsonl.gz"
    zipped.write_bytes(gzip.compress(Path(paths[3]).read_bytes()))
    paths[3] = str(zipped)
    paths.insert(5, str(tmp_path / "missing.jsonl"))
    out = tmp_path / "dask-out"
    frame, summary = sdask.dedup(paths, client=client, partition_bytes=3 * size,
                                 on_error="skip", out=str(out))
    # [00, 01, 02] [03.gz] [04, missing, 05]
    assert summary["distributed"]["partitions"] == 3
    ref, _ = simdup.dedup(paths, on_error="skip")
    assert_same(frame, ref)
    cli_out = tmp_path / "cli-out"
    run_cli(["dedup", *paths, "--out", cli_out, "-q", "--on-error", "skip"], check=3)
    want = json.loads((cli_out / "summary.json").read_text())
    assert summary["documents"] == want["documents"]
    assert summary["documents"]["duplicates"] > 100
    assert summary["inputs"] == want["inputs"] == {"count": 7, "skipped": 1}
    kept = b"".join((out / f"kept-{i:05d}.jsonl").read_bytes() for i in range(3))
    assert kept == (cli_out / "kept.jsonl").read_bytes()
    assert (out / "duplicates.jsonl").read_bytes() == (cli_out / "duplicates.jsonl").read_bytes()

    apart = tmp_path / "apart"
    proc = dask_cli(client, *paths, "--out", apart, "--on-error", "skip", "--no-pack-files",
                    "--partition-bytes", str(3 * size))
    assert proc.returncode == 3, proc.stderr.decode(errors="replace")[-3000:]
    assert json.loads((apart / "summary.json").read_text())["distributed"]["partitions"] == 7
    assert (apart / "duplicates.jsonl").read_bytes() == (cli_out / "duplicates.jsonl").read_bytes()


@pytest.mark.parametrize("options", [
    {},
    {"keep": "longest"},
    {"keep": "field:score", "clusters": "star"},
    {"clusters": "components", "k": 3, "minhash": "off"},
    {"keep": "longest", "clusters": "centers"},
])
def test_generated_corpus_matches_single_machine(client, tmp_path, options):
    paths = shards(tmp_path, family_corpus(), 5)
    frame, summary = sdask.dedup(paths, client=client, pack_files=False, **options)
    ref, ref_summary = simdup.dedup(paths, **options)
    got = assert_same(frame, ref)
    assert (~got["keep"]).sum() > 300  # the corpus has families
    assert set(got["layer"].astype(str)) >= {"url", "exact", "near"}
    for key in ("candidates", "rejected_by_verify", "minhash_candidates"):
        assert summary["pairs"][key] == ref_summary["pairs"][key], key
    assert summary["documents"] == {k: ref_summary["documents"][k]
                                    for k in summary["documents"]}


@pytest.mark.parametrize("options", [
    {"mode": "stream"},
    {"mode": "stream", "k": 3, "verify": "off", "layers": "exact,near"},
])
def test_stream_mode_matches_single_machine(client, tmp_path, options):
    """Stream mode (keep the first, drop a later document that shares a key with an earlier one
    or is within k of a kept one): the stream engine runs over each connected component of the
    exact links and the near candidates among the documents no earlier one shares a key with,
    in input order, so the decisions and the pair counts are the single pass's."""
    lines = family_corpus(seed=5)
    # A key chain: C shares no key with A but the late B shares A's URL and C's text, so the
    # batch exact group {A, B, C} has one leader while the single pass keeps both A and C.
    lines[10:10] = [json.dumps({"id": "chain-a", "url": "http://chain.example/1",
                                "text": "first page of the chain " * 8}),
                    json.dumps({"id": "chain-c", "url": "http://chain.example/2",
                                "text": "second page of the chain " * 8})]
    lines.append(json.dumps({"id": "chain-b", "url": "http://chain.example/1",
                             "text": "second page of the chain " * 8}))
    paths = shards(tmp_path, lines, 4)
    out = tmp_path / "out" if options == {"mode": "stream"} else None
    frame, summary = sdask.dedup(paths, client=client, pack_files=False, out=out, **options)
    ref, ref_summary = simdup.dedup(paths, **options)
    got = assert_same(frame, ref)
    if out is not None:  # the report's clusters as the single pass shows them
        run_cli(["dedup", *paths, "--out", tmp_path / "cli", "--mode", "stream", "-q"])
        assert largest_clusters(out / "report.html") == largest_clusters(tmp_path / "cli" /
                                                                         "report.html")
    assert (~got["keep"]).sum() > 300
    for key in ("candidates", "rejected_by_verify", "minhash_candidates"):
        assert summary["pairs"][key] == ref_summary["pairs"][key], key
    assert summary["documents"] == {k: ref_summary["documents"][k]
                                    for k in summary["documents"]}
    assert summary["clusters"] == ref_summary["clusters"]


def test_large_files_split_at_line_starts(client, tmp_path):
    """Files larger than partition_bytes become several partitions (byte ranges cut at line
    starts): the decisions, the ids generated for records without one (SOURCE:LINE, counting
    the whole file's lines), the skip counts and the kept records are the CLI's."""
    lines = family_corpus(seed=3)
    for i in range(0, len(lines), 9):
        record = json.loads(lines[i])
        del record["id"]
        lines[i] = json.dumps(record)
    lines[100:100] = ["{not json", ""]
    paths = shards(tmp_path, lines, 2)
    out = tmp_path / "dask-out"
    frame, summary = sdask.dedup(paths, client=client, partition_bytes=60_000, on_error="skip",
                                 out=str(out))
    ref, ref_summary = simdup.dedup(paths, on_error="skip")
    got = assert_same(frame, ref)
    assert any(":" in str(i) for i in got["id"])  # generated ids were compared
    parts = summary["distributed"]["partitions"]
    assert parts >= 8
    assert summary["inputs"] == {"count": 2, "skipped": 0}
    assert summary["documents"] == {k: ref_summary["documents"][k] for k in summary["documents"]}
    cli_out = tmp_path / "cli-out"
    run_cli(["dedup", *paths, "--out", cli_out, "-q", "--on-error", "skip"], check=3)
    kept = b"".join((out / f"kept-{i:05d}.jsonl").read_bytes() for i in range(parts))
    assert kept == (cli_out / "kept.jsonl").read_bytes()
    assert (out / "duplicates.jsonl").read_bytes() == (cli_out / "duplicates.jsonl").read_bytes()


def test_compressed_files_are_never_split(tmp_path):
    """Only plain JSONL/TSV is cut into byte ranges: gzip, zstd and pzstd's files (a skippable
    frame first, which the splitter once took for plain text) are read whole."""
    import gzip
    data = "".join(json.dumps({"id": i, "text": f"document {i} " * 20}) + "\n"
                   for i in range(3000)).encode()
    plain = tmp_path / "p.jsonl"
    plain.write_bytes(data)
    (tmp_path / "p.jsonl.gz").write_bytes(gzip.compress(data))
    subprocess.run(["zstd", "-q", "-o", str(tmp_path / "p.jsonl.zst"), str(plain)], check=True)
    subprocess.run(["pzstd", "-q", "-p", "2", "-o", str(tmp_path / "pz.jsonl.zst"), str(plain)],
                   check=True)
    assert len(simdup._core.dask_split_file(str(plain), {}, 50_000)) >= 10
    for name in ["p.jsonl.gz", "p.jsonl.zst", "pz.jsonl.zst"]:
        assert simdup._core.dask_split_file(str(tmp_path / name), {}, 5_000) == [], name


def test_bad_records_counted_as_single_machine(client, tmp_path):
    lines = SAMPLE.read_text().splitlines()
    bad = lines[:40] + ["{not json", '{"id": "x1"}'] + lines[40:80] + ["[1, 2"]
    paths = shards(tmp_path, bad + lines[80:], 3)
    paths.insert(1, str(tmp_path / "missing.jsonl"))
    frame, summary = sdask.dedup(paths, client=client, pack_files=False, on_error="skip")
    ref, ref_summary = simdup.dedup(paths, on_error="skip")
    assert_same(frame, ref)
    # The index is the global ordinal over the records read (not counting the skipped ones),
    # the terms of `cluster`: frame.loc[cluster] is the representative.
    got = frame.compute()
    assert list(got.index) == list(range(len(ref)))
    dups = got[~got.keep]
    assert len(dups) > 0
    assert (got.loc[dups.cluster, "id"].to_numpy() == dups.duplicate_of.to_numpy()).all()
    assert got.loc[got.cluster, "keep"].all()
    assert summary["skipped_reasons"] == ref_summary["skipped_reasons"]
    # Counted as the CLI counts them: the missing file is a skipped input, not a record.
    cli_out = tmp_path / "cli-out"
    run_cli(["dedup", *paths, "--out", cli_out, "-q", "--on-error", "skip"], check=3)
    want = json.loads((cli_out / "summary.json").read_text())
    assert summary["documents"] == want["documents"]
    assert summary["documents"]["skipped"] == 3
    assert summary["inputs"] == want["inputs"] == {"count": 4, "skipped": 1}
    assert summary["skipped_reasons"] == want["skipped_reasons"]
    with pytest.raises(ValueError, match="on_error='skip'"):
        sdask.dedup(paths[:1], client=client, pack_files=False)


def test_worker_killed_in_near_phase(client, tmp_path):
    paths = shards(tmp_path, family_corpus(seed=11), 6)
    ref, _ = simdup.dedup(paths)
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    killed = threading.Event()

    def near_tasks(dask_scheduler=None):
        return any("simdup-simhash" in str(k) for k in dask_scheduler.tasks)

    def killer():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed.is_set():
            if client.run_on_scheduler(near_tasks):
                os.kill(pids[victim], signal.SIGKILL)
                killed.set()
                return
            time.sleep(0.01)

    thread = threading.Thread(target=killer)
    thread.start()
    frame, _ = sdask.dedup(paths, client=client, pack_files=False)
    got = frame.compute()
    thread.join()
    assert killed.is_set()
    assert_same(frame, ref)
    assert len(got) == len(ref)
    client.wait_for_workers(2, timeout=600)  # the nanny restarts the killed worker


def test_dask_bag_and_dataframe_of_records(client):
    import dask.bag as db
    import dask.dataframe as dd
    import pandas as pd
    records = [json.loads(line) for line in SAMPLE.read_text().splitlines()[:600]]
    ref, _ = simdup.dedup(records)
    frame, _ = sdask.dedup(db.from_sequence(records, npartitions=3), client=client)
    assert_same(frame, ref)
    frame, _ = sdask.dedup(dd.from_pandas(pd.DataFrame(records), npartitions=2), client=client)
    assert_same(frame, ref)


def popcounts(x):
    """Set bits of each uint64, by bytes (numpy's own popcount is newer than Debian's)."""
    table = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)
    return table[x.view(np.uint8).reshape(-1, 8)].sum(axis=1)


@pytest.mark.parametrize("r", [1, 2])
def test_group_pairs_find_each_pair_within_k_once(r):
    """The near layer's grouped search (a group per table prefix, blocks planned once per
    table) against brute force: every pair within k, each once across all tables."""
    rng = np.random.default_rng(3)
    base = rng.integers(0, 2**63, size=400, dtype=np.uint64) * np.uint64(2)
    copies = [base]
    for flips in (1, 4, 8, 9, 12):  # 9 and 12: beyond k, found by no table
        bits = rng.integers(0, 64, size=(len(base), flips))
        noise = np.bitwise_or.reduce(np.uint64(1) << bits.astype(np.uint64), axis=1)
        copies.append(base ^ noise)
    fps = np.concatenate(copies)
    k = 8
    masks = sdask._block_masks(k, r)
    table = np.repeat(np.arange(len(masks)), len(fps))
    key = (fps[None, :] & masks[:, None]).reshape(-1)
    pos = np.tile(np.arange(len(fps)), len(masks))
    order = np.lexsort((pos, key, table))
    table, key, pos = table[order], key[order], pos[order]
    new = np.ones(len(pos), dtype=bool)
    new[1:] = (table[1:] != table[:-1]) | (key[1:] != key[:-1])
    starts = np.flatnonzero(new)
    a, b = simdup._core.dask_group_pairs(fps[pos], np.append(starts, len(pos)).astype(np.uint64),
                                         table[starts].astype(np.uint64), masks, k)
    found = sorted(zip(np.minimum(pos[a], pos[b]).tolist(), np.maximum(pos[a], pos[b]).tolist()))
    i, j = np.triu_indices(len(fps), 1)
    within = popcounts(fps[i] ^ fps[j]) <= k
    assert found == sorted(zip(i[within].tolist(), j[within].tolist()))
    assert len(found) >= 3 * len(base)


def test_ragged_take_copies_the_named_rows():
    """Shingle arrays move between steps as a ragged column; taking rows (in any order,
    repeated, empty rows included) gives their arrays, and a row out of range is an error."""
    offsets = np.array([0, 3, 3, 5, 9], dtype=np.uint64)
    flat = np.arange(100, 109, dtype=np.uint32)
    off, values = simdup._core.dask_ragged_take(offsets, flat, np.array([3, 1, 0, 3]))
    assert off.tolist() == [0, 4, 4, 7, 11]
    assert values.tolist() == [105, 106, 107, 108, 100, 101, 102, 105, 106, 107, 108]
    off, values = simdup._core.dask_ragged_take(offsets, flat, np.zeros(0, dtype=np.int64))
    assert off.tolist() == [0] and len(values) == 0
    for bad in ([4], [-1]):
        with pytest.raises(ValueError, match="rows must name rows"):
            simdup._core.dask_ragged_take(offsets, flat, np.array(bad))
    with pytest.raises(ValueError, match="within the values"):
        simdup._core.dask_ragged_take(offsets, flat[:8], np.array([3]))


def test_top_byte_counts_rule_out_only_pairs_below_threshold():
    """Pairs across partitions travel first with 4-bit counts of their hashes' top bytes: a pair
    they rule out has an exact Jaccard below the threshold, and they rule out the pairs the
    bound (jaccard_shared_bound of the summed smaller counts, a saturated count taking the
    other side's) rules out, computed here independently."""
    rng = np.random.default_rng(11)
    sets_a, sets_b = [], []
    for i in range(300):
        n = int(rng.integers(1, 3000))
        narrow = i % 3 == 0  # hashes in 4 top bytes: counts saturate
        top = np.uint32(4 << 24) if narrow else np.uint32(2**32 - 1)
        a = np.unique(rng.integers(0, top, size=n, dtype=np.uint32))
        keep = rng.random(len(a)) < rng.choice([0.0, 0.5, 0.85, 0.95, 1.0])
        b = np.unique(np.concatenate([a[keep], rng.integers(0, top, size=int(rng.integers(
            0, n // 8 + 2)), dtype=np.uint32)]))
        sets_a.append(a)
        sets_b.append(b)

    def ragged(sets):
        off = np.zeros(len(sets) + 1, dtype=np.uint64)
        np.cumsum([len(s) for s in sets], out=off[1:])
        return off, np.concatenate(sets).astype(np.uint32)

    rows = np.arange(len(sets_a), dtype=np.uint64)
    off_a, h_a = ragged(sets_a)
    off_b, h_b = ragged(sets_b)
    tops = simdup._core.dask_top_bytes(off_a, h_a, rows)
    assert tops.shape == (len(sets_a), 128)
    counts = np.array([len(s) for s in sets_a], dtype=np.uint32)
    ruled = simdup._core.dask_shared_rejects(tops, counts, rows[::-1].copy(), off_b, h_b,
                                             rows[::-1].copy(), 0.8)[::-1]
    for a, b, out in zip(sets_a, sets_b, ruled):
        jaccard = len(np.intersect1d(a, b)) / len(np.union1d(a, b))
        ca = np.minimum(np.bincount(a >> 24, minlength=256), 15)
        cb = np.bincount(b >> 24, minlength=256)
        shared = min(int(np.where(ca == 15, cb, np.minimum(ca, cb)).sum()), len(a), len(b))
        assert out == (shared < 0.8 * (len(a) + len(b)) / 1.8 - 1e-6)
        assert not (out and jaccard >= 0.8)
    assert 50 < ruled.sum() < len(ruled) - 50  # both kinds occur
