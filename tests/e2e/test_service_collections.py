"""`simdup serve`: listing, reading and deleting collections, reading documents, integer
fingerprints, totals that survive restarts, small empty collections and UTF-8 repair."""

import json
import subprocess
import time

import pytest

from cli_harness import run, simdup_bin, write_jsonl
from service_harness import Server, flip, fp_hex

BASE = 0x0123456789ABCDEF
TEXT = ("The quick brown fox jumps over the lazy dog while the committee debates the budget "
        "for another long afternoon of speeches")


@pytest.fixture
def data_dir(tmp_path):
    return tmp_path / "db"


def start(data_dir, *extra):
    return Server(["--data", str(data_dir), *extra])


def test_list_get_and_delete_collections(data_dir):
    s = start(data_dir)
    try:
        c = s.client()
        assert c.request("GET", "/v1") == (200, {"collections": []})
        assert c.request("PUT", "/v1/news", {"k": 2, "window": "1d"})[0] == 200
        assert c.request("PUT", "/v1/blogs", {"compat": "python-simhash"})[0] == 200
        assert c.post("/v1/news/insert", {"id": "a", "fingerprint": fp_hex(BASE)})[0] == 200
        status, body = c.request("GET", "/v1/")
        assert status == 200
        assert [x["name"] for x in body["collections"]] == ["blogs", "news"]
        news = body["collections"][1]
        assert news == {"name": "news", "k": 2, "window_s": 86400, "compat": "none",
                        "shingle_width": 4, "features": "shingles", "top_k": 0,
                        "verify": "jaccard:0.8", "sketch": 512, "minhash": "10x6",
                        "documents": 1}
        # GET on a collection: its settings and counts (was 405).
        status, body = c.request("GET", "/v1/news")
        assert status == 200 and body["collection"]["k"] == 2 and body["documents"] == 1
        assert body == c.request("GET", "/v1/news/stats")[1]
        status, body = c.request("POST", "/v1/news")
        assert status == 405 and body["error"]["code"] == "method_not_allowed"
        # DELETE: gone with its documents; a second DELETE is 404.
        assert c.request("DELETE", "/v1/news") == (200, {"name": "news", "deleted": True})
        status, body = c.request("DELETE", "/v1/news")
        assert status == 404 and body["error"]["code"] == "not_found"
        assert c.request("GET", "/v1/news")[0] == 404
        assert c.post("/v1/news/check", {"id": "q", "fingerprint": fp_hex(BASE)})[0] == 404
        assert [x["name"] for x in c.request("GET", "/v1")[1]["collections"]] == ["blogs"]
        # Re-created under the same name: empty, other settings allowed.
        assert c.request("PUT", "/v1/news", {"k": 3})[0] == 200
        assert c.request("GET", "/v1/news")[1]["documents"] == 0
        assert c.post("/v1/news/check", {"id": "q", "fingerprint": fp_hex(BASE)})[1][
            "status"] == "unique"
        assert c.post("/v1/news/insert", {"id": "b", "fingerprint": fp_hex(~BASE & (2**64 - 1))})[
            0] == 200
        assert c.request("DELETE", "/v1/blogs")[0] == 200
        c.close()
    finally:
        # kill -9: the deletions were acknowledged, so they must hold without a clean close.
        s.kill9()
        s.close()
    s = start(data_dir)
    try:
        c = s.client()
        status, body = c.request("GET", "/v1")
        assert [(x["name"], x["k"], x["documents"]) for x in body["collections"]] == [
            ("news", 3, 1)]
        # The old "a" is gone; only "b" of the new collection is there.
        assert c.request("GET", "/v1/news/documents/a")[0] == 404
        assert c.request("GET", "/v1/news/documents/b")[0] == 200
        c.close()
    finally:
        s.close()


def test_delete_with_segment_file_and_recreate_survives_restart(data_dir):
    s = start(data_dir)
    c = s.client()
    assert c.request("PUT", "/v1/news", {"k": 3, "window": "0"})[0] == 200
    docs = [{"id": f"d{i}", "fingerprint": fp_hex((BASE * (i + 1)) & (2**64 - 1))}
            for i in range(200)]
    assert c.post("/v1/news/insert", {"documents": docs})[0] == 200
    c.close()
    assert s.terminate() == 0  # saves a segment file
    s.close()
    assert list((data_dir / "segments").glob("news.*"))
    s = start(data_dir)
    c = s.client()
    assert c.request("GET", "/v1/news")[1]["documents"] == 200
    assert c.request("DELETE", "/v1/news")[0] == 200
    assert not list((data_dir / "segments").glob("news.*"))
    assert c.request("PUT", "/v1/news", {"k": 3, "window": "0"})[0] == 200
    assert c.post("/v1/news/insert", {"id": "only", "fingerprint": fp_hex(BASE)})[0] == 200
    c.close()
    assert s.terminate() == 0
    s.close()
    s = start(data_dir)
    try:
        c = s.client()
        body = c.request("GET", "/v1/news")[1]
        assert body["documents"] == 1
        assert c.post("/v1/news/check", docs[5])[1]["status"] == "unique"
        c.close()
    finally:
        s.close()


