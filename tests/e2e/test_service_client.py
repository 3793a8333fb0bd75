"""simdup.client.Client (python/simdup/client.py) against the real `simdup serve`: typed
results, batches, integer fingerprints, tokens, threads sharing one client, retries across a
restart, and check-insert answers lost in a crash recovered without inserting twice."""

import select
import socket
import threading
import time

import pytest

from service_harness import (Server, flip, free_port, import_pure_python_package, run_threads,
                             spread_fingerprints)

import_pure_python_package()

from simdup.client import (Client, CollectionInfo, Document, Match, Result,  # noqa: E402
                           ServiceError, ServiceUnavailable)

BASE = 0x0123456789ABCDEF
LONG = ("Officials announced on Tuesday that the river bridge will close for repairs next "
        "month, and commuters were advised to plan other routes while crews replace the deck")


@pytest.fixture
def server(tmp_path):
    s = Server(["--data", str(tmp_path / "db"), "--max-docs", "40"])
    yield s
    s.close()


@pytest.fixture
def client(server):
    with Client(f"http://127.0.0.1:{server.port}", timeout=30, max_documents=40) as c:
        c.create_collection("news", k=3, window="0")
        yield c


def test_single_calls_give_typed_results(client):
    r = client.check_insert("news", "a", fingerprint=BASE)
    assert r == Result("a", "new", BASE, ())
    assert r.is_new and not r.is_duplicate
    r = client.check_insert("news", "b", fingerprint=flip(BASE, [0, 40, 63]))
    assert r.is_duplicate and r.matches == (Match("a", 3),)
    assert r.matches[0].jaccard is None  # sent as fingerprints: not verifiable
    assert client.check("news", "q", fingerprint=flip(BASE, [1])).matches == (Match("a", 1),)
    assert client.insert("news", "c", text=LONG).status == "inserted"
    # The same text in other case and punctuation is a near-duplicate of it.
    edited = LONG.upper().replace(",", " ;")
    r = client.check("news", "q", text=edited)
    assert r.is_duplicate and r.matches[0].id == "c" and r.matches[0].distance <= 3
    # Both sent as text to a verifying collection (the default): the Jaccard of their shingles.
    assert 0.8 <= r.matches[0].jaccard <= 1
    info = client.create_collection("news", k=3, window="0")
    assert info.verify == "jaccard:0.8"
    assert isinstance(r.fingerprint, int)
    assert client.check("news", "s", text="!!!").status == "too_short"
    # Reads and deletes.
    stored = client.get("news", "a")
    assert stored.fingerprint == BASE and stored.expires is None and stored.time > 1.6e9
    assert client.get("news", "nope") is None
    assert client.delete("news", "a") is True
    assert client.delete("news", "a") is False
    assert client.get("news", "a") is None


def test_batches_are_split_in_order_and_each_sees_the_earlier(client):
    fps = spread_fingerprints(100, 8, seed=7)
    docs = [Document(f"d{i}", fingerprint=fp) for i, fp in enumerate(fps)]
    # 100 documents at most 40 per request: three requests, in order.
    docs.append(Document("dup-of-d5", fingerprint=flip(fps[5], [2])))
    docs.append({"id": "dup-of-d99", "fingerprint": flip(fps[99], [2, 3])})
    out = client.check_insert_many("news", docs)
    assert [r.id for r in out] == [d.id if isinstance(d, Document) else d["id"] for d in docs]
    assert [r.status for r in out[:100]] == ["new"] * 100
    assert out[100].matches == (Match("d5", 1),) and out[101].matches == (Match("d99", 2),)
    assert client.stats("news")["documents"] == 100
    checks = client.check_many("news", [{"id": "q", "fingerprint": fps[i]} for i in range(50)])
    assert all(r.matches[0] == Match(f"d{i}", 0) for i, r in enumerate(checks))
    assert [r.status for r in client.insert_many("news", docs[:3])] == ["inserted"] * 3


