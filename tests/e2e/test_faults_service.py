"""Faults of `simdup serve`, rehearsed: a damaged segment file at start, kill -9 while the index
merges its segments under load, and Redis going away (restarted, unreachable) mid-load."""

import random
import time

import pytest

from service_harness import (assert_all_stored, Redis, Server, WriteLoad, fp_hex, have_redis,
                             spread_fingerprints)


def answers(client, probes):
    """The check answers (status and matches) for `probes`, a list of fingerprints."""
    status, body = client.post("/v1/crawl/check", {"documents": [
        {"id": f"p{i}", "fingerprint": fp_hex(v)} for i, v in enumerate(probes)]})
    assert status == 200, body
    return [(r["status"], sorted((m["id"], m["distance"]) for m in r["matches"]))
            for r in body["results"]]


# --- a damaged segment file at start ----------------------------------------------------------

def truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def flip_a_byte(path):
    # Same size, so only the checksum can tell.
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x5A
    path.write_bytes(bytes(data))


def empty(path):
    path.write_bytes(b"")


def remove(path):
    path.unlink()


@pytest.mark.parametrize("damage", [truncate, flip_a_byte, empty, remove])
def test_damaged_segment_file_at_start_rebuilds_from_the_store(tmp_path, damage):
    data = tmp_path / "db"
    args = ["--data", str(data), "--k", "3", "--window", "0", "--collection", "crawl"]
    s = Server(args)
    rng = random.Random(3)
    # Clusters: a centre and variants within 3 bits, so the answers have several matches each.
    centres = spread_fingerprints(200, 8, seed=4)
    docs = {}
    for c, centre in enumerate(centres):
        for v in range(3):
            value = centre
            for b in rng.sample(range(64), v):
                value ^= 1 << b
            docs[f"c{c}v{v}"] = value
    try:
        client = s.client()
        items = list(docs.items())
        for start in range(0, len(items), 100):
            status, body = client.post("/v1/crawl/insert", {"documents": [
                {"id": k, "fingerprint": fp_hex(v)} for k, v in items[start:start + 100]]})
            assert status == 200, body
        for doc_id in ("c0v0", "c1v1", "c2v2"):
            assert client.request("DELETE", f"/v1/crawl/documents/{doc_id}")[0] == 200
            del docs[doc_id]
        probes = [c ^ (1 << 63) for c in centres] + list(docs.values())
        reference = answers(client, probes)
        assert s.terminate() == 0  # saves the segment file
    finally:
        s.close()
    files = list((data / "segments").iterdir())
    assert len(files) == 1
    damage(files[0])

    s = Server(args)
    try:
        client = s.client()
        assert answers(client, probes) == reference
        assert client.request("GET", "/v1/crawl/stats")[1]["documents"] == len(docs)
        # New writes go on from the right numbers: nothing old comes back under a new one.
        status, body = client.post("/v1/crawl/check-insert", {"id": "new",
                                                              "fingerprint": fp_hex(centres[0])})
        assert status == 200 and body["status"] == "duplicate"
        assert {m["id"] for m in body["matches"]} == {"c0v1", "c0v2"}
        assert s.terminate() == 0
        stderr = s.proc.stderr.read()
        assert "rebuilding its index from the store" in stderr and str(files[0]) in stderr, stderr
    finally:
        s.close()
    # The rebuilt index was saved again at exit: the next start uses it.
    s = Server(args)
    try:
        assert answers(s.client(), probes) == reference
        assert s.terminate() == 0
        assert "rebuilding" not in s.proc.stderr.read()
    finally:
        s.close()


# --- kill -9 while segments merge -------------------------------------------------------------

