#!/usr/bin/python3
"""How well `simdup serve` answers, measured on an evaluation corpus (issue 35, item 4).

    /usr/bin/python3 eval/service_eval.py --corpus eval/out/en.jsonl --truth eval/out/en.truth.tsv \
        [--simdup build/release/cli/simdup] [--store redis://127.0.0.1:PORT] \
        [--settings '{"minhash": "off"}'] [--json results.json]

Starts `simdup serve` (a RocksDB store in a temporary directory, or the given Redis store) on a
free loopback port, creates collections with the server's defaults updated by --settings, and
measures three things:

  edited    every original is inserted; each repost whose exact Jaccard with its own original is
            >= 0.8 (the truth file) is sent to /check: the share answered `duplicate`.
  unrelated the originals of even families are inserted; the originals of odd families that
            form no true pair with any of them are sent to /check: the share answered
            `duplicate` (should be near 0).
  stream    every document is sent to /check-insert in corpus order (batches of 100); the
            documents answered `duplicate` against those `simdup dedup --mode stream` drops on the
            same file: the share of dedup's drops the service drops too.

Prints a JSON object (also written to --json). The corpus is eval/generate.py's: records with
`id`, `text`, `family` and `edit` ("original" for the originals).
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_corpus(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_truth(path: Path) -> list[tuple[str, str, float]]:
    pairs = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("a\t") or line.startswith("#") or not line.strip():
                continue
            a, b, j = line.rstrip("\n").split("\t")[:3]
            pairs.append((a, b, float(j)))
    return pairs


class Server:
    """A `simdup serve` process on a free loopback port, stopped on exit."""

    def __init__(self, simdup: str, store: str | None, data: Path):
        cmd = [simdup, "serve", "--listen", "127.0.0.1:0", "--max-docs", "1000", "--timeout", "600"]
        cmd += ["--store", store] if store else ["--data", str(data)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            raise SystemExit(f"service_eval: simdup serve did not start: {line!r}")
        host, port = line.split()[-1].rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=120)

    def call(self, method: str, path: str, body: object | None = None) -> dict:
        payload = None if body is None else json.dumps(body).encode()
        self.conn.request(method, path, body=payload)
        resp = self.conn.getresponse()
        data = resp.read()
        if resp.status >= 300:
            raise SystemExit(f"service_eval: {method} {path}: {resp.status} {data[:300]!r}")
        return json.loads(data) if data else {}

    def documents(self, collection: str, op: str, docs: list[dict], batch: int = 500) -> list[dict]:
        out = []
        for i in range(0, len(docs), batch):
            chunk = [{"id": d["id"], "text": d["text"]} for d in docs[i : i + batch]]
            out += self.call("POST", f"/v1/{collection}/{op}", {"documents": chunk})["results"]
        return out

    def close(self) -> None:
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(timeout=60)


def stream_drops(simdup: str, corpus: Path, work: Path) -> set[str]:
    out = work / "stream"
    subprocess.run([simdup, "dedup", "--mode", "stream", "--out", str(out), str(corpus)],
                   check=True, stdout=subprocess.DEVNULL)
    with (out / "duplicates.jsonl").open(encoding="utf-8") as f:
        return {json.loads(line)["id"] for line in f if line.strip()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--truth", type=Path, required=True)
    ap.add_argument("--simdup", default=str(ROOT / "build/release/cli/simdup"))
    ap.add_argument("--store", help="redis://HOST:PORT[/DB] (default: RocksDB in a temp dir)")
    ap.add_argument("--settings", default="{}", help="collection settings (JSON) over defaults")
    ap.add_argument("--json", type=Path, help="also write the result here")
    args = ap.parse_args()
    settings = json.loads(args.settings)

    docs = load_corpus(args.corpus)
    truth = load_truth(args.truth)
    by_id = {d["id"]: d for d in docs}
    originals = [d for d in docs if d["edit"] == "original"]
    original_of = {d["family"]: d["id"] for d in originals}

    # Reposts at Jaccard >= 0.8 with their own original.
    edited = {}
    for a, b, j in truth:
        for orig, copy in ((a, b), (b, a)):
            d = by_id[copy]
            if d["edit"] != "original" and original_of.get(d["family"]) == orig:
                edited[copy] = j
    # Odd-family originals with no true pair among the even-family originals.
    inserted_half = {d["id"] for d in originals if d["family"] % 2 == 0}
    related = set()
    for a, b, _ in truth:
        if a in inserted_half:
            related.add(b)
        if b in inserted_half:
            related.add(a)
    unrelated = [d for d in originals if d["family"] % 2 == 1 and d["id"] not in related]

    result: dict = {"corpus": str(args.corpus), "settings": settings, "store": args.store or "rocksdb"}
    run = str(int(time.time()))
    with tempfile.TemporaryDirectory(prefix="simdup-service-eval-") as tmp:
        work = Path(tmp)
        server = Server(args.simdup, args.store, work / "data")
        try:
            names = {what: f"eval-{what}-{run}" for what in ("edited", "unrelated", "stream")}
            for name in names.values():
                server.call("PUT", f"/v1/{name}", settings)
            result["collection"] = server.call("GET", f"/v1/{names['edited']}/stats")["collection"]

            server.documents(names["edited"], "insert", originals)
            queries = [by_id[i] for i in sorted(edited)]
            t0 = time.perf_counter()
            answers = server.documents(names["edited"], "check", queries)
            found = {a["id"] for a in answers if a["status"] == "duplicate"}
            missed = Counter()
            missed_by_j = Counter()
            for i, j in edited.items():
                if i not in found:
                    for kind in by_id[i]["edit"].split("+"):
                        missed[kind.split(":")[0]] += 1
                    missed_by_j[f"{min(int(j * 20) / 20, 0.95):.2f}"] += 1
            result["edited"] = {
                "queries": len(queries),
                "duplicate": len(found),
                "share": round(len(found) / max(len(queries), 1), 4),
                "check_seconds": round(time.perf_counter() - t0, 2),
                "missed_by_edit": dict(missed.most_common()),
                "missed_by_jaccard": dict(sorted(missed_by_j.items())),
            }

            server.documents(names["unrelated"], "insert",
                             [d for d in originals if d["id"] in inserted_half])
            answers = server.documents(names["unrelated"], "check", unrelated)
            false_dups = [a["id"] for a in answers if a["status"] == "duplicate"]
            result["unrelated"] = {
                "queries": len(unrelated),
                "duplicate": len(false_dups),
                "share": round(len(false_dups) / max(len(unrelated), 1), 4),
            }

            t0 = time.perf_counter()
            answers = server.documents(names["stream"], "check-insert", docs, batch=100)
            seconds = time.perf_counter() - t0
            served = {a["id"] for a in answers if a["status"] == "duplicate"}
        finally:
            server.close()
        dropped = stream_drops(args.simdup, args.corpus, work)
    both = served & dropped
    true_pair_ids = defaultdict(set)
    for a, b, _ in truth:
        true_pair_ids[a].add(b)
        true_pair_ids[b].add(a)
    result["stream"] = {
        "documents": len(docs),
        "dedup_stream_drops": len(dropped),
        "service_drops": len(served),
        "of_dedup_drops_also_dropped": round(len(both) / max(len(dropped), 1), 4),
        "service_only_drops": len(served - dropped),
        "service_only_drops_without_true_pair": sum(1 for i in served - dropped
                                                    if not true_pair_ids[i]),
        "check_insert_seconds": round(seconds, 2),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