def test_collections_and_errors(client):
    client.create_collection("zh", compat="jieba-tfidf")
    infos = client.collections()
    assert [i.name for i in infos] == ["news", "zh"]
    assert isinstance(infos[0], CollectionInfo) and infos[0].k == 3 and infos[1].compat == \
        "jieba-tfidf"
    assert infos[0].sketch == 512 and infos[0].minhash == "10x6" and infos[0].extra == {}
    info = client.create_collection("short", sketch=128, minhash="off")
    assert (info.sketch, info.minhash) == (128, "off")
    assert client.drop_collection("short")
    with pytest.raises(ServiceError) as e:
        client.create_collection("news", k=2)
    assert e.value.status == 400 and e.value.code == "invalid_argument"
    with pytest.raises(ServiceError) as e:
        client.check("missing", "a", fingerprint=1)
    assert e.value.status == 404
    with pytest.raises(ValueError):
        client.check("news", "a", text="x", fingerprint=1)
    with pytest.raises(ValueError):
        client.check("news", "a", fingerprint=2**64)
    assert client.drop_collection("zh") is True and client.drop_collection("zh") is False
    with pytest.raises(ValueError):
        Client("https://example.com")


def test_token(tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    s = Server(["--data", str(tmp_path / "db"), "--token-file", str(token)])
    try:
        url = f"http://127.0.0.1:{s.port}"
        with Client(url) as anonymous:
            assert anonymous.health()  # no token needed
            with pytest.raises(ServiceError) as e:
                anonymous.collections()
            assert e.value.status == 401 and e.value.code == "unauthorized"
        with Client(url, token="s3cret") as c:
            c.create_collection("news")
            assert c.check_insert("news", "a", fingerprint=1).status == "new"
    finally:
        s.close()


def test_threads_share_one_client(client):
    fps = spread_fingerprints(800, 6, seed=11)
    results = {}

    def worker(t):
        for i in range(t, 800, 8):
            # Each document twice, from two threads: exactly one of the two is new.
            r = client.check_insert("news", f"d{i}-{t}", fingerprint=fps[i])
            results[(i, t)] = r.status
            r = client.check_insert("news", f"d{i}-x{t}", fingerprint=flip(fps[(i + 1) % 800], [1]))
            results[(i, "x", t)] = r.status

    run_threads(8, worker)
    new = sum(1 for v in results.values() if v == "new")
    assert new == 800  # every fingerprint once, whichever request got there first
    assert len(client._idle) <= 16  # the pool is bounded


def wait_for(done, guard=60):
    """Polls `done`; fails only if it still does not hold after `guard` seconds (a hang)."""
    end = time.monotonic() + guard
    while not done():
        assert time.monotonic() < end, "timed out waiting for an event"
        time.sleep(0.02)


def closed_by_peer(sock):
    """True once the other end closed: readable, and a peek finds EOF."""
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""


def test_retries_through_a_restart_and_gives_up_clearly(tmp_path):
    port = free_port()
    data = tmp_path / "db"
    s = Server(["--data", str(data)], listen=f"127.0.0.1:{port}")
    c = Client(f"http://127.0.0.1:{port}", retries=40, backoff=0.05, max_backoff=0.5)
    c.create_collection("news", window="0")
    assert c.check_insert("news", "a", fingerprint=BASE).is_new
    s.kill9()
    s.close()
    restarted = []

    def restart():
        # Once a request has failed against the stopped server, not after a guessed delay.
        wait_for(lambda: c.retried >= 1)
        restarted.append(Server(["--data", str(data)], listen=f"127.0.0.1:{port}"))

    t = threading.Thread(target=restart)
    t.start()
    try:
        # Sent while the server is down: connection refused, retried until it is back.
        r = c.check_insert("news", "b", fingerprint=flip(BASE, [7]))
        assert r.is_duplicate and r.matches == (Match("a", 1),)
    finally:
        t.join()
        for srv in restarted:
            srv.close()
    quick = Client(f"http://127.0.0.1:{port}", retries=2, backoff=0.01)
    with pytest.raises(ServiceUnavailable):
        quick.check("news", "a", fingerprint=1)


class _CutAfterForward(threading.Thread):
    """A TCP relay that forwards the first request whole to the server, then drops the
    connection without passing the answer back: the client cannot know whether its
    check-insert was applied (it was)."""

    def __init__(self, target_port):
        super().__init__(daemon=True)
        self.target_port = target_port
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.cut = 0
        self.stop = False

    def run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.relay, args=(conn,), daemon=True).start()

    def relay(self, conn):
        upstream = socket.create_connection(("127.0.0.1", self.target_port))
        cut = self.cut == 0
        self.cut += 1

        def pump(src, dst):
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
            except OSError:
                pass
            for x in (src, dst):
                try:
                    x.close()
                except OSError:
                    pass

        if cut:
            # Read the request, forward it, wait for the server's answer, then drop both.
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int([h.split(b":")[1] for h in head.split(b"\r\n")
                          if h.lower().startswith(b"content-length")][0])
            while len(body) < length:
                body += conn.recv(65536)
            upstream.sendall(head + b"\r\n\r\n" + body)
            upstream.recv(65536)  # the answer exists (the insert is durable) ...
            upstream.close()
            conn.close()  # ... and is lost on the way back
            return
        threading.Thread(target=pump, args=(conn, upstream), daemon=True).start()
        pump(upstream, conn)


