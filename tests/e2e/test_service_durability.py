"""`simdup serve` (RocksDB store) under concurrency, kill -9, SIGTERM and the time window."""

import random
import time

from service_harness import (Server, WriteLoad, assert_all_stored, assert_one_new_per_family,
                             check_insert_concurrently, fp_hex, near_duplicate_families)


def test_concurrent_check_insert_never_answers_two_near_duplicates_new(tmp_path):
    s = Server(["--data", str(tmp_path / "db"), "--k", "3", "--window", "0",
                "--collection", "crawl"])
    try:
        answers = check_insert_concurrently(near_duplicate_families(40, 8, seed=7), 8,
                                            lambda i: s)
        assert_one_new_per_family(answers, 40, k=3)
        stats = s.client().request("GET", "/v1/crawl/stats")[1]
        assert stats["documents"] == 40
    finally:
        s.close()


def test_kill9_loses_nothing_acknowledged(tmp_path):
    data = str(tmp_path / "db")
    s = Server(["--data", data, "--window", "0", "--collection", "crawl"])
    load = WriteLoad(s, "w", writers=6, batch=None)
    deadline = time.time() + 30
    while load.acknowledged() < 300 and time.time() < deadline:
        time.sleep(0.05)
    s.kill9()
    load.stop()
    acked = load.acked
    assert len(acked) >= 300

    s = Server(["--data", data])
    try:
        assert_all_stored(s.client(), acked)
    finally:
        s.close()


def test_sigterm_closes_cleanly_and_restart_keeps_everything(tmp_path):
    data = str(tmp_path / "db")
    s = Server(["--data", data, "--collection", "news"])
    client = s.client()
    for i in range(20):
        assert client.post("/v1/news/insert", {"id": f"d{i}", "fingerprint": fp_hex(i << 40),
                                               "time": int(time.time())})[0] == 200
    client.close()
    assert s.terminate() == 0
    s.close()
    s = Server(["--data", data])
    try:
        stats = s.client().request("GET", "/v1/news/stats")[1]
        assert stats["documents"] == 20
        assert stats["collection"]["window_s"] == 7 * 86400
    finally:
        s.close()


def test_window_expiry_with_injected_clock(tmp_path):
    clock = tmp_path / "clock"
    t0 = 1_700_000_000
    clock.write_text(str(t0))
    s = Server(["--data", str(tmp_path / "db"), "--clock-file", str(clock),
                "--expire-interval-ms", "50"])
    try:
        client = s.client()
        assert client.request("PUT", "/v1/feed", {"k": 3, "window_s": 100})[0] == 200
        old, recent = 0x00FF00FF00FF00FF, 0x7777000077770000
        assert client.post("/v1/feed/insert", {"id": "old", "fingerprint": fp_hex(old)})[0] == 200
        assert client.post("/v1/feed/insert", {"id": "recent", "fingerprint": fp_hex(recent),
                                               "time": t0 + 60})[0] == 200
        # A document's own time decides what is in its window: live while time + window > now.
        body = client.post("/v1/feed/check", {"id": "q", "fingerprint": fp_hex(old),
                                              "time": t0 + 100})[1]
        assert body["status"] == "unique"
        body = client.post("/v1/feed/check", {"id": "q", "fingerprint": fp_hex(old),
                                              "time": t0 + 99})[1]
        assert body["matches"] == [{"id": "old", "distance": 0, "jaccard": None}]

        clock.write_text(str(t0 + 150))
        deadline = time.time() + 20
        while time.time() < deadline:
            stats = client.request("GET", "/v1/feed/stats")[1]
            if stats["expired"] == 1:
                break
            time.sleep(0.05)
        assert stats["expired"] == 1 and stats["documents"] == 1
        assert 'simdup_expired_documents_total{collection="feed"} 1' in client.request(
            "GET", "/metrics")[1]
        body = client.post("/v1/feed/check-insert", {"id": "again", "fingerprint": fp_hex(old)})[1]
        assert body["status"] == "new"
        body = client.post("/v1/feed/check", {"id": "q", "fingerprint": fp_hex(recent)})[1]
        assert body["matches"] == [{"id": "recent", "distance": 0, "jaccard": None}]
    finally:
        s.close()


def test_kill9_with_segment_files_replays_only_what_came_after(tmp_path):
    """A restart loads the saved index (segment file) and replays the newer writes: every
    acknowledged id is there, deleted and expired documents stay gone."""
    data = tmp_path / "db"
    clock = tmp_path / "clock"
    t0 = 1_700_000_000
    clock.write_text(str(t0 + 500))
    args = ["--data", str(data), "--clock-file", str(clock), "--expire-interval-ms", "50",
            "--snapshot-docs", "100"]
    s = Server(args)
    client = s.client()
    assert client.request("PUT", "/v1/crawl", {"k": 3, "window_s": 1000})[0] == 200
    rng = random.Random(5)
    old = {f"old{i}": rng.getrandbits(64) for i in range(50)}
    kept = {f"a{i}": rng.getrandbits(64) for i in range(300)}
    body = {"documents": [{"id": k, "fingerprint": fp_hex(v), "time": t0}
                          for k, v in old.items()]}
    assert client.post("/v1/crawl/insert", body)[0] == 200
    body = {"documents": [{"id": k, "fingerprint": fp_hex(v)} for k, v in kept.items()]}
    assert client.post("/v1/crawl/insert", body)[0] == 200
    segments = data / "segments"
    deadline = time.time() + 20
    while not (segments.exists() and any(segments.iterdir())) and time.time() < deadline:
        time.sleep(0.05)
    assert any(segments.iterdir())
    # After the file: deletions, expiry of the old documents, and a concurrent write load.
    deleted = [f"a{i}" for i in range(0, 300, 7)]
    for doc_id in deleted:
        assert client.request("DELETE", f"/v1/crawl/documents/{doc_id}")[0] == 200
        del kept[doc_id]
    clock.write_text(str(t0 + 1000))
    while client.request("GET", "/v1/crawl/stats")[1]["expired"] < 50 and time.time() < deadline:
        time.sleep(0.05)
    assert client.request("GET", "/v1/crawl/stats")[1]["expired"] == 50
    client.close()
    load = WriteLoad(s, "w", writers=4, batch=10)
    while load.acknowledged() < 500 and time.time() < deadline:
        time.sleep(0.05)
    s.kill9()
    load.stop()
    s.close()
    acked = load.acked
    assert len(acked) >= 500

    s = Server(args)
    try:
        client = s.client()
        expected = {**kept, **acked}
        assert_all_stored(client, expected)
        # Deleted ids and expired ones (even for a query whose own time admits them) stay gone.
        probes = [{"id": "probe", "fingerprint": fp_hex(v), "time": t0 + 999}
                  for v in old.values()]
        body = client.post("/v1/crawl/check", {"documents": probes})[1]
        assert all(r["status"] == "unique" for r in body["results"]), body
        for doc_id in deleted:
            status, _ = client.request("DELETE", f"/v1/crawl/documents/{doc_id}")
            assert status == 404, doc_id
        # Batches in flight at the kill may be written without their answer: at most 4 x 10.
        stats = client.request("GET", "/v1/crawl/stats")[1]
        assert len(expected) <= stats["documents"] <= len(expected) + 40
        assert s.terminate() == 0
        assert "rebuilding" not in s.proc.stderr.read()  # the segment file was used
    finally:
        s.close()
