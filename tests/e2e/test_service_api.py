"""`simdup serve` with the embedded RocksDB store: the HTTP API, errors, limits and tokens."""

import json
import os
import socket
import urllib.parse

import pytest

from cli_harness import run, write_jsonl
from service_harness import Server, flip, fp_hex

BASE = 0x0123456789ABCDEF


@pytest.fixture
def server(tmp_path):
    s = Server(["--data", str(tmp_path / "db"), "--max-docs", "50", "--max-body", "20000"])
    yield s
    s.close()


@pytest.fixture
def client(server):
    c = server.client()
    status, body = c.request("PUT", "/v1/news", {"k": 3, "window": "0"})
    assert status == 200, body
    yield c
    c.close()


def doc(i, value, **extra):
    return {"id": i, "fingerprint": fp_hex(value), **extra}


def test_health_and_collection_settings(client):
    assert client.request("GET", "/healthz") == (200, {"status": "ok"})
    status, body = client.request("GET", "/v1/news/stats")
    assert status == 200
    assert body["collection"] == {"name": "news", "k": 3, "window_s": 0, "compat": "none",
                                  "shingle_width": 4, "features": "shingles", "top_k": 0,
                                  "verify": "jaccard:0.8", "sketch": 512, "minhash": "10x6"}
    assert body["documents"] == 0
    # Same settings again: accepted; different ones: refused.
    assert client.request("PUT", "/v1/news", {"k": 3, "window_s": 0})[0] == 200
    # Fields left out keep the collection's values, not the defaults (k 4 here).
    status, body = client.request("PUT", "/v1/news", {"window_s": 0})
    assert status == 200 and body["k"] == 3
    status, body = client.request("PUT", "/v1/news", {"k": 2})
    assert status == 400 and body["error"]["code"] == "invalid_argument"


def test_check_insert_distance_is_inclusive(client):
    status, body = client.post("/v1/news/check-insert", doc("a", BASE))
    assert status == 200
    assert body == {"id": "a", "status": "new", "fingerprint": fp_hex(BASE), "matches": []}
    # Distance 3 == k: a duplicate of a.
    status, body = client.post("/v1/news/check-insert", doc("b", flip(BASE, [0, 17, 63])))
    assert body["status"] == "duplicate"
    assert body["matches"] == [{"id": "a", "distance": 3, "jaccard": None}]
    # Distance 4 > k: new.
    status, body = client.post("/v1/news/check-insert", doc("c", flip(BASE, [1, 2, 3, 4])))
    assert body["status"] == "new" and body["matches"] == []
    # check changes nothing and lists every match, closest first.
    status, body = client.post("/v1/news/check", doc("q", flip(BASE, [1])))
    assert body["status"] == "duplicate"
    assert body["matches"] == [{"id": "a", "distance": 1, "jaccard": None},
                               {"id": "c", "distance": 3, "jaccard": None}]
    assert client.request("GET", "/v1/news/stats")[1]["documents"] == 2


def test_batch_sees_earlier_documents(client):
    docs = [doc("x1", BASE), doc("x2", flip(BASE, [5])), doc("x3", ~BASE & (2**64 - 1))]
    status, body = client.post("/v1/news/check-insert", {"documents": docs})
    assert status == 200
    assert [r["status"] for r in body["results"]] == ["new", "duplicate", "new"]
    assert body["results"][1]["matches"] == [{"id": "x1", "distance": 1, "jaccard": None}]


def test_insert_replaces_same_id_and_delete(client):
    assert client.post("/v1/news/insert", doc("a", BASE))[1]["status"] == "inserted"
    far = ~BASE & (2**64 - 1)
    assert client.post("/v1/news/insert", doc("a", far))[1]["status"] == "inserted"
    assert client.post("/v1/news/check", doc("q", BASE))[1]["status"] == "unique"
    assert client.post("/v1/news/check", doc("q", far))[1]["matches"] == [
        {"id": "a", "distance": 0, "jaccard": None}]
    assert client.request("DELETE", "/v1/news/documents/a")[0] == 200
    status, body = client.request("DELETE", "/v1/news/documents/a")
    assert status == 404 and body["error"]["code"] == "not_found"
    assert client.post("/v1/news/check", doc("q", far))[1]["status"] == "unique"


