"""The Python simhash package's SimHash of (feature, weight) pairs, written from its rules:
feature hash = last 8 bytes of MD5 read big-endian; bit set iff its weight sum > total / 2."""

import hashlib


def vote(weighted):
    total = 0
    sums = [0] * 64
    for feature, weight in weighted:
        total += weight
        h = int.from_bytes(hashlib.md5(feature.encode("utf-8")).digest()[-8:], "big")
        for bit in range(64):
            if (h >> bit) & 1:
                sums[bit] += weight
    return sum(1 << bit for bit in range(64) if sums[bit] > total / 2)
