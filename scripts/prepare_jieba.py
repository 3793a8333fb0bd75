#!/usr/bin/python3
"""Converts Debian's python3-jieba data once into the files simdup's C++ segmenter loads.

Output directory (default: data/jieba, gitignored):
  jieba.bin       dictionary (words sorted by UTF-8 bytes, resolved frequencies, total) and the
                  HMM parameters of jieba.finalseg (read from its pickles); format in
                  docs/chinese.md, checked by magic, version, size and CRC-32 when loaded.
  idf.txt         jieba.analyse's IDF table, `word idf` per line (copied as is).
  stop_words.txt  jieba.analyse.TFIDF's built-in stop words, one per line.

Idempotent: does nothing when every output is newer than jieba's files and this script.
Usage: /usr/bin/python3 scripts/prepare_jieba.py [--out DIR] [--jieba-dir DIR] [--force]
"""

import argparse
import os
import pickle
import struct
import sys
import tempfile
import zlib

MAGIC = b"SIMDUPJB"
VERSION = 1
MIN_FLOAT = -3.14e100  # jieba.finalseg's "impossible" log probability
STATES = "BMES"  # the order the C++ side indexes states in


def default_jieba_dir():
    for base in ("/usr/lib/python3/dist-packages", "/usr/local/lib/python3/dist-packages"):
        path = os.path.join(base, "jieba")
        if os.path.isfile(os.path.join(path, "dict.txt")):
            return path
    return None


def read_dictionary(path):
    """Returns ({word: freq}, total) with jieba's gen_pfdict semantics: a repeated word keeps its
    last frequency, while the total counts every line."""
    freq = {}
    total = 0
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip().decode("utf-8")
            if not line:
                continue
            parts = line.split(" ")
            if len(parts) < 2:
                sys.exit(f"prepare_jieba: {path}:{lineno}: expected `word freq [tag]`")
            freq[parts[0]] = int(parts[1])
            total += int(parts[1])
    return freq, total


def load_pickle(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def encode(jieba_dir):
    freq, total = read_dictionary(os.path.join(jieba_dir, "dict.txt"))
    words = sorted((w.encode("utf-8") for w in freq), key=bytes)
    hmm_dir = os.path.join(jieba_dir, "finalseg")
    start = load_pickle(os.path.join(hmm_dir, "prob_start.p"))
    trans = load_pickle(os.path.join(hmm_dir, "prob_trans.p"))
    emit = load_pickle(os.path.join(hmm_dir, "prob_emit.p"))

    out = bytearray()
    out += struct.pack("<QI", total, len(words))
    out += struct.pack(f"<{len(words)}I", *(freq[w.decode("utf-8")] for w in words))
    offset = 0
    offsets = [0]
    for w in words:
        offset += len(w)
        offsets.append(offset)
    out += struct.pack(f"<{len(offsets)}I", *offsets)
    out += b"".join(words)
    out += struct.pack("<4d", *(start.get(s, MIN_FLOAT) for s in STATES))
    for a in STATES:
        out += struct.pack("<4d", *(trans[a].get(b, MIN_FLOAT) for b in STATES))
    chars = sorted(set().union(*(emit[s].keys() for s in STATES)))
    out += struct.pack("<I", len(chars))
    for ch in chars:
        out += struct.pack("<I4d", ord(ch), *(emit[s].get(ch, MIN_FLOAT) for s in STATES))
    header = MAGIC + struct.pack("<IIQ", VERSION, zlib.crc32(out), len(out))
    return header + bytes(out)


def stop_words():
    import importlib

    # Only the class attribute is read; no model loads. (jieba.analyse.tfidf the attribute is a
    # function, so the module is fetched by name.)
    tfidf = importlib.import_module("jieba.analyse.tfidf")
    return sorted(tfidf.KeywordExtractor.STOP_WORDS)


def write_atomic(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--out", default=os.path.join(root, "data", "jieba"))
    parser.add_argument("--jieba-dir", default=default_jieba_dir())
    parser.add_argument("--force", action="store_true")
    ARGS = parser.parse_args()
    if not ARGS.jieba_dir or not os.path.isfile(os.path.join(ARGS.jieba_dir, "dict.txt")):
        sys.exit("prepare_jieba: jieba's dict.txt not found; install python3-jieba")

    sources = [
        os.path.join(ARGS.jieba_dir, "dict.txt"),
        os.path.join(ARGS.jieba_dir, "analyse", "idf.txt"),
        os.path.join(ARGS.jieba_dir, "analyse", "tfidf.py"),
        *(os.path.join(ARGS.jieba_dir, "finalseg", f"prob_{p}.p") for p in ("start", "trans", "emit")),
        os.path.abspath(__file__),
    ]
    outputs = [os.path.join(ARGS.out, f) for f in ("jieba.bin", "idf.txt", "stop_words.txt")]
    newest_source = max(os.path.getmtime(s) for s in sources)
    if not ARGS.force and all(os.path.isfile(o) and os.path.getmtime(o) > newest_source for o in outputs):
        return
    os.makedirs(ARGS.out, exist_ok=True)
    write_atomic(outputs[0], encode(ARGS.jieba_dir))
    with open(sources[1], "rb") as f:
        write_atomic(outputs[1], f.read())
    write_atomic(outputs[2], "".join(w + "\n" for w in stop_words()).encode("utf-8"))
    print(f"prepare_jieba: wrote {ARGS.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
