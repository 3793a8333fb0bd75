"""`simdup serve`: an insert or check-insert whose time is already out of the collection's window
is answered "expired" and not stored (a lookup of it would be a 404 at once), with the RocksDB
and the Redis store alike (issue 36, item 5)."""

import re

import pytest

from service_harness import Redis, Server, fp_hex, have_redis

T0 = 1_700_000_000
WINDOW = 100
TEXT = "The central bank raised interest rates by half a point on Tuesday, its first in years."


@pytest.fixture(params=["rocksdb", "redis"])
def server(request, tmp_path):
    clock = tmp_path / "clock"
    clock.write_text(str(T0))
    if request.param == "redis":
        if not have_redis():
            pytest.skip("redis-server is not installed")
        redis = Redis(tmp_path)
        request.addfinalizer(redis.close)
        store = ["--store", redis.url]
    else:
        store = ["--data", str(tmp_path / "db")]
    s = Server([*store, "--clock-file", str(clock)])
    c = s.client()
    assert c.request("PUT", "/v1/feed", {"k": 3, "window_s": WINDOW})[0] == 200
    assert c.request("PUT", "/v1/forever", {"k": 3, "window_s": 0})[0] == 200
    yield c
    c.close()
    s.close()


def doc(i, value, time=None):
    d = {"id": i, "fingerprint": fp_hex(value)}
    if time is not None:
        d["time"] = time
    return d


def expired_answer(i, value):
    return {"id": i, "status": "expired", "fingerprint": fp_hex(value), "matches": []}


def documents_metric(client, outcome):
    text = client.request("GET", "/metrics")[1]
    m = re.search(r'^simdup_documents_total\{collection="feed",outcome="%s"\} (\d+)$' % outcome,
                  text, re.M)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("endpoint", ["insert", "check-insert"])
def test_insert_out_of_the_window_is_expired_and_not_stored(server, endpoint):
    c = server
    # time + window == now: already out (a document is live while time + window > now).
    status, body = c.post(f"/v1/feed/{endpoint}", doc("old", 1, T0 - WINDOW))
    assert (status, body) == (200, expired_answer("old", 1))
    assert c.request("GET", "/v1/feed/documents/old")[0] == 404
    # One second later it is live: stored, and found until it leaves the window.
    status, body = c.post(f"/v1/feed/{endpoint}", doc("young", 2, T0 - WINDOW + 1))
    assert body["status"] == ("inserted" if endpoint == "insert" else "new")
    status, body = c.request("GET", "/v1/feed/documents/young")
    assert status == 200 and body["expires"] == T0 + 1
    stats = c.request("GET", "/v1/feed/stats")[1]
    assert (stats["documents"], stats["inserted"], stats["expired"]) == (1, 1, 0)
    assert documents_metric(c, "expired") == 1
    # A window of 0 keeps every time.
    status, body = c.post(f"/v1/forever/{endpoint}", doc("old", 1, 1))
    assert body["status"] in ("inserted", "new")
    assert c.request("GET", "/v1/forever/documents/old")[0] == 200


def test_expired_check_insert_is_not_compared_and_not_seen_by_the_batch(server):
    c = server
    assert c.post("/v1/feed/insert", doc("live", 10))[1]["status"] == "inserted"
    # An old copy of a live document: expired, not a duplicate, and not stored.
    status, body = c.post("/v1/feed/check-insert", doc("old-copy", 10, T0 - 500))
    assert body == expired_answer("old-copy", 10)
    # In a batch, the documents after an expired one do not see it.
    batch = [doc("e1", 20, T0 - WINDOW), doc("n1", 20), doc("n2", 20, T0 - WINDOW + 1)]
    status, body = c.post("/v1/feed/check-insert?fingerprint_format=int", {"documents": batch})
    assert status == 200
    results = body["results"]
    assert [r["status"] for r in results] == ["expired", "new", "duplicate"]
    assert results[0] == {"id": "e1", "status": "expired", "fingerprint": 20, "matches": []}
    assert results[2]["matches"] == [{"id": "n1", "distance": 0, "jaccard": None}]
    for gone in ("old-copy", "e1"):
        assert c.request("GET", f"/v1/feed/documents/{gone}")[0] == 404
    assert c.request("GET", "/v1/feed/stats")[1]["documents"] == 2  # live and n1
    assert documents_metric(c, "expired") == 2
    # check stores nothing, so an old time is still answered by its matches.
    body = c.post("/v1/feed/check", doc("q", 20, T0 - 500))[1]
    assert body["status"] in ("unique", "duplicate")


def test_expired_insert_keeps_the_stored_document_and_texts_get_their_fingerprint(server):
    c = server
    assert c.post("/v1/feed/insert", doc("a", 30, T0))[1]["status"] == "inserted"
    # Replacing it with a version already out of the window stores nothing: a stays as it was.
    assert c.post("/v1/feed/insert", doc("a", 31, T0 - 1000))[1] == expired_answer("a", 31)
    status, body = c.request("GET", "/v1/feed/documents/a")
    assert status == 200 and (body["fingerprint"], body["time"]) == (fp_hex(30), T0)
    # A text out of the window is answered with the fingerprint it would have been stored with.
    fresh = c.post("/v1/feed/check", {"id": "t", "text": TEXT})[1]
    status, body = c.post("/v1/feed/check-insert", {"id": "t", "text": TEXT, "time": 5})
    assert body == {"id": "t", "status": "expired", "fingerprint": fresh["fingerprint"],
                    "matches": []}
    assert c.request("GET", "/v1/feed/documents/t")[0] == 404
