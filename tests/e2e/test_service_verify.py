"""`simdup serve` verification: k = 4 and Jaccard 0.8 over shingle sketches by default, the
same fingerprint and Jaccard as `simdup dedup`, sketches that survive restarts, and the Redis
store deciding exactly as the RocksDB store does."""

import json
import subprocess

import pytest

from cli_harness import simdup_bin
from service_harness import Redis, Server, check_insert_text, have_redis, hex_distance

# The issue's example: the same news sentence with its case changed, one word added and "!".
# Its fingerprint is 4 bits from the original's: new at the old default k = 3.
ORIGINAL = ("The central bank raised interest rates by half a point on Tuesday, its first "
            "increase in two years.")
EDITED = ("THE CENTRAL BANK RAISED INTEREST RATES OFFICIALLY BY HALF A POINT ON TUESDAY, ITS "
          "FIRST INCREASE IN TWO YEARS!")
# Unrelated to ORIGINAL, yet its fingerprint is 20 bits away (within k = 20).
UNRELATED = "The mayor promised more buses and cheaper tickets to cut traffic in the city centre."


@pytest.fixture
def server(tmp_path):
    s = Server(["--data", str(tmp_path / "db")])  # the defaults: k = 4, verify jaccard:0.8
    yield s
    s.close()


def test_issue_example_is_a_duplicate_at_the_defaults(server):
    c = server.client()
    status, settings = c.request("PUT", "/v1/news", {"window": "0"})
    assert status == 200
    assert settings["k"] == 4 and settings["verify"] == "jaccard:0.8"
    first = check_insert_text(c, "news", "a", ORIGINAL)
    assert first["status"] == "new"
    body = check_insert_text(c, "news", "b", EDITED)
    assert body["status"] == "duplicate", body
    [match] = body["matches"]
    assert match["id"] == "a" and match["distance"] == hex_distance(first["fingerprint"],
                                                                 body["fingerprint"]) == 4
    assert 0.8 <= match["jaccard"] <= 1
    # The old default (k = 3, no verification) misses it: what the issue reported.
    assert c.request("PUT", "/v1/old", {"k": 3, "verify": "off", "window": "0"})[0] == 200
    assert check_insert_text(c, "old", "a", ORIGINAL)["status"] == "new"
    body = check_insert_text(c, "old", "b", EDITED)
    assert body["status"] == "new" and body["matches"] == []


def test_unrelated_texts_within_k_are_not_duplicates(server):
    c = server.client()
    for name, verify in (("checked", "jaccard:0.8"), ("unchecked", "off")):
        status, _ = c.request("PUT", f"/v1/{name}", {"k": 20, "verify": verify, "window": "0"})
        assert status == 200
        assert check_insert_text(c, name, "a", ORIGINAL)["status"] == "new"
    body = check_insert_text(c, "unchecked", "u", UNRELATED)
    assert body["status"] == "duplicate"  # within k: the distance alone calls it one
    assert body["matches"] == [{"id": "a", "distance": 20, "jaccard": None}]
    body = check_insert_text(c, "checked", "u", UNRELATED)
    assert body["status"] == "new" and body["matches"] == []
    # A document sent as a fingerprint cannot be verified: the distance decides, jaccard null.
    fp = check_insert_text(c, "checked", "e", EDITED)["fingerprint"]
    status, body = c.post("/v1/checked/check", {"id": "q", "fingerprint": fp})
    assert body["status"] == "duplicate"
    assert {m["id"] for m in body["matches"]} == {"a", "u"}
    assert all(m["jaccard"] is None for m in body["matches"])


def test_settings_range_and_verify_values(server):
    c = server.client()
    status, body = c.request("PUT", "/v1/wide", {"k": 32, "verify": "jaccard:0.5"})
    assert status == 200 and body["k"] == 32 and body["verify"] == "jaccard:0.5"
    status, body = c.request("PUT", "/v1/bad", {"k": 33})
    assert status == 400 and "k must be in 0..32" in body["error"]["message"]
    for bad in ("jaccard:0", "jaccard:1.5", "on", "jaccard:x"):
        status, body = c.request("PUT", "/v1/bad", {"verify": bad})
        assert status == 400 and "verify" in body["error"]["message"], bad
    status, body = c.request("PUT", "/v1/bad", {"verify": 0.8})
    assert status == 400 and body["error"]["code"] == "invalid_input"
    status, body = c.request("GET", "/v1")
    assert [(x["name"], x["verify"]) for x in body["collections"]] == [("wide", "jaccard:0.5")]


