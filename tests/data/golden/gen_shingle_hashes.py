#!/usr/bin/python3
"""Golden vectors for simdup::shingle_hashes (the --verify shingle sets), computed from the
definition, independently of the C++ code.

A shingle is `width` consecutive code points of the (already normalised) text; its hash is the
polynomial sum(cp[i] * B^(width - 1 - i)) mod 2^64 with B = 0x100000001B3, passed through
MurmurHash3's 64-bit finaliser, upper 32 bits. A text shorter than `width` code points is one
shingle (the polynomial over all of it). The set is sorted and distinct. Each line of
shingle_hashes.tsv: width, text (UTF-8, hex), the hashes (hex, comma separated). Regenerate:
    /usr/bin/python3 tests/data/golden/gen_shingle_hashes.py [OUT]
"""
import pathlib
import random
import sys

MASK = (1 << 64) - 1
BASE = 0x100000001B3


def mix(h):
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK
    h ^= h >> 33
    return h


def poly(cps):
    h = 0
    for cp in cps:
        h = (h * BASE + cp) & MASK
    return h


def shingles(text, width):
    cps = [ord(c) for c in text]
    if not cps:
        return []
    if len(cps) < width:
        return [mix(poly(cps)) >> 32]
    return sorted({mix(poly(cps[i:i + width])) >> 32 for i in range(len(cps) - width + 1)})


def main():
    rng = random.Random(41)
    alphabet = list("abcdefgh ") + ["é", "ß", "中", "文", "字", "😀", "\u00a0"]
    cases = [(5, "the quick brown fox jumps over the lazy dog"), (5, "abcd"), (5, "abcde"),
             (3, "中文字符串中文"), (1, "aaaa bbbb"), (7, "x" * 40),
             (5, "repeat repeat repeat repeat repeat repeat repeat")]
    for width in (2, 4, 5, 6, 9):
        for length in (3, 8, 12, 13, 17, 31, 64, 200, 1000):
            text = "".join(rng.choice(alphabet) for _ in range(length))
            cases.append((width, text))
    lines = []
    for width, text in cases:
        hashes = ",".join(f"{h:08x}" for h in shingles(text, width))
        lines.append(f"{width}\t{text.encode('utf-8').hex()}\t{hashes}\n")
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).with_name(
        "shingle_hashes.tsv")
    out.write_text("".join(lines), encoding="ascii")


if __name__ == "__main__":
    main()