def test_lost_check_insert_answer_is_recovered_without_inserting_twice(server):
    admin = server.client()
    assert admin.request("PUT", "/v1/news", {"window": "0"})[0] == 200
    admin.close()
    relay = _CutAfterForward(server.port)  # cuts its first connection: the batch below
    relay.start()
    with Client(f"http://127.0.0.1:{relay.port}", retries=3, backoff=0.01) as c:
        fps = spread_fingerprints(3, 8, seed=3)
        docs = [Document("n1", fingerprint=fps[0]), Document("n2", fingerprint=fps[1]),
                Document("n1-copy", fingerprint=flip(fps[0], [4]))]
        out = c.check_insert_many("news", docs)
        # n1 and n2 were inserted by the lost attempt: recovered as new, not "duplicate of
        # themselves"; the copy was not stored, so it was sent again and is a duplicate.
        assert [(r.id, r.status, r.recovered) for r in out] == [
            ("n1", "new", True), ("n2", "new", True), ("n1-copy", "duplicate", False)]
        assert out[2].matches == (Match("n1", 1),)
        assert out[0].fingerprint == fps[0]
        assert c.stats("news")["inserted"] == 2
    relay.stop = True
    relay.sock.close()


def test_idle_connections_the_server_closed_are_not_reused(tmp_path):
    s = Server(["--data", str(tmp_path / "db"), "--timeout", "1"])
    try:
        url = f"http://127.0.0.1:{s.port}"
        with Client(url, idle_timeout=0.5, retries=3) as fresh, \
                Client(url, idle_timeout=100, retries=3, backoff=0.01) as stale:
            fresh.create_collection("news", window="0")
            stale.health()
            # The server closes both idle connections after 1 s; wait until both sockets see it.
            pooled = [conn for client in (fresh, stale) for conn, _ in client._idle]
            assert len(pooled) == 2
            wait_for(lambda: all(closed_by_peer(conn.sock) for conn in pooled))
            # Not reused: a new connection, no retry.
            assert fresh.check_insert("news", "a", fingerprint=BASE).status == "new"
            assert fresh.retried == 0
            # Reused although closed: the lost attempt is resolved, still exactly right.
            r = stale.check_insert("news", "b", fingerprint=~BASE & (2**64 - 1))
            assert r.status == "new" and stale.retried >= 1
            assert fresh.stats("news")["inserted"] == 2
    finally:
        s.close()