def test_same_fingerprint_and_jaccard_as_dedup(server, tmp_path):
    c = server.client()
    assert c.request("PUT", "/v1/news", {"window": "0"})[0] == 200
    first = check_insert_text(c, "news", "a", ORIGINAL)
    body = check_insert_text(c, "news", "b", EDITED)
    corpus = tmp_path / "pair.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n"
                              for i, t in (("a", ORIGINAL), ("b", EDITED))))
    # dedup verifies as the service does (jaccard:0.8); 512 hashes is a collection's sketch.
    subprocess.run([simdup_bin(), "dedup", str(corpus), "--out", str(tmp_path / "out"), "-q",
                    "--verify-max-hashes", "512"], check=True)
    [dup] = [json.loads(line) for line in (tmp_path / "out" / "duplicates.jsonl").open()]
    assert dup["id"] == "b" and dup["duplicate_of"] == "a" and dup["layer"] == "near"
    assert dup["distance"] == body["matches"][0]["distance"]
    assert dup["jaccard"] == round(body["matches"][0]["jaccard"], 4)
    printed = subprocess.run([simdup_bin(), "fingerprint", str(corpus)], check=True,
                             capture_output=True, text=True).stdout.splitlines()
    assert [json.loads(line)["fingerprint"] for line in printed] == [first["fingerprint"],
                                                                     body["fingerprint"]]


@pytest.mark.parametrize("stop", ["kill9", "terminate"])
def test_sketches_survive_a_restart(tmp_path, stop):
    args = ["--data", str(tmp_path / "db"), "--k", "20", "--window", "0", "--collection", "news"]
    s = Server(args)
    try:
        c = s.client()
        assert check_insert_text(c, "news", "a", ORIGINAL)["status"] == "new"
        jaccard = c.post("/v1/news/check", {"id": "q", "text": EDITED})[1]["matches"][0]["jaccard"]
        getattr(s, stop)()
    finally:
        s.close()
    s = Server(args)
    try:
        c = s.client()
        body = check_insert_text(c, "news", "b", EDITED)
        assert body["status"] == "duplicate"
        assert body["matches"][0]["id"] == "a" and body["matches"][0]["jaccard"] == jaccard
        assert check_insert_text(c, "news", "u", UNRELATED)["status"] == "new"
    finally:
        s.close()


@pytest.mark.skipif(not have_redis(), reason="redis-server is not installed")
def test_redis_store_verifies_as_rocksdb_does(server, tmp_path):
    redis = Redis(tmp_path)
    shared = Server(["--store", redis.url, "--window", "0"])
    try:
        answers = []
        for s in (server, shared):
            c = s.client()
            assert c.request("PUT", "/v1/news", {"k": 20})[0] == 200
            first = check_insert_text(c, "news", "a", ORIGINAL)
            assert first["status"] == "new"
            unrelated = check_insert_text(c, "news", "u", UNRELATED)
            edited = check_insert_text(c, "news", "b", EDITED)
            by_fp = c.post("/v1/news/check", {"id": "q", "fingerprint": first["fingerprint"]})[1]
            answers.append((unrelated, edited, by_fp))
        (rocks_u, rocks_b, rocks_q), (red_u, red_b, red_q) = answers
        assert rocks_u["status"] == red_u["status"] == "new"
        assert rocks_b["status"] == red_b["status"] == "duplicate"
        # The same Jaccard to the last bit: the script's walk is sketch_jaccard's.
        assert rocks_b["matches"] == red_b["matches"]
        assert red_b["matches"][0]["id"] == "a" and red_b["matches"][0]["jaccard"] >= 0.8
        assert rocks_q["matches"] == red_q["matches"]
        assert {m["id"] for m in red_q["matches"]} == {"a", "u"}
        assert all(m["jaccard"] is None for m in red_q["matches"])
        # Deleting a document takes its sketch along.
        c = shared.client()
        assert c.request("DELETE", "/v1/news/documents/a")[0] == 200
        assert check_insert_text(c, "news", "b2", EDITED)["status"] == "new"
    finally:
        shared.close()
        redis.close()


@pytest.mark.skipif(not have_redis(), reason="redis-server is not installed")
def test_redis_sketches_outlive_the_simdup_process(tmp_path):
    redis = Redis(tmp_path)
    args = ["--store", redis.url, "--k", "20", "--window", "0", "--collection", "news"]
    try:
        s = Server(args)
        try:
            assert check_insert_text(s.client(), "news", "a", ORIGINAL)["status"] == "new"
        finally:
            s.kill9()
            s.close()
        s = Server(args)
        try:
            c = s.client()
            body = check_insert_text(c, "news", "b", EDITED)
            assert body["status"] == "duplicate" and body["matches"][0]["jaccard"] >= 0.8
            assert check_insert_text(c, "news", "u", UNRELATED)["status"] == "new"
        finally:
            s.close()
    finally:
        redis.close()
