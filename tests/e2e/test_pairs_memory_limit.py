"""`simdup pairs` and `simdup clusters` under --memory-limit (the real binary): the same output
as an unlimited run when the input is read in place or spilled and paired in passes, a limit
too small refused with the smallest that works, a full spill directory an error that names the
bytes, and no spill files left behind."""
import json
import os
import random
import resource
import signal
import struct
import subprocess

import pytest

BIN = os.environ.get("SIMDUP_BIN", "simdup")
N = 200_000


def run(args, **kw):
    # Two threads everywhere: the working set of a pass grows with the thread count.
    return subprocess.run([BIN, *args, "--threads", "2"], capture_output=True, check=False, **kw)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """N fingerprints, one in seven followed by a copy 0-3 bits away, and a run of equal ones;
    as binary and as fingerprint JSONL with string ids."""
    rng = random.Random(3)
    fps = [rng.getrandbits(64) for _ in range(N)]
    for i in range(0, N - 1, 7):
        f = fps[i]
        for _ in range(i % 4):
            f ^= 1 << rng.randrange(64)
        fps[i + 1] = f
    fps[100:140] = [fps[100]] * 40
    d = tmp_path_factory.mktemp("pairs-limit")
    (d / "f.bin").write_bytes(struct.pack(f"<{N}Q", *fps))
    with open(d / "f.jsonl", "w") as out:
        for i, f in enumerate(fps):
            out.write(json.dumps({"id": f"doc-{i}", "fingerprint": f"{f:016x}"}) + "\n")
    return d, fps


def pair_set(text):
    return {(r["a"], r["b"], r["distance"]) for r in map(json.loads, text.splitlines())}


def stats(stderr):
    out = {}
    for line in stderr.decode().splitlines():
        key, _, value = line.partition(": ")
        if value.isdigit():
            out[key] = int(value)
    return out


def test_binary_in_place_same_pairs_in_passes(corpus):
    d, fps = corpus
    whole = run(["pairs", "--binary", str(d / "f.bin"), "--stats", "--memory-limit", "0"])
    assert whole.returncode == 0, whole.stderr
    limited = run(["pairs", "--binary", str(d / "f.bin"), "--stats", "--memory-limit", "14M"])
    assert limited.returncode == 0, limited.stderr
    expected = pair_set(whole.stdout)
    assert pair_set(limited.stdout) == expected
    assert len(expected) > N // 7
    # Every pair really is within k = 3, and the planted ones are there.
    assert all(bin(fps[a] ^ fps[b]).count("1") == dist <= 3 for a, b, dist in expected)
    assert (100, 139, 0) in expected
    s0, s1 = stats(whole.stderr), stats(limited.stderr)
    assert s0["passes"] == 1 and s1["passes"] > 4
    assert s1["candidates"] == s0["candidates"]
    assert s1["working bytes"] <= 14 << 20
    assert s1["spilled bytes"] == 0  # the binary file is read in place
    assert b"pass 2 of" in limited.stderr


def test_text_spilled_same_pairs_and_ids(corpus, tmp_path):
    d, _ = corpus
    whole = run(["pairs", str(d / "f.jsonl"), "--memory-limit", "0"])
    assert whole.returncode == 0, whole.stderr
    spill = tmp_path / "spill"
    spill.mkdir()
    limited = run(["pairs", str(d / "f.jsonl"), "--stats", "--memory-limit", "16M",
                   "--tmp-dir", str(spill)])
    assert limited.returncode == 0, limited.stderr
    assert pair_set(limited.stdout) == pair_set(whole.stdout)
    assert ("doc-0", "doc-1", 0) in pair_set(limited.stdout)
    assert stats(limited.stderr)["spilled bytes"] > N * 16  # fingerprints, id offsets, ids
    assert list(spill.iterdir()) == []  # the private spill directory is gone


def test_clusters_same_under_a_limit(corpus):
    d, _ = corpus
    for mode in ["components", "star"]:
        whole = run(["clusters", str(d / "f.jsonl"), "--clusters", mode, "--memory-limit", "0"])
        limited = run(["clusters", str(d / "f.jsonl"), "--clusters", mode, "-q",
                       "--memory-limit", "24M"])
        assert whole.returncode == 0 and limited.returncode == 0, limited.stderr
        assert limited.stdout == whole.stdout  # input order, byte for byte
        assert b'{"id":"doc-139","cluster":"doc-100"}' in limited.stdout


def test_too_small_limit_names_the_smallest_that_works(corpus):
    d, _ = corpus
    small = run(["pairs", "--binary", str(d / "f.bin"), "--memory-limit", "2M"])
    assert small.returncode == 1
    message = small.stderr.decode()
    assert "--memory-limit 2 MiB is too small" in message, message
    smallest = message.split("the smallest limit for it is ")[1].split()[0]
    ok = run(["pairs", "--binary", str(d / "f.bin"), "-q", "--memory-limit", smallest + "M"])
    assert ok.returncode == 0, ok.stderr
    bad = run(["pairs", "--binary", str(d / "f.bin"), "--memory-limit", "lots"])
    assert bad.returncode == 2
    assert b"--memory-limit: expected bytes" in bad.stderr


def limited_file_size(limit):
    def setup():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return setup


def test_spill_past_a_file_size_limit_is_a_clear_error(corpus, tmp_path):
    d, _ = corpus
    spill = tmp_path / "spill"
    spill.mkdir()
    r = run(["pairs", str(d / "f.jsonl"), "--memory-limit", "16M", "--tmp-dir", str(spill)],
            preexec_fn=limited_file_size(256 << 10))
    assert r.returncode == 1
    message = r.stderr.decode()
    assert "spilling fingerprints to " + str(spill) in message, message
    assert "more bytes needed" in message and "written so far" in message
    assert r.stdout == b""  # no partial output
    assert list(spill.iterdir()) == []


def test_spill_on_a_full_filesystem(corpus, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (the RLIMIT_FSIZE test covers the rest)")
    d, _ = corpus
    small = tmp_path / "small"
    small.mkdir()
    if run_mount(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(small)]):
        pytest.skip("mount -t tmpfs is not permitted here (a container without CAP_SYS_ADMIN)")
    try:
        r = run(["pairs", str(d / "f.jsonl"), "--memory-limit", "16M", "--tmp-dir", str(small)])
        assert r.returncode == 1
        assert "No space left on device" in r.stderr.decode(), r.stderr
        assert list(small.iterdir()) == []
    finally:
        subprocess.run(["umount", str(small)], check=True)


def run_mount(cmd):
    return subprocess.run(cmd, capture_output=True, check=False).returncode
