#!/usr/bin/python3
"""Golden vectors for simdup's own pipeline (count weighting over code-point shingles).

Computed independently of the C++ code: XXH3-64 values come from the `xxhsum -H3` command
(Debian package xxhash, the reference implementation's CLI); FNV-1a 64 and MD5 (last 8 bytes,
big-endian) are computed here with the standard library.

Rows:
  {"feature": ..., "xxh3": hex, "fnv1a": hex, "md5": hex}          one feature's hashes
  {"text": ..., "width": N, "hash": kind, "fingerprint": hex}       SimHash of un-normalised text

SimHash rule: every width-N code-point shingle occurrence votes +1 where its hash bit is set
and -1 where it is clear; bit i is set iff the sum is > 0 (ties give 0). Text shorter than N
code points is one feature. Usage: gen_default_simhash.py [OUTPUT].
"""

import collections
import hashlib
import json
import os
import subprocess
import sys
import tempfile


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xffffffffffffffff
    return h


def md5_last8(data):
    return int.from_bytes(hashlib.md5(data).digest()[-8:], 'big')


def xxh3_many(items):
    """XXH3-64 (seed 0) of each byte string, from one `xxhsum -H3` run over temporary files."""
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, data in enumerate(items):
            path = os.path.join(tmp, 'f%d' % i)
            with open(path, 'wb') as f:
                f.write(data)
            paths.append(path)
        out = subprocess.run(['xxhsum', '-H3'] + paths, check=True, capture_output=True,
                             text=True).stdout
        by_path = {}
        for line in out.splitlines():
            # "XXH3 (<path>) = <16 hex digits>"
            head, _, digest = line.rpartition(' = ')
            by_path[head[len('XXH3 ('):-1]] = int(digest, 16)
        for data, path in zip(items, paths):
            result[data] = by_path[path]
    return result


def shingles(text, width):
    if len(text) < width:
        return [text]
    return [text[i:i + width] for i in range(len(text) - width + 1)]


FEATURES = ["", "a", "ab", "abc", "abcd", "abcde", "abcdefgh", "abcdefghi", "hello world",
            "0123456789abcdef", "0123456789abcdefg", "中文", "中文特征", "😀", "the ",
            "x" * 128, "y" * 129, "z" * 240, "w" * 241, "long " * 100]

TEXTS = [
    ("a", 4), ("abc", 4), ("abcd", 4), ("hello world", 4), ("hello world", 1), ("hello world", 3),
    ("hello world", 5), ("the quick brown fox jumps over the lazy dog", 4),
    ("the quick brown fox jumped over the lazy dog", 4),
    ("aaaaaaaaaaaaaaaa", 4), ("ab ab ab ab ab ab", 2),
    ("中华人民共和国成立于1949年", 4), ("我爱北京天安门 天安门上太阳升", 2),
    ("mixed 中文 and english text 混合", 4), ("emoji 😀 text 👍 here", 4),
    (" ".join("word%d" % (i % 37) for i in range(400)), 4),
]

HASHES = ("xxh3", "fnv1a", "md5")


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'default_simhash.jsonl')
    all_bytes = [f.encode('utf-8') for f in FEATURES]
    for text, width in TEXTS:
        all_bytes += [s.encode('utf-8') for s in shingles(text, width)]
    xxh3 = xxh3_many(sorted(set(all_bytes)))
    hash_fns = {"xxh3": xxh3.__getitem__, "fnv1a": fnv1a, "md5": md5_last8}
    with open(out_path, 'w', encoding='utf-8', newline='\n') as out:
        for feature in FEATURES:
            data = feature.encode('utf-8')
            row = {"feature": feature}
            for kind in HASHES:
                row[kind] = "%016x" % hash_fns[kind](data)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        for text, width in TEXTS:
            counts = collections.Counter(shingles(text, width))
            for kind in HASHES:
                votes = [0] * 64
                for feature, n in counts.items():
                    h = hash_fns[kind](feature.encode('utf-8'))
                    for bit in range(64):
                        votes[bit] += n if (h >> bit) & 1 else -n
                fp = sum(1 << bit for bit in range(64) if votes[bit] > 0)
                row = {"text": text, "width": width, "hash": kind, "fingerprint": "%016x" % fp}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == '__main__':
    main()
