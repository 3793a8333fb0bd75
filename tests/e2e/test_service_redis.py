"""`simdup serve --store redis://...`: two simdup processes sharing one real redis-server."""

import subprocess
import time

import pytest

from service_harness import (Redis, Server, assert_one_new_per_family, check_insert_concurrently,
                             flip, fp_hex, have_redis, near_duplicate_families)

pytestmark = pytest.mark.skipif(not have_redis(), reason="redis-server is not installed")


@pytest.fixture
def redis(tmp_path):
    r = Redis(tmp_path)
    yield r
    r.close()


def test_two_processes_share_state_atomically(redis):
    a = Server(["--store", redis.url, "--k", "3", "--window", "0", "--collection", "crawl"])
    b = Server(["--store", redis.url, "--k", "3", "--window", "0"])
    try:
        # Half the threads on each process.
        answers = check_insert_concurrently(near_duplicate_families(30, 6, seed=5), 6,
                                            lambda i: a if i % 2 else b)
        assert_one_new_per_family(answers, 30, k=3)
        # Both processes see the same state.
        for server in (a, b):
            assert server.client().request("GET", "/v1/crawl/stats")[1]["documents"] == 30
    finally:
        a.close()
        b.close()


def test_redis_distance_inclusive_delete_and_64bit_values(redis):
    s = Server(["--store", redis.url, "--k", "3", "--window", "0", "--collection", "news"])
    try:
        c = s.client()
        top = 0xFFFFFFFFFFFFFFFF  # not representable as a double: must round-trip exactly
        assert c.post("/v1/news/check-insert", {"id": "a", "fingerprint": fp_hex(top)})[1][
            "status"] == "new"
        body = c.post("/v1/news/check-insert",
                      {"id": "b", "fingerprint": fp_hex(flip(top, [0, 31, 63]))})[1]
        assert body["status"] == "duplicate"
        assert body["matches"] == [{"id": "a", "distance": 3, "jaccard": None}]
        body = c.post("/v1/news/check-insert",
                      {"id": "c", "fingerprint": fp_hex(flip(top, [0, 1, 2, 3]))})[1]
        assert body["status"] == "new"
        body = c.post("/v1/news/check", {"id": "q", "fingerprint": fp_hex(top - 1)})[1]
        assert body["matches"] == [{"id": "a", "distance": 1, "jaccard": None},
                                   {"id": "c", "distance": 3, "jaccard": None}]
        assert c.request("DELETE", "/v1/news/documents/a")[0] == 200
        assert c.request("DELETE", "/v1/news/documents/a")[0] == 404
        body = c.post("/v1/news/check", {"id": "q", "fingerprint": fp_hex(top)})[1]
        assert body["status"] == "unique"  # c is 4 bits away: beyond k
        stats = c.request("GET", "/v1/news/stats")[1]
        assert stats["documents"] == 1 and stats["deleted"] == 1
    finally:
        s.close()


def test_redis_window_expiry(redis, tmp_path):
    clock = tmp_path / "clock"
    t0 = 1_700_000_000
    clock.write_text(str(t0))
    s = Server(["--store", redis.url, "--clock-file", str(clock), "--expire-interval-ms", "50"])
    try:
        c = s.client()
        assert c.request("PUT", "/v1/feed", {"window_s": 100})[0] == 200
        assert c.post("/v1/feed/insert", {"id": "old", "fingerprint": fp_hex(42)})[0] == 200
        body = c.post("/v1/feed/check", {"id": "q", "fingerprint": fp_hex(42),
                                         "time": t0 + 99})[1]
        assert body["matches"] == [{"id": "old", "distance": 0, "jaccard": None}]
        body = c.post("/v1/feed/check", {"id": "q", "fingerprint": fp_hex(42),
                                         "time": t0 + 100})[1]
        assert body["status"] == "unique"
        clock.write_text(str(t0 + 150))
        deadline = time.time() + 20
        while time.time() < deadline:
            stats = c.request("GET", "/v1/feed/stats")[1]
            if stats["expired"] == 1:
                break
            time.sleep(0.05)
        assert stats["expired"] == 1 and stats["documents"] == 0
    finally:
        s.close()


def test_list_get_document_and_delete_collection(redis):
    a = Server(["--store", redis.url, "--window", "0"])
    b = Server(["--store", redis.url, "--window", "0"])
    try:
        ca, cb = a.client(), b.client()
        assert ca.request("PUT", "/v1/news", {"k": 3})[0] == 200
        assert ca.request("PUT", "/v1/other", {"k": 2})[0] == 200
        big = 0xFEDCBA9876543210
        assert ca.post("/v1/news/insert", {"id": "x", "fingerprint": big, "time": 1234})[0] == 200
        # The other process sees both collections and the document.
        assert [c["name"] for c in cb.request("GET", "/v1")[1]["collections"]] == ["news", "other"]
        assert cb.request("GET", "/v1/news/documents/x?fingerprint_format=int") == (
            200, {"id": "x", "fingerprint": big, "time": 1234, "expires": None})
        assert cb.request("GET", "/v1/news/documents/y")[0] == 404
        # Deleted through one process: gone for both, with its keys.
        assert cb.request("DELETE", "/v1/news") == (200, {"name": "news", "deleted": True})
        assert [c["name"] for c in ca.request("GET", "/v1")[1]["collections"]] == ["other"]
        assert ca.request("DELETE", "/v1/news")[0] == 404
        keys = subprocess.run(["redis-cli", "-p", str(redis.port), "--scan", "--pattern",
                               "simdup:{news}:*"], stdout=subprocess.PIPE, check=True).stdout
        assert keys.strip() == b""
        # Created again: empty.
        assert ca.request("PUT", "/v1/news", {"k": 3})[0] == 200
        assert cb.request("GET", "/v1/news/stats")[1]["documents"] == 0
        ca.close()
        cb.close()
    finally:
        a.close()
        b.close()
