#!/usr/bin/python3
"""Soak test of `simdup serve` (RocksDB store): mixed load with restarts, ending with a full
consistency check of everything acknowledged against what the store holds. Not run by CI.

    /usr/bin/python3 bench/e2e/service_soak.py --simdup build/release/cli/simdup \
        --minutes 30 [--restart-every 180] [--window 120] [--writers 4] [--data DIR]

Load, for --minutes: writers check-insert batches (new fingerprints and near copies of earlier
ones), checkers check batches, a deleter deletes acknowledged documents, and the window expires
documents as a test clock (--clock-file, advanced with real time) moves on. Every
--restart-every seconds the server is stopped, alternately with SIGTERM and kill -9, and
started again on the same data; requests cut off by it count as "unknown" (not acknowledged).

At the end the server is restarted once more and every document ever sent is checked, in
batches of 500 (POST /v1/soak/check with its fingerprint; present means its own id is among
the matches at distance 0): an acknowledged insert still in the window must be there; an
acknowledged delete, a document out of the window, or one answered `duplicate` must be gone; a
document never sent must not exist (the stats count equals the documents found); unknowns may
be either. A random sample of 20,000 is also looked up by id (GET /v1/soak/documents/ID),
which must agree with the index. Prints one JSON object: requests and statuses per kind,
latency percentiles, restarts and their start times, the server's peak RSS, the soak
process's own peak RSS, and the check's counts; exit 1 when the check found a violation.

Memory: the soak keeps about 17 bytes per document sent (fingerprint, time and state in flat
arrays, indexed by the writer's sequence number), so 30 minutes at 10K documents per second
stay under 1 GB.
"""

import argparse
import array
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "e2e"))
from service_harness import Client, fp_hex  # noqa: E402

COLLECTION = "soak"
CHECK_BATCH = 500
GET_SAMPLE = 20_000

# A document's state, one byte per document sent.
UNKNOWN, ACKED, DUPLICATE, DELETED, DELETE_UNKNOWN = range(5)
STATE_NAMES = {UNKNOWN: "unknown", ACKED: "acked", DUPLICATE: "duplicate", DELETED: "deleted",
               DELETE_UNKNOWN: "delete_unknown"}


def doc_id(w, n):
    return f"w{w}-{n}"