def test_kill9_while_index_segments_merge_under_load(tmp_path):
    """Bulk writers fill the index's mutable segment again and again: it is sealed and merged
    (on the maintenance thread) every few thousand documents, so a kill under this load lands
    in or next to a merge. Everything acknowledged is there after the restart."""
    data = tmp_path / "db"
    s = Server(["--data", str(data), "--window", "0", "--collection", "crawl"])
    load = WriteLoad(s, "w", writers=4, batch=500)
    # Kill once the segment count changed several times (seals and merges happened) and the
    # index holds more than one sealed segment's worth.
    probe = s.client()
    seen, deadline = set(), time.time() + 120
    while time.time() < deadline and (len(seen) < 4 or load.acknowledged() < 40000):
        seen.add(probe.request("GET", "/v1/crawl/stats")[1]["index_segments"])
        time.sleep(0.01)
    s.kill9()
    load.stop()
    s.close()
    acked = load.acked
    assert len(seen) >= 4 and len(acked) >= 40000, (seen, len(acked))

    s = Server(["--data", str(data)])
    try:
        client = s.client()
        assert_all_stored(client, acked)
        # Batches in flight at the kill may be stored without their answer: at most 4 x 500.
        stats = client.request("GET", "/v1/crawl/stats")[1]
        assert len(acked) <= stats["documents"] <= len(acked) + 2000
    finally:
        s.close()


# --- Redis away -------------------------------------------------------------------------------

redis_only = pytest.mark.skipif(not have_redis(), reason="redis-server is not installed")


def wait_until(condition, timeout=60):
    deadline = time.time() + timeout
    while not condition() and time.time() < deadline:
        time.sleep(0.01)
    assert condition()


@redis_only
@pytest.mark.parametrize("how", ["restart", "kill9"])
def test_redis_restarted_mid_load_loses_nothing_acknowledged(tmp_path, how):
    redis = Redis(tmp_path, aof=True)
    s = Server(["--store", redis.url, "--window", "0", "--collection", "crawl"])
    load = WriteLoad(s, "a")
    try:
        wait_until(lambda: load.acknowledged() >= 2000)
        if how == "restart":
            redis.close()
        else:
            redis.kill9()
        # While it is away: clear 503s, nothing acknowledged.
        wait_until(lambda: len(load.failures) >= 8)
        acked_while_down = load.acknowledged()
        status, body = s.client().post("/v1/crawl/check", {"id": "x", "fingerprint": fp_hex(7)})
        assert status == 503 and "Redis" in body["error"]["message"], body
        assert load.acknowledged() == acked_while_down
        redis = Redis(tmp_path, port=redis.port, aof=True)
        # Back: writes are acknowledged again.
        wait_until(lambda: load.acknowledged() >= acked_while_down + 2000)
        load.stop()
        assert load.broken == 0
        assert {status for status, _ in load.failures} == {503}, load.failures[:3]
        assert all("Redis" in body["error"]["message"] for _, body in load.failures)
        assert_all_stored(s.client(), load.acked)
    finally:
        load.stop()
        s.close()
        redis.close()


@redis_only
def test_redis_unreachable_at_start_and_mid_load(tmp_path):
    redis = Redis(tmp_path, aof=True)
    port = redis.port
    redis.close()
    # Not there at start: a clear refusal.
    with pytest.raises(RuntimeError, match=f"cannot connect to Redis at 127.0.0.1:{port}"):
        Server(["--store", f"redis://127.0.0.1:{port}", "--window", "0"])
    redis = Redis(tmp_path, port=port, aof=True)
    s = Server(["--store", redis.url, "--window", "0", "--collection", "crawl"])
    load = WriteLoad(s, "b", writers=2)
    try:
        wait_until(lambda: load.acknowledged() >= 1000)
        redis.close()
        wait_until(lambda: len(load.failures) >= 20)
        load.stop()
        assert load.broken == 0
        assert {status for status, _ in load.failures} == {503}
        status, body = s.client().request("GET", "/v1/crawl/stats")
        assert status == 503 and f"127.0.0.1:{port}" in body["error"]["message"], body
        # A new Redis process on the same data: everything acknowledged is there.
        redis = Redis(tmp_path, port=port, aof=True)
        assert_all_stored(s.client(), load.acked)
    finally:
        load.stop()
        s.close()
        redis.close()
