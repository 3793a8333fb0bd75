#!/usr/bin/python3
"""Binding overhead: simdup.fingerprint on texts in memory against `simdup fingerprint` (the
library through the CLI) on the same texts in a JSONL file, same thread count. Prints MB/s of
both per CPU second (and per wall second) and the overhead (Python CPU time / CLI CPU time - 1);
the target is <= 10 %.

The CLI's time includes reading and parsing the JSONL and writing its output; the Python column
"call" is simdup.fingerprint alone, "from JSONL" adds json.loads of the same file."""

import json
import sys
import tempfile
from pathlib import Path

from bench_common import best_of, run_cli, sample_texts, utf8_mb

import simdup


def main():
    copies = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    texts = sample_texts() * copies
    mb = utf8_mb(texts)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "texts.jsonl"
        path.write_text("".join(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n"
                                for i, t in enumerate(texts)), encoding="utf-8")
        cli, cli_wall, _ = best_of(lambda: run_cli(["fingerprint", "-q", "--threads", threads, "-o",
                                          Path(tmp) / "out.jsonl", path]))
        call, call_wall, fps = best_of(lambda: simdup.fingerprint(texts, threads=threads))

        def from_jsonl():
            loaded = [json.loads(l)["text"] for l in path.read_text(encoding="utf-8").splitlines()]
            return simdup.fingerprint(loaded, threads=threads)

        e2e, e2e_wall, _ = best_of(from_jsonl)
    print(f"{len(texts)} texts, {mb:.1f} MB (data/sample/news.jsonl x {copies}), threads={threads}")
    print("  (MB per CPU second; per wall second in brackets)")
    print(f"  simdup fingerprint (CLI)        {mb / cli:7.1f} MB/s ({mb / cli_wall:6.1f})")
    print(f"  simdup.fingerprint (call)       {mb / call:7.1f} MB/s ({mb / call_wall:6.1f})  "
          f"overhead {100 * (call / cli - 1):+.1f} %")
    print(f"  json.loads + simdup.fingerprint {mb / e2e:7.1f} MB/s ({mb / e2e_wall:6.1f})  "
          f"overhead {100 * (e2e / cli - 1):+.1f} %")


if __name__ == "__main__":
    main()
