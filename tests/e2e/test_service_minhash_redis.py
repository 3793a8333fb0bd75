"""MinHash bands on the Redis store (`simdup serve --store redis://...`): a lightly edited copy
whose fingerprint is beyond k is found through a shared band and verified, as the RocksDB store
finds it; the band sets follow their documents (delete, replace, expiry, drop); a batch sees its
earlier documents; a band bucket is read 64 ids at most; the settings show sketch and minhash."""

import json
import subprocess
import time

import pytest

from service_harness import Redis, Server, check_insert_text, have_redis, hex_distance

pytestmark = pytest.mark.skipif(not have_redis(), reason="redis-server is not installed")

# 596 characters of news. EDITED replaces three words and adds a source: its fingerprint is 7
# bits from TEXT's (beyond k = 3), its shingle Jaccard about 0.88.
TEXT = ("The city council voted on Monday evening to expand the public library on Harbor Street, "
        "adding a second floor with study rooms, a children's reading area and a small makerspace "
        "with 3D printers. The project is expected to cost about 4.2 million dollars, most of it "
        "covered by a state grant awarded last spring. Construction should begin in March and "
        "last roughly eighteen months, during which the library will move to a temporary site in "
        "the old post office building. Council members said the expansion answers years of "
        "complaints about crowded tables and long waiting lists for the computer lab.")
EDITED = (TEXT.replace("voted on Monday evening", "agreed on Tuesday").replace("long", "lengthy")
          + " (via AP)")
UNRELATED = ("Heavy rain flooded several roads in the northern districts overnight, and the "
             "weather service warned that more storms could arrive before the weekend. Schools in "
             "two towns opened late while crews cleared fallen branches from the main bridge.")


@pytest.fixture
def redis(tmp_path):
    r = Redis(tmp_path)
    yield r
    r.close()


def check(client, collection, text, **extra):
    status, body = client.post(f"/v1/{collection}/check", {"id": "q", "text": text, **extra})
    assert status == 200, body
    return body


def insert(client, collection, doc_id, text, **extra):
    status, body = client.post(f"/v1/{collection}/insert", {"id": doc_id, "text": text, **extra})
    assert status == 200, body


def cli(redis, *args):
    return subprocess.run(["redis-cli", "-p", str(redis.port), *args], stdout=subprocess.PIPE,
                          check=True, text=True).stdout.splitlines()


def band_sets(redis, collection):
    """{band set key: its ids} of a collection, as Redis holds them."""
    keys = cli(redis, "--scan", "--pattern", f"simdup:{{{collection}}}:m*")
    return {key: set(cli(redis, "ZRANGE", key, "0", "-1")) for key in keys}


def stored_band_sets(redis, collection, doc_id):
    """The band set keys that the document's stored band keys name."""
    [keys] = cli(redis, "HGET", f"simdup:{{{collection}}}:bands", doc_id)
    assert len(keys) == 10 * 16
    return {f"simdup:{{{collection}}}:m{b}:{keys[16 * b:16 * b + 16]}" for b in range(10)}