class Soak:
    def __init__(self, args):
        self.args = args
        self.data = Path(args.data or tempfile.mkdtemp(prefix="simdup-soak-"))
        self.data.parent.mkdir(parents=True, exist_ok=True)
        self.clock_file = self.data.parent / (self.data.name + ".clock")
        self.log = open(self.data.parent / (self.data.name + ".stderr.log"), "a")
        self.t0 = 1_700_000_000
        self.started = time.time()
        self.set_clock()
        self.proc = None
        self.port = None
        self.up = threading.Event()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        # Per writer, indexed by its sequence number: fingerprint, time, state.
        self.fps = [array.array("Q") for _ in range(args.writers)]
        self.times = [array.array("q") for _ in range(args.writers)]
        self.states = [bytearray() for _ in range(args.writers)]
        # Acknowledged and not (being) deleted, as writer << 40 | sequence number.
        self.acked = array.array("q")
        self.stats = {}
        self.latency = {}
        self.restarts = []
        self.peak_rss_kb = 0

    # --- the server ---

    def now(self):
        return self.t0 + int(time.time() - self.started)

    def set_clock(self):
        tmp = self.clock_file.with_suffix(".tmp")
        tmp.write_text(str(self.t0 + int(time.time() - self.started)))
        os.replace(tmp, self.clock_file)

    def start(self):
        began = time.time()
        self.proc = subprocess.Popen(
            [self.args.simdup, "serve", "--listen", "127.0.0.1:0", "--data", str(self.data),
             "--clock-file", str(self.clock_file), "--expire-interval-ms", "200",
             "--snapshot-docs", "20000"],
            stdout=subprocess.PIPE, stderr=self.log, text=True,
            env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError("simdup serve did not start: " + line)
        self.port = int(line.strip().rsplit(":", 1)[1])
        client = Client(self.port)
        status, _ = client.request("PUT", f"/v1/{COLLECTION}",
                                   {"k": 3, "window_s": self.args.window})
        client.close()
        if status != 200:
            raise RuntimeError(f"PUT /v1/{COLLECTION}: {status}")
        self.up.set()
        return time.time() - began

    def halt(self, how):
        self.up.clear()
        if how == "kill9":
            self.proc.kill()
        else:
            self.proc.terminate()
        code = self.proc.wait(timeout=300)
        self.proc.stdout.close()
        return code

    def sample_rss(self):
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    self.peak_rss_kb = max(self.peak_rss_kb, int(line.split()[1]))
        except OSError:
            pass

    # --- the load ---

    def count(self, kind, status, seconds):
        with self.lock:
            per = self.stats.setdefault(kind, {})
            per[str(status)] = per.get(str(status), 0) + 1
            if status == 200:
                self.latency.setdefault(kind, array.array("d")).append(seconds)

    def call(self, client_box, kind, method, path, body=None):
        """One request; None when the server went away before answering."""
        self.up.wait()
        if client_box[0] is None or client_box[0].port != self.port:
            client_box[0] = Client(self.port)
        began = time.perf_counter()
        try:
            status, answer = client_box[0].request(method, path, body)
        except Exception:
            client_box[0] = None
            self.count(kind, "cut_off", 0)
            return None
        self.count(kind, status, time.perf_counter() - began)
        return status, answer

    def random_acked(self, rng):
        """(writer, sequence number) of a random acknowledged document; call under the lock."""
        key = self.acked[rng.randrange(len(self.acked))]
        return key >> 40, key & ((1 << 40) - 1)

    def writer(self, w):
        rng = random.Random(f"writer{w}")
        box = [None]
        fps, times, states = self.fps[w], self.times[w], self.states[w]
        while not self.stop.is_set():
            t = self.now()
            batch = []
            for _ in range(20):
                with self.lock:
                    base = None
                    if self.acked and rng.random() < 0.2:
                        bw, bn = self.random_acked(rng)
                        base = self.fps[bw][bn]
                    value = base ^ (1 << rng.randrange(64)) if base is not None \
                        else rng.getrandbits(64)
                    n = len(fps)
                    fps.append(value)
                    times.append(t)
                    states.append(UNKNOWN)
                batch.append((n, value))
            got = self.call(box, "check-insert", "POST", f"/v1/{COLLECTION}/check-insert", {
                "documents": [{"id": doc_id(w, n), "fingerprint": fp_hex(v), "time": t}
                              for n, v in batch]})
            if got is None or got[0] != 200:
                continue
            with self.lock:
                for (n, _), result in zip(batch, got[1]["results"]):
                    if result["status"] == "new":
                        states[n] = ACKED
                        self.acked.append(w << 40 | n)
                    else:
                        states[n] = DUPLICATE  # answered duplicate: never stored

    def checker(self, c):
        rng = random.Random(f"checker{c}")
        box = [None]
        while not self.stop.is_set():
            with self.lock:
                sample = [self.fps[w][n] for w, n in
                          (self.random_acked(rng) for _ in range(20))] if self.acked else [1]
            self.call(box, "check", "POST", f"/v1/{COLLECTION}/check", {"documents": [
                {"id": f"q{i}", "fingerprint": fp_hex(v), "time": self.now()}
                for i, v in enumerate(sample)]})

    def deleter(self):
        rng = random.Random("deleter")
        box = [None]
        while not self.stop.is_set():
            with self.lock:
                if len(self.acked) < 100:
                    target = None
                else:
                    i = rng.randrange(len(self.acked))
                    key = self.acked[i]
                    self.acked[i] = self.acked[-1]
                    self.acked.pop()
                    target = key >> 40, key & ((1 << 40) - 1)
                    self.states[target[0]][target[1]] = DELETE_UNKNOWN
            if target is None:
                time.sleep(0.1)
                continue
            got = self.call(box, "delete", "DELETE",
                            f"/v1/{COLLECTION}/documents/{doc_id(*target)}")
            if got is not None and got[0] in (200, 404):
                # 404: it expired meanwhile; gone either way.
                with self.lock:
                    self.states[target[0]][target[1]] = DELETED
            time.sleep(0.02)

    # --- the check ---

    def check(self):
        client = Client(self.port)
        # The server's clock is frozen now: once two expiry passes removed nothing more, the
        # store holds only documents in the window.
        end = int(self.clock_file.read_text())
        previous = None
        while True:
            expired = client.request("GET", f"/v1/{COLLECTION}/stats")[1]["expired"]
            if expired == previous:
                break
            previous = expired
            time.sleep(1)
        counts = {"acked_live_found": 0, "acked_expired_gone": 0, "deleted_gone": 0,
                  "duplicate_gone": 0, "unknown_found": 0, "unknown_gone": 0,
                  "get_sample_agrees": 0, "violations": 0}
        examples = []
        found = 0
        present_of = {}  # the GET sample's ids -> present by the index
        rng = random.Random("check")
        total = sum(len(states) for states in self.states)
        sampled = set(rng.sample(range(total), min(GET_SAMPLE, total)))
        lock = threading.Lock()

        def judge(w, n, present):
            nonlocal found
            state = self.states[w][n]
            live = self.times[w][n] + self.args.window > end
            ok = True
            with lock:
                found += present
                if state == ACKED and live:
                    ok = present
                    counts["acked_live_found"] += ok
                elif state == ACKED:
                    ok = not present
                    counts["acked_expired_gone"] += ok
                elif state == DELETED:
                    ok = not present
                    counts["deleted_gone"] += ok
                elif state == DUPLICATE:
                    ok = not present
                    counts["duplicate_gone"] += ok
                else:
                    counts["unknown_found" if present else "unknown_gone"] += 1
                if not ok:
                    counts["violations"] += 1
                    if len(examples) < 5:
                        examples.append({"id": doc_id(w, n), "state": STATE_NAMES[state],
                                         "live": live, "present": present})

        def check_writer(w):
            c = Client(self.port)
            offset = sum(len(states) for states in self.states[:w])
            fps = self.fps[w]
            for first in range(0, len(fps), CHECK_BATCH):
                ns = range(first, min(first + CHECK_BATCH, len(fps)))
                status, answer = c.request("POST", f"/v1/{COLLECTION}/check", {"documents": [
                    {"id": doc_id(w, n), "fingerprint": fp_hex(fps[n]), "time": end}
                    for n in ns]})
                if status != 200:
                    raise RuntimeError(f"check of {doc_id(w, first)}...: {status} {answer}")
                for n, result in zip(ns, answer["results"]):
                    own = doc_id(w, n)
                    present = any(m["id"] == own and m["distance"] == 0
                                  for m in result["matches"])
                    judge(w, n, present)
                    if offset + n in sampled:
                        with lock:
                            present_of[own] = present
            c.close()

        threads = [threading.Thread(target=check_writer, args=(w,))
                   for w in range(self.args.writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # The id map must agree with the index on the sample.
        for own, present in sorted(present_of.items()):
            status, answer = client.request("GET", f"/v1/{COLLECTION}/documents/{own}")
            if status not in (200, 404):
                raise RuntimeError(f"GET {own}: {status} {answer}")
            if (status == 200) == present:
                counts["get_sample_agrees"] += 1
            else:
                counts["violations"] += 1
                examples.append({"id": own, "get": status, "present_by_check": present})
        stats = client.request("GET", f"/v1/{COLLECTION}/stats")[1]
        counts["stats_documents"] = stats["documents"]
        counts["found"] = found
        if stats["documents"] != found:
            counts["violations"] += 1
            examples.append({"stats_documents": stats["documents"], "found": found})
        counts["examples"] = examples
        client.close()
        return counts

    def run(self):
        self.restarts.append({"how": "first", "start_s": round(self.start(), 2)})
        threads = [threading.Thread(target=self.writer, args=(w,))
                   for w in range(self.args.writers)]
        threads += [threading.Thread(target=self.checker, args=(c,)) for c in range(2)]
        threads.append(threading.Thread(target=self.deleter))
        for t in threads:
            t.start()
        end = self.started + self.args.minutes * 60
        next_restart = time.time() + self.args.restart_every
        how = "sigterm"
        while time.time() < end:
            time.sleep(0.5)
            self.set_clock()
            self.sample_rss()
            if time.time() >= next_restart:
                code = self.halt(how)
                took = self.start()
                self.restarts.append({"how": how, "exit": code, "start_s": round(took, 2)})
                how = "kill9" if how == "sigterm" else "sigterm"
                next_restart = time.time() + self.args.restart_every
        self.stop.set()
        for t in threads:
            t.join()
        elapsed = time.time() - self.started
        self.set_clock()
        # Once more from the disk, then the check.
        self.halt("sigterm")
        took = self.start()
        self.restarts.append({"how": "final sigterm", "start_s": round(took, 2)})
        check_began = time.time()
        check = self.check()
        check_s = time.time() - check_began
        self.halt("sigterm")
        latency = {}
        for kind, values in self.latency.items():
            values = sorted(values)
            latency[kind] = {f"p{p}_ms": round(values[min(len(values) - 1,
                                                         len(values) * p // 100)] * 1000, 2)
                             for p in (50, 99)}
            latency[kind]["per_s"] = round(len(values) / elapsed, 1)
        report = {"minutes": round(elapsed / 60, 2), "data": str(self.data),
                  "requests": self.stats, "latency": latency, "restarts": self.restarts,
                  "peak_rss_mb": round(self.peak_rss_kb / 1024, 1),
                  "soak_peak_rss_mb": round(
                      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "documents_sent": sum(len(states) for states in self.states),
                  "check_s": round(check_s, 1), "check": check}
        print(json.dumps(report, indent=1))
        return 1 if check["violations"] else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--simdup", required=True, help="the simdup binary")
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--restart-every", type=float, default=180, help="seconds")
    p.add_argument("--window", type=int, default=120, help="the collection's window_s")
    p.add_argument("--writers", type=int, default=4)
    p.add_argument("--data", help="store directory (default: a new temporary one)")
    args = p.parse_args()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(Soak(args).run())


if __name__ == "__main__":
    main()
