"""`POST /v1/{c}/export` (`simdup serve --export-dir DIR`): a running service writes a
collection as a dedup index, on RocksDB and on Redis; `simdup index stats` reads it, `simdup
dedup --against` drops what the service would call a duplicate of it (naming the service's ids),
and `--import` of it fills a new collection with the same documents."""

import json
import random
import struct

import pytest

from cli_harness import run, write_jsonl
from dedup_corpus import base_texts, light_edit
from service_harness import Redis, Server

TOKEN = "export-token"
CLOCK = 1_700_000_000
WINDOW = 7 * 24 * 3600


def read_index(path):
    """{id: (fingerprint, shingles)} of an index directory, from its column files."""
    def column(name, fmt):
        data = (path / name).read_bytes()
        return list(struct.unpack(f"<{len(data) // struct.calcsize(fmt)}{fmt}", data))
    ids, id_ends = (path / "ids.txt").read_bytes(), column("ids.end.u64", "Q")
    fps, shingles, ends = column("fingerprints.u64", "Q"), column("shingles.u32", "I"), column(
        "shingles.end.u64", "Q")
    out = {}
    for j, end in enumerate(id_ends):
        begin = id_ends[j - 1] if j else 0
        first = ends[j - 1] if j else 0
        out[ids[begin:end].decode()] = (fps[j], shingles[first:ends[j]])
    return out


@pytest.fixture(scope="module")
def corpus():
    rng = random.Random(5)
    originals = {f"s{i}": t for i, t in enumerate(base_texts(40, 21, sentences=10))}
    copies = {f"n{i}": light_edit(originals[f"s{i}"], rng) for i in range(20)}
    unrelated = {f"u{i}": t for i, t in enumerate(base_texts(15, 99, sentences=10))}
    return originals, copies, unrelated


def insert(client, collection, docs, time=None):
    body = {"documents": [{"id": i, "text": t, **({"time": time} if time else {})}
                          for i, t in docs.items()]}
    status, answer = client.post(f"/v1/{collection}/insert", body)
    assert status == 200, answer
    assert all(r["status"] == "inserted" for r in answer["results"]), answer


def export(client, collection, name):
    return client.post(f"/v1/{collection}/export", {"name": name})