def test_bands_find_an_edited_copy_beyond_k_as_rocksdb_does(redis, tmp_path):
    rocks = Server(["--data", str(tmp_path / "db"), "--window", "0"])
    shared = Server(["--store", redis.url, "--window", "0"])
    try:
        answers = []
        for server in (rocks, shared):
            c = server.client()
            assert c.request("PUT", "/v1/on", {"k": 3, "minhash": "10x6"})[0] == 200
            assert c.request("PUT", "/v1/off", {"k": 3, "minhash": "off"})[0] == 200
            first = check_insert_text(c, "on", "a", TEXT)
            assert first["status"] == "new"
            body = check_insert_text(c, "on", "b", EDITED)
            assert body["status"] == "duplicate", body
            [match] = body["matches"]
            # Found by a band alone: its real distance, beyond k, and verified.
            assert match["id"] == "a"
            assert match["distance"] == hex_distance(first["fingerprint"], body["fingerprint"]) > 3
            assert 0.8 <= match["jaccard"] < 1
            # Without bands the same copy is beyond k: new.
            assert check_insert_text(c, "off", "a", TEXT)["status"] == "new"
            body_off = check_insert_text(c, "off", "b", EDITED)
            assert body_off["status"] == "new" and body_off["matches"] == []
            unrelated = check_insert_text(c, "on", "u", UNRELATED)
            assert unrelated["status"] == "new" and unrelated["matches"] == []
            answers.append(body)
        # The same distance and Jaccard (to the last bit) from both stores.
        assert answers[0] == answers[1]
    finally:
        rocks.close()
        shared.close()
    # What Redis holds: the band keys of the two inserted documents (the duplicate was not
    # inserted), each of their band sets holding its document; none for the collection without
    # bands.
    sets = band_sets(redis, "on")
    assert set(sets) == stored_band_sets(redis, "on", "a") | stored_band_sets(redis, "on", "u")
    for doc in ("a", "u"):
        assert all(doc in sets[key] for key in stored_band_sets(redis, "on", doc))
    assert cli(redis, "HEXISTS", "simdup:{on}:bands", "b") == ["0"]
    assert band_sets(redis, "off") == {}
    assert cli(redis, "EXISTS", "simdup:{off}:bands") == ["0"]


def test_a_batch_sees_its_earlier_documents_through_bands(redis):
    s = Server(["--store", redis.url, "--window", "0", "--k", "3"])
    try:
        c = s.client()
        assert c.request("PUT", "/v1/news", {})[0] == 200
        docs = [{"id": "a", "text": TEXT}, {"id": "b", "text": EDITED}]
        # A check inserts nothing: both unique.
        status, body = c.post("/v1/news/check", {"documents": docs})
        assert status == 200 and [r["status"] for r in body["results"]] == ["unique", "unique"]
        status, body = c.post("/v1/news/check-insert", {"documents": docs})
        assert status == 200, body
        first, second = body["results"]
        assert first["status"] == "new" and second["status"] == "duplicate", body
        [match] = second["matches"]
        assert match["id"] == "a" and match["distance"] > 3 and match["jaccard"] >= 0.8
    finally:
        s.close()


def test_delete_replace_expiry_and_drop_clean_the_band_sets(redis, tmp_path):
    clock = tmp_path / "clock"
    t0 = 1_700_000_000
    clock.write_text(str(t0))
    s = Server(["--store", redis.url, "--k", "3", "--clock-file", str(clock),
                "--expire-interval-ms", "50"])
    try:
        c = s.client()
        assert c.request("PUT", "/v1/news", {"window": "0"})[0] == 200
        insert(c, "news", "a", TEXT)
        assert [m["id"] for m in check(c, "news", EDITED)["matches"]] == ["a"]
        text_sets = stored_band_sets(redis, "news", "a")
        assert band_sets(redis, "news") == {key: {"a"} for key in text_sets}

        # Deleted: the copy is new again, and the band sets went with the document.
        assert c.request("DELETE", "/v1/news/documents/a")[0] == 200
        body = check(c, "news", EDITED)
        assert body["status"] == "unique" and body["matches"] == []
        assert band_sets(redis, "news") == {}
        assert cli(redis, "EXISTS", "simdup:{news}:bands") == ["0"]

        # Replaced under the same id by another text: only the new text's band keys remain.
        insert(c, "news", "a", TEXT)
        insert(c, "news", "a", UNRELATED)
        body = check(c, "news", EDITED)
        assert body["status"] == "unique" and body["matches"] == []
        unrelated_sets = stored_band_sets(redis, "news", "a")
        assert not unrelated_sets & text_sets
        assert band_sets(redis, "news") == {key: {"a"} for key in unrelated_sets}
        # ... and replaced back: found again.
        insert(c, "news", "a", TEXT)
        assert [m["id"] for m in check(c, "news", EDITED)["matches"]] == ["a"]
        assert band_sets(redis, "news") == {key: {"a"} for key in text_sets}

        # The window applies to what a band finds, before the expiry removes it.
        assert c.request("PUT", "/v1/feed", {"window_s": 100})[0] == 200
        insert(c, "feed", "old", TEXT, time=t0)
        body = check(c, "feed", EDITED, time=t0 + 99)
        assert [m["id"] for m in body["matches"]] == ["old"] and body["matches"][0]["distance"] > 3
        body = check(c, "feed", EDITED, time=t0 + 100)
        assert body["status"] == "unique" and body["matches"] == []
        assert len(band_sets(redis, "feed")) == 10
        # Expired: its band sets go too.
        clock.write_text(str(t0 + 150))
        deadline = time.time() + 20
        while time.time() < deadline:
            stats = c.request("GET", "/v1/feed/stats")[1]
            if stats["expired"] == 1:
                break
            time.sleep(0.05)
        assert stats["expired"] == 1 and stats["documents"] == 0
        assert band_sets(redis, "feed") == {}
        assert cli(redis, "EXISTS", "simdup:{feed}:bands") == ["0"]

        # Dropped: no key of the collection is left.
        assert c.request("DELETE", "/v1/news")[0] == 200
        assert cli(redis, "--scan", "--pattern", "simdup:{news}:*") == []
    finally:
        s.close()


