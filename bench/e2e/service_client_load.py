#!/usr/bin/python3
"""Load test of `simdup serve` through the Python client (simdup.client.Client), to set beside
the C++ load generator (bench/e2e/service_load.cpp) on the same server.

    /usr/bin/python3 bench/e2e/service_client_load.py --port 18431 --threads 8 --seconds 10 \
        --batch 100 [--op check-insert|check|insert] [--collection bench] [--server-pid PID]

Like the C++ generator: random fingerprints and run-unique ids, so every check-insert is a new,
durable insert (the worst case). All threads share one Client (its pool holds one keep-alive
connection per thread). Prints one JSON line: documents and requests per second, latency
percentiles, the client's CPU time per document, and with --server-pid the server's (from
/proc).
"""

import argparse
import json
import os
import random
import sys
import threading
import time
from pathlib import Path

try:
    from simdup.client import Client
except ImportError:
    # From the source tree, without the compiled simdup._core the package's __init__ loads:
    # the client is standard-library Python.
    import types
    _package = types.ModuleType("simdup")
    _package.__path__ = [str(Path(__file__).resolve().parents[2] / "python" / "simdup")]
    sys.modules["simdup"] = _package
    from simdup.client import Client


def cpu_seconds(pid):
    if not pid:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--collection", default="bench")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--batch", type=int, default=100, help="documents per request")
    ap.add_argument("--op", choices=["check-insert", "check", "insert"], default="check-insert")
    ap.add_argument("--token")
    ap.add_argument("--server-pid", type=int)
    args = ap.parse_args()

    client = Client(f"http://{args.host}:{args.port}", token=args.token, timeout=60,
                    max_connections=args.threads, max_documents=max(args.batch, 1))
    client.create_collection(args.collection, window="0")
    send = {"check-insert": client.check_insert_many, "check": client.check_many,
            "insert": client.insert_many}[args.op]
    run_id = f"{time.time_ns():x}"
    stop = threading.Event()
    counts = [0] * args.threads
    latencies = [[] for _ in range(args.threads)]
    failures = []

    def worker(t):
        rng = random.Random(t * 7919 + time.time_ns())
        n = 0
        try:
            while not stop.is_set():
                docs = [{"id": f"{run_id}-{t}-{n + i}", "fingerprint": rng.getrandbits(64)}
                        for i in range(args.batch)]
                start = time.perf_counter()
                send(args.collection, docs)
                latencies[t].append(time.perf_counter() - start)
                n += args.batch
                counts[t] = n
        except Exception as e:  # noqa: BLE001 - reported in the output
            failures.append(repr(e))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(args.threads)]
    cpu0 = cpu_seconds(args.server_pid)
    own0 = time.process_time()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(args.server_pid) - cpu0
    own = time.process_time() - own0
    docs = sum(counts)
    lat = sorted(x for per in latencies for x in per)

    def pct(p):
        return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 3) if lat else None

    out = {"client": "python simdup.client.Client", "op": args.op, "threads": args.threads,
           "batch": args.batch, "seconds": round(wall, 2), "documents": docs,
           "docs_per_s": round(docs / wall), "requests_per_s": round(len(lat) / wall),
           "p50_ms": pct(0.50), "p99_ms": pct(0.99),
           "client_cpu_us_per_doc": round(own / max(docs, 1) * 1e6, 2), "failures": failures[:3]}
    if args.server_pid:
        out["server_cpu_us_per_doc"] = round(cpu / max(docs, 1) * 1e6, 2)
    print(json.dumps(out))
    client.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
