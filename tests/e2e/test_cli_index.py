"""End-to-end tests of `simdup pairs`, `simdup clusters` and `simdup plan` (the real binary)."""
import json
import os
import random
import struct
import subprocess

import pytest

BIN = os.environ.get("SIMDUP_BIN", "simdup")


def run(args, stdin=None):
    return subprocess.run([BIN, *args], input=stdin, capture_output=True, check=False)


def brute_pairs(fps, k):
    out = set()
    for i in range(len(fps)):
        for j in range(i + 1, len(fps)):
            d = bin(fps[i] ^ fps[j]).count("1")
            if d <= k:
                out.add((i, j, d))
    return out


def random_fps(n, seed=1):
    rng = random.Random(seed)
    fps = []
    for i in range(n):
        if i % 2 and fps:
            f = rng.choice(fps)
            for _ in range(rng.randint(0, 4)):
                f ^= 1 << rng.randrange(64)
        else:
            f = rng.getrandbits(64)
        fps.append(f)
    return fps


def parse_pairs(stdout, key=lambda x: x):
    return {(key(r["a"]), key(r["b"]), r["distance"]) for r in map(json.loads, stdout.splitlines())}


@pytest.mark.parametrize("k", [0, 2, 3])
def test_pairs_jsonl_matches_brute_force(tmp_path, k):
    fps = random_fps(300)
    path = tmp_path / "fp.jsonl"
    lines = [json.dumps({"id": f"doc-{i}", "fingerprint": f"{f:016x}"}) for i, f in enumerate(fps)]
    lines.insert(5, json.dumps({"id": "short", "fingerprint": None, "status": "too_short"}))
    path.write_text("\n".join(lines) + "\n")
    r = run(["pairs", "--k", str(k), str(path)])
    assert r.returncode == 0, r.stderr
    got = parse_pairs(r.stdout, key=lambda s: int(s.split("-")[1]))
    assert got == brute_pairs(fps, k)


def test_pairs_plain_lines_binary_and_tsv_agree(tmp_path):
    fps = random_fps(200, seed=2)
    expected = brute_pairs(fps, 3)
    plain = tmp_path / "fp.txt"
    # Mixed forms: 16 hex digits, or decimal. Ids are line numbers (1-based).
    plain.write_text("".join(f"{f:016x}\n" if i % 3 else f"{f}\n" for i, f in enumerate(fps)))
    r = run(["pairs", str(plain)])
    assert r.returncode == 0, r.stderr
    assert parse_pairs(r.stdout, key=lambda n: n - 1) == expected
    binary = tmp_path / "fp.bin"
    binary.write_bytes(struct.pack(f"<{len(fps)}Q", *fps))
    r = run(["pairs", "--binary", "--blocks", "4/4", str(binary)])
    assert r.returncode == 0, r.stderr
    assert parse_pairs(r.stdout) == expected  # ids are 0-based positions
    tsv = "".join(f"id\\t{i}\t{f:016x}\n" for i, f in enumerate(fps))
    r = run(["pairs", "-"], stdin=tsv.encode())
    assert r.returncode == 0, r.stderr
    assert parse_pairs(r.stdout, key=lambda s: int(s.split("\t")[1])) == expected


def test_equal_fingerprints_and_duplicate_ids():
    data = b'{"id":1,"fingerprint":"00000000000000aa"}\n' * 3
    r = run(["pairs", "--k", "0"], stdin=data)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(rows) == 3 and all(x == {"a": 1, "b": 1, "distance": 0} for x in rows)


def test_empty_input():
    r = run(["pairs"], stdin=b"")
    assert r.returncode == 0 and r.stdout == b""
    r = run(["clusters"], stdin=b"")
    assert r.returncode == 0 and r.stdout == b""


def test_malformed_lines_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id":1,"fingerprint":"00000000000000aa"}\n{"id":2,"fingerprint":"xyz"}\n')
    r = run(["pairs", str(path)])
    assert r.returncode == 1
    assert f"{path}:2:" in r.stderr.decode()
    r = run(["pairs"], stdin=b"00000000000000aa\nnot a number\n")
    assert r.returncode == 1 and b"<stdin>:2:" in r.stderr
    binary = tmp_path / "odd.bin"
    binary.write_bytes(b"\x01" * 12)
    r = run(["pairs", "--binary", str(binary)])
    assert r.returncode == 1 and b"multiple of 8" in r.stderr
    r = run(["pairs", "--blocks", "3"], stdin=b"")
    assert r.returncode == 2 and b"--blocks" in r.stderr


