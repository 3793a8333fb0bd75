#!/usr/bin/python3
"""Golden vectors for UTF-8 repair (simdup::utf8 and the normaliser's repair step).

Python's decoder with errors="replace" substitutes one U+FFFD per maximal ill-formed subpart,
the practice simdup follows. Each line of utf8_repair.tsv: input bytes (hex), repaired output
(hex), number of replacements, number of code points. Regenerate:
    /usr/bin/python3 tests/data/golden/gen_utf8_repair.py [OUT]
"""
import codecs
import pathlib
import random
import sys

count = 0


def counting_replace(exc):
    global count
    count += 1
    return ("\ufffd", exc.end)


codecs.register_error("simdup_count", counting_replace)

cases = [
    b"",
    b"plain ascii",
    "中文 café ß 😀".encode(),
    b"\xef\xbf\xbd",               # a real U+FFFD is valid
    b"\x80",                       # lone continuation
    b"a\x80\xbfb",                 # two lone continuations
    b"\xc0\xaf",                   # overlong '/'
    b"\xc1\xbf",                   # overlong
    b"\xe0\x80\xaf",               # overlong 3-byte
    b"\xf0\x80\x80\xaf",           # overlong 4-byte
    b"\xed\xa0\x80",               # surrogate D800
    b"\xed\xbf\xbf",               # surrogate DFFF
    b"\xf4\x90\x80\x80",           # above U+10FFFF
    b"\xf5\x80\x80\x80",           # invalid lead
    b"\xff\xfe",                   # invalid bytes
    b"\xe4\xb8",                   # truncated at the end
    b"\xe4\xb8a",                  # truncated before ASCII
    b"\xf0\x9f\x98",               # truncated 4-byte
    b"\xf0\x9f\x98\xf0\x9f\x98\x80",  # truncated then complete
    b"\xc3",                       # truncated 2-byte at the end
    b"\xc3\xa9\xc3",               # valid then truncated
    b"x\xe2\x82\xacy\xe2\x82",     # euro then truncated euro
    b"\xf4\x8f\xbf\xbf",           # U+10FFFF, valid
    b"\xee\x80\x80",               # private use, valid
    b"\xef\xbf\xbe",               # noncharacter U+FFFE, valid UTF-8
    b"\x00\x7f",                   # controls are valid
]
rng = random.Random(20261121)
alphabet = [b"a", b" ", b"\x80", b"\xbf", b"\xc2", b"\xc3\xa9", b"\xe4", b"\xb8", b"\xad",
            b"\xe4\xb8\xad", b"\xed", b"\xa0", b"\xf0", b"\x9f", b"\xf4", b"\x90", b"\xff"]
for _ in range(200):
    cases.append(b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))))

lines = []
for data in cases:
    count = 0
    text = data.decode("utf-8", errors="simdup_count")
    lines.append(f"{data.hex()}\t{text.encode().hex()}\t{count}\t{len(text)}")
# An optional argument writes elsewhere (tests/python/test_golden_regenerated.py compares).
out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).with_name("utf8_repair.tsv")
out.write_text("\n".join(lines) + "\n", encoding="ascii")
print(f"wrote {out} ({len(lines)} cases)")
