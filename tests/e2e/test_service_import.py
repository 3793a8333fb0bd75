"""`simdup serve --import COLLECTION=DIR`: a batch run's index fills a collection, durably, on
RocksDB and on Redis, so that the service answers for what the batch run kept."""

import json

import pytest

from cli_harness import SOURCE_DIR, run
from service_harness import Redis, Server

SAMPLE = SOURCE_DIR / "data" / "sample" / "news.jsonl"


@pytest.fixture(scope="module")
def batch_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("import")
    first = tmp / "first.jsonl"
    first.write_text("".join(SAMPLE.read_text("utf-8").splitlines(keepends=True)[:600]), "utf-8")
    run(["dedup", first, "--out", tmp / "run", "-q"], check=0)
    kept = [json.loads(line) for line in (tmp / "run" / "kept.jsonl").read_text().splitlines()]
    return tmp / "run", kept


def check(client, text):
    status, body = client.post("/v1/news/check", {"documents": [{"id": "q", "text": text}]})
    assert status == 200, body
    return body["results"][0]


@pytest.mark.parametrize("store", ["rocksdb", "redis"])
def test_an_imported_index_answers_for_what_the_run_kept(tmp_path, batch_run, store):
    out, kept = batch_run
    redis = Redis(tmp_path) if store == "redis" else None
    args = ["--store", redis.url] if redis else ["--data", tmp_path / "data"]
    try:
        server = Server([*args, "--collection", "news", "--import", f"news={out}"])
        try:
            c = server.client()
            status, stats = c.request("GET", "/v1/news/stats")
            with_fp = json.loads(run(["index", "stats", out, "--json"], check=0).stdout)
            assert stats["documents"] == with_fp["documents"] == len(kept)
            doc = kept[7]
            got = check(c, doc["text"])
            assert got["status"] == "duplicate"
            assert got["matches"][0]["id"] == doc["id"]
            assert got["matches"][0]["jaccard"] == 1
            edited = doc["text"].replace(" the ", " a ", 1)
            assert check(c, edited)["matches"][0]["id"] == doc["id"]
            assert check(c, "A text no run has seen: " * 20)["status"] == "unique"
            c.close()
        finally:
            server.terminate()
            err_lines = server.proc.stderr.read()
            server.close()
        assert f"imported {len(kept)} documents of {out} into news" in err_lines
        # Durable: a restart without --import still has them.
        again = Server([*args])
        try:
            c = again.client()
            assert check(c, kept[3]["text"])["matches"][0]["id"] == kept[3]["id"]
            c.close()
        finally:
            again.close()
    finally:
        if redis:
            redis.close()


def test_an_index_of_other_settings_is_refused(tmp_path, batch_run):
    out, _ = batch_run
    other = tmp_path / "w3"
    run(["dedup", SAMPLE, "--shingle-width", "3", "--out", other, "-q"], check=0)
    proc = run(["serve", "--data", tmp_path / "data", "--listen", "127.0.0.1:0", "--collection",
                "news", "--import", f"news={other}"], check=2)
    assert b"fingerprint.shingle_width 3, collection \"news\" uses 4" in proc.stderr
    missing = run(["serve", "--data", tmp_path / "data", "--listen", "127.0.0.1:0",
                   "--import", f"nothing={out}"], check=1)
    assert b"no collection \"nothing\"" in missing.stderr
    bad = run(["serve", "--data", tmp_path / "data", "--listen", "127.0.0.1:0",
               "--import", str(out)], check=2)
    assert b"--import takes COLLECTION=DIR" in bad.stderr


@pytest.mark.parametrize("store", ["rocksdb", "redis"])
def test_imported_band_keys_find_copies_beyond_k(tmp_path, batch_run, store):
    # At k = 0 only an identical fingerprint is a SimHash candidate: an edited copy of an imported
    # document is found through the MinHash band keys the batch run's index holds, or not at all.
    out, kept = batch_run
    redis = Redis(tmp_path) if store == "redis" else None
    args = ["--store", redis.url] if redis else ["--data", tmp_path / "data"]
    try:
        server = Server([*args, "--k", "0", "--collection", "news", "--import", f"news={out}"])
        try:
            c = server.client()
            doc = next(d for d in kept if len(d["text"]) > 1500)
            words = doc["text"].split(" ")
            edited = " ".join(words[:10] + ["inserted"] + words[10:]) + " (via AP)"
            got = check(c, edited)
            assert got["status"] == "duplicate", got
            assert got["matches"][0]["id"] == doc["id"]
            assert got["matches"][0]["distance"] > 0 and got["matches"][0]["jaccard"] >= 0.8
            c.close()
        finally:
            server.close()
    finally:
        if redis:
            redis.close()