def test_equal_fingerprints_are_duplicates(client):
    client.post("/v1/news/check-insert", doc("a", BASE))
    status, body = client.post("/v1/news/check-insert", doc("b", BASE))
    assert body["status"] == "duplicate"
    assert body["matches"] == [{"id": "a", "distance": 0, "jaccard": None}]


@pytest.mark.parametrize("raw, code", [
    ("{", "invalid_input"),
    ("[]", "invalid_input"),
    ('{"id": "a"}', "invalid_input"),
    ('{"fingerprint": "0123456789abcdef"}', "invalid_input"),
    ('{"id": "a", "fingerprint": "0123"}', "invalid_input"),
    ('{"id": "a", "fingerprint": "0123456789abcdeg"}', "invalid_input"),
    ('{"id": "a", "fingerprint": -12}', "invalid_input"),
    ('{"id": "a", "fingerprint": 1.5}', "invalid_input"),
    ('{"id": "a", "fingerprint": "0123456789abcdef", "time": "soon"}', "invalid_input"),
    ('{"id": "a", "fingerprint": "0123456789abcdef", "text": "both"}', "invalid_input"),
    ('{"documents": {}}', "invalid_input"),
    ('{"documents": [1]}', "invalid_input"),
    ('\xff\xfe', "invalid_input"),
])
def test_malformed_requests_get_400(client, raw, code):
    status, body = client.post("/v1/news/check-insert", raw=raw)
    assert status == 400, body
    assert body["error"]["code"] == code and body["error"]["message"]


def test_unknown_collection_and_endpoint(client):
    status, body = client.post("/v1/nope/check", doc("a", BASE))
    assert status == 404 and body["error"]["code"] == "not_found"
    status, body = client.request("GET", "/v2/whatever")
    assert status == 404 and body["error"]["code"] == "not_found"
    status, body = client.request("PUT", "/v1/bad", raw='{"k": 99}')
    assert status == 400 and "k must be" in body["error"]["message"]
    # The setting as data, for clients that word it themselves.
    assert body["error"]["parameter"] == {"name": "k", "value": "99", "allowed": "0..32"}
    status, body = client.request("PUT", "/v1/bad", raw='{"shingle_width": 0}')
    assert status == 400 and body["error"]["parameter"] == {
        "name": "shingle_width", "value": "0", "allowed": "1..64"}
    # Errors that are about no one setting have none.
    status, body = client.request("GET", "/v2/whatever")
    assert "parameter" not in body["error"]


def test_limits(client):
    docs = [doc(f"d{i}", i) for i in range(51)]
    status, body = client.post("/v1/news/check", {"documents": docs})
    assert status == 413 and body["error"]["code"] == "too_large"
    status, body = client.post("/v1/news/check", raw=json.dumps(doc("a" * 30000, BASE)))
    assert status == 413 and body["error"]["code"] == "too_large"
    # Still serving after all that.
    assert client.post("/v1/news/check", doc("a", BASE))[0] == 200


def test_metrics(client):
    client.post("/v1/news/check-insert", doc("a", BASE))
    client.post("/v1/news/check-insert", doc("b", BASE))
    status, text = client.request("GET", "/metrics")
    assert status == 200
    assert 'simdup_requests_total{endpoint="check-insert",code="200"} 2' in text
    assert 'simdup_documents_total{collection="news",outcome="new"} 1' in text
    assert 'simdup_documents_total{collection="news",outcome="duplicate"} 1' in text
    assert 'simdup_index_documents{collection="news"} 1' in text
    assert 'simdup_request_duration_seconds_count{endpoint="check-insert"} 2' in text
    # The id map's memory is reported beside the index's, in metrics and in stats.
    id_map = [line for line in text.splitlines()
              if line.startswith('simdup_id_map_bytes{collection="news"} ')]
    assert len(id_map) == 1 and int(id_map[0].split()[-1]) > 0
    stats = client.request("GET", "/v1/news/stats")[1]
    assert stats["id_map_bytes"] > 0 and stats["index_bytes"] > 0



def event_loops(server):
    text = server.client().request("GET", "/metrics")[1]
    return [int(line.split()[1]) for line in text.splitlines()
            if line.startswith("simdup_http_event_loops ")]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to leave one out")
