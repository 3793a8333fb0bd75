"""Helpers for the `simdup serve` end-to-end tests: start the real binary (and a real
redis-server) on free loopback ports, and talk HTTP/JSON to them."""

import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import threading
import time

from cli_harness import SOURCE_DIR, simdup_bin


def import_pure_python_package():
    """Makes `simdup.client` and `simdup.scrapy` importable from the source tree without the
    compiled `simdup._core`: they are standard-library Python (and Scrapy), and the package's
    __init__ loads `_core`, which an ASan build cannot load into an uninstrumented
    interpreter. `simdup` is registered as a bare package over python/simdup whose __init__
    is not run. Use before any `import simdup...`."""
    import sys
    import types
    if "simdup" not in sys.modules:
        package = types.ModuleType("simdup")
        package.__path__ = [str(SOURCE_DIR / "python" / "simdup")]
        sys.modules["simdup"] = package


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running `simdup serve` process."""

    def __init__(self, args, env=None, listen="127.0.0.1:0", preexec_fn=None):
        run_env = dict(os.environ)
        # Leak reports at exit are not what these tests are about and kill -9 skips them anyway.
        run_env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
        if env:
            run_env.update(env)
        self.proc = subprocess.Popen(
            [simdup_bin(), "serve", "--listen", listen, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=run_env,
            preexec_fn=preexec_fn)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError("simdup serve did not start: " + line + self.proc.stderr.read())
        self.port = int(line.strip().rsplit(":", 1)[1])

    def client(self, token=None):
        return Client(self.port, token)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def terminate(self):
        """SIGTERM; returns the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)

    def close(self):
        if self.proc.poll() is None:
            self.terminate()
        self.proc.stdout.close()
        self.proc.stderr.close()


class Client:
    """One keep-alive HTTP connection (use one per thread)."""

    def __init__(self, port, token=None):
        self.port = port
        self.token = token
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def request(self, method, path, body=None, raw=None, headers=None):
        """Returns (status, parsed JSON or text)."""
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        hdrs = {"Content-Type": "application/json"}
        if self.token:
            hdrs["Authorization"] = "Bearer " + self.token
        hdrs.update(headers or {})
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=data, headers=hdrs)
                resp = self.conn.getresponse()
                text = resp.read().decode()
                break
            except (ConnectionError, http.client.HTTPException):
                # The server closed an idle keep-alive connection: reconnect once.
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                if attempt == 1:
                    raise
        ctype = resp.getheader("Content-Type", "")
        return resp.status, (json.loads(text) if "json" in ctype else text)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def close(self):
        self.conn.close()