def test_clusters_components_and_star():
    # a~b (1 bit), b~c (1 bit), a and c 2 bits apart: with k=1 components chain them, star not.
    fps = [0b000, 0b001, 0b011, 0xFFFF0000]
    data = "".join(json.dumps({"id": n, "fingerprint": f"{f:016x}"}) + "\n"
                   for n, f in zip("abcd", fps)).encode()
    r = run(["clusters", "--k", "1"], stdin=data)
    assert r.returncode == 0, r.stderr
    assert [json.loads(x) for x in r.stdout.splitlines()] == [
        {"id": "a", "cluster": "a"}, {"id": "b", "cluster": "a"}, {"id": "c", "cluster": "a"}]
    r = run(["clusters", "--k", "1", "--clusters", "star"], stdin=data)
    assert r.returncode == 0, r.stderr
    assert [json.loads(x) for x in r.stdout.splitlines()] == [
        {"id": "a", "cluster": "a"}, {"id": "b", "cluster": "a"}]


def test_plan():
    r = run(["plan", "--n", "11000000", "--k", "3", "--json"])
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["tables"] == 10 and plan["min_prefix_bits"] == 25
    r = run(["plan", "--n", "1000", "--k", "3", "--blocks", "16,16,16,16"])
    assert r.returncode == 0 and b"tables: 4" in r.stdout and b"prefix bits: 16..16" in r.stdout
    r = run(["plan", "--n", "10000000", "--k", "3", "--purpose", "online", "--memory", "1M"])
    assert r.returncode == 1 and b"fits" in r.stderr


def test_pairs_decimal_lines(tmp_path):
    # Decimal fingerprints, the extremes included; blank lines still count for line-number ids.
    fps = [0, 1, 3, 2**64 - 1, 2**64 - 2, 2**63, 2**63 + 7, 12345]
    path = tmp_path / "dec.txt"
    path.write_text("\n".join(str(f) for f in fps[:4]) + "\n\n" + "\n".join(str(f) for f in fps[4:]))
    r = run(["pairs", "--k", "3", str(path)])
    assert r.returncode == 0, r.stderr
    line_of = [1, 2, 3, 4, 6, 7, 8, 9]
    expected = {(line_of[a], line_of[b], d) for a, b, d in brute_pairs(fps, 3)}
    assert parse_pairs(r.stdout) == expected
    # Exactly 16 digits read as hex (the documented rule), so "0000000000000010" is 16.
    r = run(["pairs", "--k", "0"], stdin=b"0000000000000010\n16\n")
    assert r.returncode == 0, r.stderr
    assert parse_pairs(r.stdout) == {(1, 2, 0)}
    # --decimal reads 16-digit lines as decimal: 10^15 and 10^15 + 2^20 are one bit apart.
    lines = b"1000000000000000\n1000000001048576\n"
    assert parse_pairs(run(["pairs", "--k", "3"], stdin=lines).stdout) == set()
    r = run(["pairs", "--k", "3", "--decimal"], stdin=lines)
    assert r.returncode == 0, r.stderr
    assert parse_pairs(r.stdout) == {(1, 2, 1)}
    r = run(["clusters", "--k", "3", "--decimal"], stdin=lines)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2, r.stderr
    r = run(["pairs", "--decimal"], stdin=b"00000000000000ff\n")
    assert r.returncode == 1 and b"<stdin>:1:" in r.stderr


def test_pairs_binary_from_stdin_and_empty(tmp_path):
    fps = random_fps(120, seed=4)
    r = run(["pairs", "--binary", "-"], stdin=struct.pack(f"<{len(fps)}Q", *fps))
    assert r.returncode == 0, r.stderr
    assert parse_pairs(r.stdout) == brute_pairs(fps, 3)
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    r = run(["pairs", "--binary", str(empty)])
    assert r.returncode == 0 and r.stdout == b""


@pytest.mark.parametrize("content,line", [
    ("1\n2\n18446744073709551616\n", 3),                     # decimal overflow
    ("\n\n00000000000000zz\n", 3),                           # blank lines are counted
    ("a\t00000000000000aa\nb\t00aa\n", 2),                   # TSV, short hex
    ("a\t00000000000000aa\nb 00000000000000aa\n", 2),        # TSV, no tab
    ('{"id":1,"fingerprint":"00000000000000aa"}\n{"id":2}\n', 2),  # JSONL, no fingerprint
    ('{"id":1,"fingerprint":"00000000000000aa"}\n[1,2]\n', 2),     # JSONL, not an object
])
def test_malformed_input_names_file_and_line(tmp_path, content, line):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    for command in ("pairs", "clusters"):
        r = run([command, str(path)])
        assert r.returncode == 1, (command, r.stdout)
        assert f"{path}:{line}:" in r.stderr.decode(), (command, r.stderr)
        assert r.stdout == b""