def test_get_document_and_integer_fingerprints(tmp_path, data_dir):
    clock = tmp_path / "clock"
    clock.write_text("1000000")
    s = start(data_dir, "--clock-file", str(clock))
    try:
        c = s.client()
        assert c.request("PUT", "/v1/news", {"k": 3, "window": "100s"})[0] == 200
        big = 0xFEDCBA9876543210  # above 2^63: JSON integers must carry all 64 bits
        status, body = c.post("/v1/news/check-insert?fingerprint_format=int",
                              {"id": "x/1 ü", "fingerprint": big, "time": 999990})
        assert status == 200 and body["fingerprint"] == big and body["status"] == "new"
        # The same document in hex is a duplicate at distance 0; answered in hex by default.
        status, body = c.post("/v1/news/check", {"id": "q", "fingerprint": fp_hex(big)})
        assert body["fingerprint"] == fp_hex(big)
        assert body["matches"] == [{"id": "x/1 ü", "distance": 0, "jaccard": None}]
        # An integer fingerprint one bit away, in a batch.
        status, body = c.post("/v1/news/check?fingerprint_format=int",
                              {"documents": [{"id": "q", "fingerprint": flip(big, [3])}]})
        assert body["results"][0]["matches"] == [{"id": "x/1 ü", "distance": 1, "jaccard": None}]
        path = "/v1/news/documents/x%2F1%20%C3%BC"
        assert c.request("GET", path) == (200, {"id": "x/1 ü", "fingerprint": fp_hex(big),
                                                "time": 999990, "expires": 1000090})
        assert c.request("GET", path + "?fingerprint_format=int")[1]["fingerprint"] == big
        status, body = c.request("GET", path + "?fingerprint_format=dec")
        assert status == 400 and "fingerprint_format" in body["error"]["message"]
        assert c.request("GET", "/v1/news/documents/nope")[0] == 404
        assert c.request("GET", "/v1/none/documents/x")[0] == 404
        status, body = c.request("PUT", "/v1/news/documents/x")
        assert status == 405
        # Out of the window: not reported, even before the expiry loop removes it.
        clock.write_text("1000090")
        assert c.request("GET", path)[0] == 404
        # Bad integers are clear 400s.
        for bad in (-1, 1.5, 2**64, "12"):
            status, body = c.post("/v1/news/check", {"id": "b", "fingerprint": bad})
            assert status == 400, bad
            assert body["error"]["code"] == "invalid_input"
        c.close()
    finally:
        s.close()


def test_totals_survive_restarts(data_dir, tmp_path):
    clock = tmp_path / "clock"
    clock.write_text("5000")
    s = start(data_dir, "--clock-file", str(clock), "--expire-interval-ms", "100")
    c = s.client()
    assert c.request("PUT", "/v1/news", {"k": 3, "window": "60s"})[0] == 200
    docs = [{"id": f"d{i}", "fingerprint": fp_hex((BASE * (2 * i + 1)) & (2**64 - 1)),
             "time": 4990 + (i % 2) * 50} for i in range(10)]
    # Two requests: a request's record leaves the store with its newest document.
    assert c.post("/v1/news/insert", {"documents": docs[0::2]})[0] == 200
    assert c.post("/v1/news/insert", {"documents": docs[1::2]})[0] == 200
    assert c.request("DELETE", "/v1/news/documents/d1")[0] == 200
    c.close()
    s.kill9()  # no clean close: the totals are written with the changes themselves
    s.close()
    s = start(data_dir, "--clock-file", str(clock), "--expire-interval-ms", "100")
    try:
        c = s.client()
        body = c.request("GET", "/v1/news/stats")[1]
        assert (body["documents"], body["inserted"], body["deleted"], body["expired"]) == (
            9, 10, 1, 0)
        clock.write_text("5055")  # the five documents at 4990 leave the window
        deadline = time.time() + 20
        while c.request("GET", "/v1/news/stats")[1]["expired"] < 5:
            assert time.time() < deadline
            time.sleep(0.1)
        c.close()
    finally:
        s.close()
    s = start(data_dir, "--clock-file", str(clock))
    try:
        body = s.client().request("GET", "/v1/news/stats")[1]
        assert (body["documents"], body["inserted"], body["deleted"], body["expired"]) == (
            4, 10, 1, 5)
    finally:
        s.close()