class Redis:
    """A throwaway redis-server on a free loopback port (or `port`, to restart one). With
    `aof`, every write is in the append-only file (fsynced) before Redis answers it."""

    def __init__(self, workdir, port=None, aof=False):
        self.port = port or free_port()
        durability = ["--appendonly", "yes", "--appendfsync", "always"] if aof else [
            "--appendonly", "no"]
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             *durability, "--dir", str(workdir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self.proc.kill()
        raise RuntimeError("redis-server did not start")

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def kill9(self):
        self.proc.kill()
        self.proc.wait(timeout=30)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def have_redis():
    return shutil.which("redis-server") is not None


def fp_hex(value):
    return f"{value:016x}"


def hex_distance(a, b):
    """Hamming distance of two fingerprints as the service answers them (16 hex digits)."""
    return bin(int(a, 16) ^ int(b, 16)).count("1")


def check_insert_text(client, collection, doc_id, text):
    """POST one text to check-insert; the answer's body (status 200 asserted)."""
    status, body = client.post(f"/v1/{collection}/check-insert", {"id": doc_id, "text": text})
    assert status == 200, body
    return body


def flip(value, bits):
    for b in bits:
        value ^= 1 << b
    return value


def spread_fingerprints(n, min_distance, seed):
    """n random fingerprints pairwise more than min_distance apart."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        v = rng.getrandbits(64)
        if all(bin(v ^ o).count("1") > min_distance for o in out):
            out.append(v)
    return out


def run_threads(count, worker):
    """Runs worker(0), ..., worker(count - 1) on threads at once and fails the test with what
    any of them raised (an exception in a thread cannot fail the test itself)."""
    errors = []

    def guarded(i):
        try:
            worker(i)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def near_duplicate_families(families, variants, seed):
    """`families` centres more than 8 bits apart, each with `variants` fingerprints (the centre
    and copies one random bit from it), shuffled: [(id, family, fingerprint)]. Members of one
    family are within 2 bits of each other and more than 6 from any other family's, so for any
    k from 2 to 6 each family is exactly one document's near duplicates."""
    rng = random.Random(seed)
    docs = [(f"c{c}v{v}", c, flip(centre, [rng.randrange(64)] if v else []))
            for c, centre in enumerate(spread_fingerprints(families, 8, seed=seed))
            for v in range(variants)]
    rng.shuffle(docs)
    return docs


def check_insert_concurrently(docs, threads, server_for, collection="crawl"):
    """Check-inserts each (id, family, fingerprint) of `docs`, one request each, from `threads`
    threads at once (thread i on its own connection to server_for(i)); returns
    {id: (family, answer)}."""
    answers = {}
    lock = threading.Lock()

    def worker(i):
        client = server_for(i).client()
        for doc_id, family, value in docs[i::threads]:
            status, body = client.post(f"/v1/{collection}/check-insert",
                                       {"id": doc_id, "fingerprint": fp_hex(value)})
            assert status == 200, body
            with lock:
                answers[doc_id] = (family, body)
        client.close()

    run_threads(threads, worker)
    assert len(answers) == len(docs)
    return answers


def assert_one_new_per_family(answers, families, k):
    """`answers` {id: (family, check-insert answer)}: exactly one "new" per family, and every
    other member answered with matches within k."""
    new = {}
    for doc_id, (family, body) in answers.items():
        if body["status"] == "new":
            new.setdefault(family, []).append(doc_id)
        else:
            assert body["matches"] and all(m["distance"] <= k for m in body["matches"]), body
    assert sorted(new) == list(range(families))
    assert all(len(ids) == 1 for ids in new.values()), new


def assert_all_stored(client, docs, collection="crawl"):
    """Asserts every {id: fingerprint} of `docs` is found in `collection` at distance 0 (probed
    by fingerprint, so unverified: jaccard null)."""
    items = sorted(docs.items())
    for start in range(0, len(items), 500):
        chunk = items[start:start + 500]
        status, body = client.post(f"/v1/{collection}/check", {"documents": [
            {"id": "probe", "fingerprint": fp_hex(v)} for _, v in chunk]})
        assert status == 200, body
        for (doc_id, _), result in zip(chunk, body["results"]):
            assert {"id": doc_id, "distance": 0, "jaccard": None} in result["matches"], doc_id


class WriteLoad:
    """Writer threads, each on its own connection, that check-insert batches of random
    fingerprints into `collection` until stop() (batch=None: one document a request, in the
    single-document form). `acked` holds what the server answered "new"
    (id -> fingerprint), `failures` its error answers as (status, body), `broken` how many
    writers lost their connection (a killed server: the answer to their last batch never came,
    so none of it counts as acknowledged). Read them under `lock` while the load runs."""

    def __init__(self, server, prefix, writers=4, batch=20, collection="crawl"):
        self.acked, self.failures, self.broken = {}, [], 0
        self.lock = threading.Lock()
        self._stopping = threading.Event()
        self._path = f"/v1/{collection}/check-insert"
        self._threads = [threading.Thread(target=self._write,
                                          args=(server.client(), f"{prefix}{i}", batch))
                         for i in range(writers)]
        for t in self._threads:
            t.start()

    def _write(self, client, name, batch):
        rng = random.Random(name)
        n = 0
        while not self._stopping.is_set():
            docs = [(f"{name}-{n + j}", rng.getrandbits(64)) for j in range(batch or 1)]
            n += len(docs)
            request = [{"id": d, "fingerprint": fp_hex(v)} for d, v in docs]
            try:
                status, body = client.post(self._path,
                                           {"documents": request} if batch else request[0])
            except (OSError, http.client.HTTPException):
                with self.lock:
                    self.broken += 1
                return
            with self.lock:
                if status == 200:
                    results = body["results"] if batch else [body]
                    self.acked.update((d, v) for (d, v), r in zip(docs, results)
                                      if r["status"] == "new")
                else:
                    self.failures.append((status, body))
        client.close()

    def acknowledged(self):
        with self.lock:
            return len(self.acked)

    def stop(self):
        self._stopping.set()
        for t in self._threads:
            t.join()