def test_default_event_loops_follow_the_cpus_the_server_may_use(tmp_path, server):
    """One loop per CPU of the affinity mask (taskset, a container's cpuset), not per CPU of the
    machine; --threads overrides it."""
    assert event_loops(server) == [len(os.sched_getaffinity(0))]
    cpu = min(os.sched_getaffinity(0))
    pinned = Server(["--data", str(tmp_path / "pinned")],
                    preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    try:
        assert event_loops(pinned) == [1]
    finally:
        pinned.close()
    chosen = Server(["--data", str(tmp_path / "chosen"), "--threads", "3"])
    try:
        assert event_loops(chosen) == [3]
    finally:
        chosen.close()

def test_token(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    s = Server(["--data", str(tmp_path / "db"), "--token-file", str(token_file),
                "--collection", "news"])
    try:
        anon = s.client()
        assert anon.request("GET", "/healthz")[0] == 200
        status, body = anon.post("/v1/news/check", doc("a", BASE))
        assert status == 401 and body["error"]["code"] == "unauthorized"
        wrong = s.client("s3cret-tokeN")
        assert wrong.post("/v1/news/check", doc("a", BASE))[0] == 401
        good = s.client("s3cret-token")
        assert good.post("/v1/news/check", doc("a", BASE))[0] == 200
        # The scheme is case-insensitive, the token is not.
        lower = {"Authorization": "bearer s3cret-token"}
        assert anon.post("/v1/news/check", doc("a", BASE), headers=lower)[0] == 200
        assert good.request("GET", "/metrics")[0] == 200
    finally:
        s.close()


def test_texts_short_for_dedup_are_too_short_for_the_service(client, tmp_path):
    # Shingles of 4 characters: 12 distinct letters make 9 distinct shingles, 13 make 10, dedup's
    # minimum (detection_min_features). Counted by hand, and by `simdup dedup` below.
    nine, ten = "abcdefghijkl", "abcdefghijklm"
    texts = {"nine": nine, "ten": ten, "nine-again": nine, "word": "short",
             "repeats": "abcdabcdabcdabcdabcd", "sentence": "a short sentence here"}
    status, body = client.post("/v1/news/check-insert", {"documents": [
        {"id": i, "text": t} for i, t in texts.items()]})
    assert status == 200, body
    got = {r["id"]: r["status"] for r in body["results"]}
    assert got == {"nine": "too_short", "ten": "new", "nine-again": "too_short",
                   "word": "too_short", "repeats": "too_short", "sentence": "new"}
    # A short document has no fingerprint, is not stored, and never matches: the same short text
    # again is too_short, not a duplicate; so is a check.
    short = next(r for r in body["results"] if r["id"] == "nine")
    assert short == {"id": "nine", "status": "too_short", "matches": []}
    assert client.request("GET", "/v1/news/documents/nine")[0] == 404
    assert client.post("/v1/news/check", {"id": "q", "text": nine})[1]["status"] == "too_short"
    assert client.post("/v1/news/insert", {"id": "i", "text": nine})[1]["status"] == "too_short"
    assert client.request("GET", "/v1/news/stats")[1]["documents"] == 2
    text = client.request("GET", "/metrics")[1]
    assert 'simdup_documents_total{collection="news",outcome="too_short"} 6' in text
    assert 'simdup_documents_total{collection="news",outcome="new"} 2' in text
    # `simdup dedup` counts the same documents as short.
    path = write_jsonl(tmp_path / "texts.jsonl", [{"id": i, "text": t} for i, t in texts.items()])
    # The dedup job runs on Debian's oneTBB, which is not TSan-instrumented (its reports are
    # about TBB's own threads and stacks): the TSan suite checks the service, not this run.
    run(["dedup", path, "--out", tmp_path / "out", "--quiet"], check=0,
        env={"TSAN_OPTIONS": "report_bugs=0"})
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["documents"]["short"] == 4


def test_text_documents_use_the_collection_fingerprint_settings(client):
    text = ("Crawlers and news feeds ask one question per incoming article: have we seen this, "
            "or a lightly edited copy, in the last few days? If not, remember it.")
    status, body = client.post("/v1/news/check-insert", {"id": "t1", "text": text})
    assert status == 200 and body["status"] == "new"
    fp = body["fingerprint"]
    # The same text under another id: the same fingerprint, a duplicate at distance 0, and the
    # same shingles (the collection verifies, by default).
    body = client.post("/v1/news/check-insert", {"id": "t2", "text": text})[1]
    assert body["fingerprint"] == fp and body["matches"] == [{"id": "t1", "distance": 0,
                                                              "jaccard": 1}]
    # Sent as its fingerprint, it is the same document (unverifiable without its text).
    body = client.post("/v1/news/check", {"id": "q", "fingerprint": fp})[1]
    assert body["matches"] == [{"id": "t1", "distance": 0, "jaccard": None}]
    # Too short to fingerprint: never inserted, never a match.
    body = client.post("/v1/news/check-insert", {"documents": [{"id": "e", "text": ""},
                                                               {"id": "f", "text": text}]})[1]
    assert [r["status"] for r in body["results"]] == ["too_short", "duplicate"]
    # Another shingle width gives another fingerprint for the same text.
    assert client.request("PUT", "/v1/wide", {"shingle_width": 8})[0] == 200
    body = client.post("/v1/wide/check-insert", {"id": "t1", "text": text})[1]
    assert body["status"] == "new" and body["fingerprint"] != fp


def test_many_open_keep_alive_clients_are_all_served(server):
    """A fleet keeps many keep-alive connections open at once: 40 of them, on a server with a
    few event loops, all get their answers promptly, round after round."""
    clients = [server.client() for _ in range(40)]
    try:
        for c in clients:
            c.conn.timeout = 3  # far above an answer's time, below the server's idle timeout
        status, body = clients[0].request("PUT", "/v1/fleet", {"k": 3, "window": "0"})
        assert status == 200, body
        for rnd in range(2):
            for i, c in enumerate(clients):
                status, body = c.post("/v1/fleet/check-insert",
                                      doc(f"{rnd}-{i}", BASE ^ (i << 20) ^ (rnd << 40)))
                assert status == 200, body
    finally:
        for c in clients:
            c.close()


def test_document_ids_in_paths_are_percent_decoded(client):
    ident = "https://example.com/a b?x=1"
    assert client.post("/v1/news/check-insert", doc(ident, BASE))[1]["status"] == "new"
    path = "/v1/news/documents/" + urllib.parse.quote(ident, safe="")
    status, body = client.request("DELETE", path)
    assert (status, body) == (200, {"id": ident, "deleted": True})
    assert client.request("GET", "/v1/news/stats")[1]["documents"] == 0
    status, body = client.request("DELETE", "/v1/news/documents/bad%zzescape")
    assert status == 400 and body["error"]["code"] == "invalid_input"


def test_wrong_method_is_405_with_allow(server, client):
    for method, path, allowed in [("GET", "/v1/news/check-insert", "POST"),
                                  ("POST", "/v1/news/stats", "GET"),
                                  ("POST", "/v1/news", "GET, PUT, DELETE"),
                                  ("PUT", "/v1/news/documents/a", "GET, DELETE"),
                                  ("DELETE", "/v1", "GET")]:
        status, body = client.request(method, path)
        assert status == 405 and body["error"]["code"] == "method_not_allowed", (method, path)
        # The header is checked on a raw connection (the client above hides headers).
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                      "Connection: close\r\n\r\n".encode())
            head = s.makefile("rb").read().split(b"\r\n\r\n")[0].decode()
        assert f"\r\nAllow: {allowed}" in head, head


def test_chunked_and_expect_continue_bodies(server, client):
    body = json.dumps(doc("chunky", BASE)).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(b"POST /v1/news/check-insert HTTP/1.1\r\nHost: x\r\n"
                  b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                  b"%x\r\n%s\r\n" % (10, body[:10]) +
                  b"%x\r\n%s\r\n0\r\n\r\n" % (len(body) - 10, body[10:]))
        answer = s.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.1 200 ") and b'"status":"new"' in answer
    # curl sends "Expect: 100-continue" before bodies over 1 KiB and waits for the 100.
    big = json.dumps({"documents": [doc(f"e{i}", BASE + (i << 20)) for i in range(20)]})
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(f"POST /v1/news/check HTTP/1.1\r\nHost: x\r\nContent-Length: {len(big)}\r\n"
                  "Expect: 100-continue\r\nConnection: close\r\n\r\n".encode())
        interim = s.recv(64)
        assert interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        s.sendall(big.encode())
        rest = interim[len(b"HTTP/1.1 100 Continue\r\n\r\n"):] + s.makefile("rb").read()
    assert rest.startswith(b"HTTP/1.1 200 ") and rest.count(b'"status"') == 20