def test_a_band_bucket_is_read_64_ids_at_most_the_oldest(redis):
    s = Server(["--store", redis.url, "--k", "3", "--window", "0", "--max-matches", "1000"])
    try:
        c = s.client()
        assert c.request("PUT", "/v1/news", {})[0] == 200
        # 100 copies sharing every band key, inserted newest first: the oldest by time are the
        # highest ids.
        copies = [{"id": f"c{i:03}", "text": TEXT, "time": 1_800_000_000 - i} for i in range(100)]
        status, body = c.post("/v1/news/insert", {"documents": copies})
        assert status == 200, body
        assert all(len(members) == 100 for members in band_sets(redis, "news").values())
        body = check(c, "news", EDITED)
        # Every copy is beyond k: what the bands found is all there is, 64 of each bucket.
        assert {m["id"] for m in body["matches"]} == {f"c{i:03}" for i in range(36, 100)}
        assert all(m["distance"] > 3 and m["jaccard"] >= 0.8 for m in body["matches"])
        # Listed closest first, then by id.
        assert [m["id"] for m in body["matches"]] == sorted(m["id"] for m in body["matches"])
        # The same text is within k of every copy: SimHash lists them all.
        assert len(check(c, "news", TEXT)["matches"]) == 100
    finally:
        s.close()


def test_settings_show_sketch_and_minhash(redis):
    # Settings stored before sketch and minhash existed: 128 hashes, no bands.
    legacy = {"name": "legacy", "k": 3, "window_s": 0, "compat": "none", "shingle_width": 4,
              "features": "shingles", "top_k": 0, "verify": "jaccard:0.8"}
    cli(redis, "HSET", "simdup:collections", "legacy", json.dumps(legacy))
    s = Server(["--store", redis.url, "--window", "0"])
    try:
        c = s.client()
        status, settings = c.request("PUT", "/v1/news", {"k": 3, "minhash": "10x6"})
        assert status == 200 and settings["sketch"] == 512 and settings["minhash"] == "10x6"
        status, settings = c.request("PUT", "/v1/small", {"sketch": 256, "minhash": "off"})
        assert status == 200 and settings["sketch"] == 256 and settings["minhash"] == "off"
        for name, sketch, minhash in (("news", 512, "10x6"), ("small", 256, "off"),
                                      ("legacy", 128, "off")):
            status, stats = c.request("GET", f"/v1/{name}/stats")
            assert status == 200, stats
            assert stats["collection"]["sketch"] == sketch, stats
            assert stats["collection"]["minhash"] == minhash, stats
        # The legacy collection has no bands: the copy beyond k is new there.
        assert check_insert_text(c, "legacy", "a", TEXT)["status"] == "new"
        assert check_insert_text(c, "legacy", "b", EDITED)["status"] == "new"
        assert band_sets(redis, "legacy") == {}
    finally:
        s.close()