@pytest.mark.parametrize("store", ["rocksdb", "redis"])
def test_an_export_is_an_index_of_what_the_service_holds(tmp_path, corpus, store):
    originals, copies, unrelated = corpus
    redis = Redis(tmp_path) if store == "redis" else None
    args = ["--store", redis.url] if redis else ["--data", tmp_path / "data"]
    (tmp_path / "token").write_text(TOKEN)
    clock = tmp_path / "clock"
    clock.write_text(str(CLOCK))
    exports = tmp_path / "exports"
    common = [*args, "--token-file", tmp_path / "token", "--clock-file", clock,
              "--expire-interval-ms", "3600000"]
    try:
        server = Server([*common, "--collection", "news", "--export-dir", exports])
        try:
            c = server.client(TOKEN)
            insert(c, "news", originals)
            # Live when inserted, out of the window once the clock moves on; not yet expired.
            insert(c, "news", {"old": base_texts(1, 77)[0]}, time=CLOCK - WINDOW + 10)
            # Sent as a fingerprint: no sketch to export.
            status, answer = c.post("/v1/news/insert", {"id": "fp-only",
                                                        "fingerprint": "00ff00ff00ff00ff"})
            assert status == 200, answer
            # What the service calls a duplicate of each document of the new file.
            new = {**copies, **unrelated}
            status, checked = c.post("/v1/news/check", {"documents": [
                {"id": i, "text": t} for i, t in new.items()]})
            assert status == 200, checked
            service_dups = {r["id"]: r["matches"][0] for r in checked["results"]
                            if r["status"] == "duplicate"}
            assert len(service_dups) >= 12, service_dups  # most light edits are found
            assert not any(i.startswith("u") for i in service_dups)

            # "old" leaves the window; requests could remove it (Redis's do), the export only
            # leaves it out.
            clock.write_text(str(CLOCK + 20))
            status, answer = export(c, "news", "snap")
            assert status == 200, answer
            path = exports / "snap"
            assert answer == {"collection": "news", "name": "snap", "path": str(path),
                              "documents": 41, "expired": 1, "without_sketch": 1,
                              "bytes": sum(f.stat().st_size for f in path.iterdir())}
            status, metrics = c.request("GET", "/metrics")
            assert 'simdup_requests_total{endpoint="export",code="200"} 1' in metrics

            stats = json.loads(run(["index", "stats", path, "--json"], check=0).stdout)
            assert stats["documents"] == 41
            # The collection's MinHash band keys go with the texts (zeros: none).
            assert stats["minhash_bands"] == 10
            bands = (path / "bands.u64").read_bytes()
            assert len(bands) == 41 * 10 * 8
            keys = struct.unpack(f"<{41 * 10}Q", bands)
            assert sum(1 for j in range(41) if keys[j * 10] != 0) == 40
            held = read_index(path)
            assert set(held) == {*originals, "fp-only"}
            assert held["fp-only"] == (0x00FF00FF00FF00FF, [])
            # The sketches: each text's smallest shingle hashes, sorted, at most 512 (the
            # collection's sketch size): all of a text with fewer distinct shingles.
            for i in originals:
                assert 128 < len(held[i][1]) <= 512, i
                assert held[i][1] == sorted(set(held[i][1])), i
            assert max(len(held[i][1]) for i in originals) == 512

            # A batch run against the export drops exactly what the service calls duplicates,
            # for the same documents (k and the threshold are the collection's).
            new_file = write_jsonl(tmp_path / "new.jsonl",
                                   [{"id": i, "text": t} for i, t in new.items()])
            run(["dedup", new_file, "--against", path, "-k", "4", "--out", tmp_path / "run",
                 "-q"], check=0)
            dropped = {r["id"]: r for r in map(
                json.loads, (tmp_path / "run" / "duplicates.jsonl").read_text().splitlines())}
            assert set(dropped) == set(service_dups)
            for i, r in dropped.items():
                assert r["against"] == str(path), r
                assert r["duplicate_of"] == service_dups[i]["id"], (r, service_dups[i])
                assert r.get("jaccard") == pytest.approx(service_dups[i]["jaccard"], abs=1e-4)
            kept = [json.loads(line)["id"]
                    for line in (tmp_path / "run" / "kept.jsonl").read_text().splitlines()]
            assert set(unrelated) <= set(kept)
            summary = json.loads((tmp_path / "run" / "summary.json").read_text())
            assert summary["against"]["dropped"] == len(service_dups)

            # Refusals: an existing name, bad names, an unknown collection, no token, GET.
            status, answer = export(c, "news", "snap")
            assert status == 409 and answer["error"]["code"] == "conflict", answer
            for bad in ["..", ".hidden", "a/b", "", "x" * 65]:
                status, answer = export(c, "news", bad)
                assert status == 400, (bad, answer)
                assert "name must be" in answer["error"]["message"]
            status, answer = c.post("/v1/news/export", raw="[1]")
            assert status == 400 and "\"name\"" in answer["error"]["message"], answer
            status, answer = export(c, "nothing", "n1")
            assert status == 404, answer
            assert not (exports / "n1").exists()
            status, answer = server.client().post("/v1/news/export", {"name": "n2"})
            assert status == 401, answer
            status, _ = c.request("GET", "/v1/news/export")
            assert status == 405
            assert sorted(p.name for p in exports.iterdir()) == ["snap"]
            c.close()
        finally:
            server.close()

        # The round trip: the export imported into a new collection, exported again.
        again = Server([*common, "--collection", "copy", "--import", f"copy={path}",
                        "--export-dir", exports])
        try:
            c = again.client(TOKEN)
            status, answer = export(c, "copy", "snap2")
            assert status == 200, answer
            assert answer["documents"] == 41
            assert read_index(exports / "snap2") == held
            c.close()
        finally:
            again.close()

        # Without --export-dir the route says how to turn it on.
        plain = Server(common)
        try:
            status, answer = export(plain.client(TOKEN), "news", "snap3")
            assert status == 403, answer
            assert "--export-dir" in answer["error"]["message"]
        finally:
            plain.close()
    finally:
        if redis:
            redis.close()