def test_empty_collections_are_small(data_dir):
    s = start(data_dir)
    try:
        c = s.client()
        for i in range(20):
            assert c.request("PUT", f"/v1/c{i}", {"k": 3})[0] == 200
        body = c.request("GET", "/v1/c7/stats")[1]
        # Was about 10 MB per collection (a full mutable segment reserved up front).
        assert body["index_bytes"] + body["id_map_bytes"] < 512 * 1024, body
        # It grows as documents come, and still finds them.
        docs = [{"id": f"d{i}", "fingerprint": fp_hex((BASE * (2 * i + 1)) & (2**64 - 1))}
                for i in range(1000)]
        for start_at in range(0, 5000, 1000):
            batch = [{"id": f"{d['id']}-{start_at}", "fingerprint": fp_hex(
                (int(d["fingerprint"], 16) + start_at * 7919) & (2**64 - 1))} for d in docs]
            assert c.post("/v1/c7/insert", {"documents": batch})[0] == 200
        assert c.request("GET", "/v1/c7/stats")[1]["documents"] == 5000
        probe = (int(docs[10]["fingerprint"], 16) + 3000 * 7919) & (2**64 - 1)
        status, body = c.post("/v1/c7/check", {"id": "q", "fingerprint": fp_hex(flip(probe, [9]))})
        assert {"id": "d10-3000", "distance": 1, "jaccard": None} in body["matches"]
        c.close()
    finally:
        s.close()


def test_invalid_utf8_is_repaired_like_the_cli(data_dir, tmp_path):
    raw_text = b"caf\xe9 au lait \xff with some more words about the \xe4\xb8 market today"
    # The CLI's fingerprint of the same bytes (it repairs them the same way).
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"id":"x","text":"' + raw_text + b'"}\n')
    cli = json.loads(run(["fingerprint", path], check=0).stdout.decode().splitlines()[0])
    ok_path = write_jsonl(tmp_path / "ok.jsonl", [{"id": "y", "text": TEXT}])
    cli_ok = json.loads(run(["fingerprint", ok_path], check=0).stdout.decode().splitlines()[0])
    s = start(data_dir)
    try:
        c = s.client()
        assert c.request("PUT", "/v1/news", {"k": 3})[0] == 200
        status, body = c.request("POST", "/v1/news/check-insert",
                                 raw=b'{"id":"x\xff","text":"' + raw_text + b'"}')
        assert status == 200, body
        assert body["status"] == "new" and body["fingerprint"] == cli["fingerprint"]
        assert body["id"] == "x\ufffd"
        assert c.post("/v1/news/check", {"id": "y", "text": TEXT})[1]["fingerprint"] == \
            cli_ok["fingerprint"]
        # Still clear errors for what is not JSON at all.
        status, body = c.request("POST", "/v1/news/check", raw=b'{"id": "x", "text": \xff}')
        assert status == 400 and body["error"]["code"] == "invalid_input"
        c.close()
    finally:
        s.close()


def test_sketch_and_minhash_defaults_come_from_the_command_line(tmp_path):
    s = Server(["--data", str(tmp_path / "db"), "--sketch", "256", "--minhash", "16x4"])
    try:
        c = s.client()
        status, body = c.request("PUT", "/v1/news", {})
        assert status == 200, body
        assert body["sketch"] == 256 and body["minhash"] == "16x4"
        # A collection's own settings win over the defaults.
        status, body = c.request("PUT", "/v1/blogs", {"sketch": 128, "minhash": "off"})
        assert status == 200 and body["sketch"] == 128 and body["minhash"] == "off", body
        c.close()
    finally:
        s.close()
    for flag, value, message in [("--sketch", "8", "--sketch: Value 8 not in range 16 to 4096"),
                                 ("--minhash", "3", "--minhash: expected off or BANDSxROWS")]:
        r = subprocess.run([simdup_bin(), "serve", "--data", str(tmp_path / "db2"), flag, value],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, r.stderr
        assert message in r.stderr, r.stderr
