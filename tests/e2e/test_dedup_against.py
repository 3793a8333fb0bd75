"""`simdup dedup --against`, `--against-only` and `simdup index` on generated dumps: runs of later
dumps against the indexes of earlier ones keep what one run over all dumps keeps, name the
earlier documents by their real ids, and refuse indexes they cannot use."""

import json
import random

from cli_harness import run, write_jsonl
from dedup_corpus import WORDS, base_texts, jaccard, light_edit


def families(seed=11, originals=90):
    """Originals with 0 to 3 edited copies each, shuffled over the corpus so that members of a
    family fall into different dumps."""
    rng = random.Random(seed)
    records = []
    for i, text in enumerate(base_texts(originals, seed, sentences=10)):
        records.append({"id": f"o{i}", "text": text})
        copy = text
        for c in range(rng.randint(0, 3)):
            copy = light_edit(copy, rng)
            records.append({"id": f"o{i}-c{c}", "text": copy})
        if i % 9 == 0:  # exact copies
            records.append({"id": f"o{i}-x", "text": text.upper()})
    rng.shuffle(records)
    return records


def true_pairs(records, threshold=0.8):
    out = set()
    for i, a in enumerate(records):
        for b in records[i + 1:]:
            if jaccard(a["text"], b["text"]) >= threshold:
                out.add(frozenset((a["id"], b["id"])))
    return out


def dropped(out_dir):
    return [json.loads(line) for line in (out_dir / "duplicates.jsonl").read_text().splitlines()]


def kept_ids(out_dir):
    return [json.loads(line)["id"] for line in (out_dir / "kept.jsonl").read_text().splitlines()]


def three_dumps(tmp_path, records):
    third = (len(records) + 2) // 3
    return [write_jsonl(tmp_path / f"dump{i + 1}.jsonl", records[i * third:(i + 1) * third])
            for i in range(3)]


def test_later_dumps_against_earlier_runs_keep_what_one_run_keeps(tmp_path):
    records = families()
    by_id = {r["id"]: r for r in records}
    dumps = three_dumps(tmp_path, records)
    whole = write_jsonl(tmp_path / "all.jsonl", records)
    run(["dedup", whole, "--out", tmp_path / "single", "-q"], check=0)
    run(["dedup", dumps[0], "--out", tmp_path / "run1", "-q"], check=0)
    run(["dedup", dumps[1], "--against", tmp_path / "run1", "--out", tmp_path / "run2", "-q"],
        check=0)
    run(["dedup", dumps[2], "--against", tmp_path / "run1", "--against", tmp_path / "run2",
         "--out", tmp_path / "run3", "-q"], check=0)

    truth = true_pairs(records)
    assert len(truth) > 100
    union_dropped = {r["id"] for run_dir in ("run1", "run2", "run3")
                     for r in dropped(tmp_path / run_dir)}
    single_dropped = {r["id"] for r in dropped(tmp_path / "single")}
    both_kept = lambda gone: sum(1 for p in truth if not p & gone)  # noqa: E731
    # The kept-set guarantee: no more true pairs left with both documents kept than one run.
    assert both_kept(union_dropped) <= both_kept(single_dropped) + max(1, len(truth) // 1000)

    # Every drop against an earlier run names a document that run kept, by its id, and is a
    # verified near duplicate of it (or an exact one).
    earlier_kept = {"run1": set(kept_ids(tmp_path / "run1"))}
    earlier_kept["run2"] = earlier_kept["run1"] | set(kept_ids(tmp_path / "run2"))
    against = 0
    for run_dir, allowed in (("run2", earlier_kept["run1"]), ("run3", earlier_kept["run2"])):
        summary = json.loads((tmp_path / run_dir / "summary.json").read_text())
        hits = 0
        for r in dropped(tmp_path / run_dir):
            if "against" not in r:
                assert r["cluster"] is not None
                continue
            hits += 1
            assert r["cluster"] is None
            assert r["duplicate_of"] in allowed, r
            # An exact copy of a document dropped near is dropped for the same document: every
            # drop is a true near duplicate of the earlier document.
            a, b = by_id[r["id"]]["text"], by_id[r["duplicate_of"]]["text"]
            assert jaccard(a, b) >= 0.8 - 1e-9, r
            if "jaccard" in r:
                assert r["jaccard"] >= 0.8
        against += hits
        assert summary["against"]["dropped"] == hits
        assert summary["index"]["documents"] == summary["documents"]["kept"]
        assert summary["index"]["other_bytes_per_document"] <= 100
    assert against > 20

    # Earlier documents are never emitted again: each kept id appears in exactly one run.
    all_kept = sum((kept_ids(tmp_path / d) for d in ("run1", "run2", "run3")), [])
    assert len(all_kept) == len(set(all_kept))


def test_a_merged_index_decides_as_its_parts(tmp_path):
    dumps = three_dumps(tmp_path, families(seed=5))
    run(["dedup", dumps[0], "--out", tmp_path / "run1", "-q"], check=0)
    run(["dedup", dumps[1], "--against", tmp_path / "run1", "--out", tmp_path / "run2", "-q"],
        check=0)
    merged = run(["index", "merge", tmp_path / "run1", tmp_path / "run2" / "index",
                  "--out", tmp_path / "history"], check=0)
    assert b"documents of 2 indexes" in merged.stdout
    stats = json.loads(run(["index", "stats", tmp_path / "history", "--json"], check=0).stdout)
    kept12 = len(kept_ids(tmp_path / "run1")) + len(kept_ids(tmp_path / "run2"))
    assert stats["documents"] == kept12
    assert stats["sources"] == [str(dumps[0]), str(dumps[1])]
    assert stats["profile"]["k"] == 8
    run(["dedup", dumps[2], "--against", tmp_path / "run1", "--against", tmp_path / "run2",
         "--out", tmp_path / "parts", "-q"], check=0)
    run(["dedup", dumps[2], "--against", tmp_path / "history", "--out", tmp_path / "whole", "-q"],
        check=0)
    assert kept_ids(tmp_path / "parts") == kept_ids(tmp_path / "whole")
    parts = {r["id"]: r["duplicate_of"] for r in dropped(tmp_path / "parts")}
    whole = {r["id"]: r["duplicate_of"] for r in dropped(tmp_path / "whole")}
    assert parts == whole
    # Merging into an existing directory is refused, and leaves it alone.
    again = run(["index", "merge", tmp_path / "run1", "--out", tmp_path / "history"], check=2)
    assert b"exists" in again.stderr


def test_against_only_drops_what_matches_the_evaluation_set(tmp_path):
    rng = random.Random(3)
    evals = [{"id": f"eval{i}", "text": t} for i, t in enumerate(base_texts(12, 99))]
    train = [{"id": f"t{i}", "text": t} for i, t in enumerate(base_texts(40, 4))]
    train.append({"id": "t-dup", "text": train[0]["text"]})  # a duplicate within train: kept
    leaked = []
    for i in (1, 1, 4, 7):
        leaked.append({"id": f"leak{len(leaked)}", "text": light_edit(evals[i]["text"], rng)})
    train += leaked
    run(["dedup", write_jsonl(tmp_path / "eval.jsonl", evals), "--out", tmp_path / "eval", "-q"],
        check=0)
    proc = run(["dedup", write_jsonl(tmp_path / "train.jsonl", train), "--against",
                tmp_path / "eval", "--against-only", "--out", tmp_path / "clean"], check=0)
    assert b"4 dropped for 3 of the 12 documents" in proc.stdout
    gone = {r["id"]: r["duplicate_of"] for r in dropped(tmp_path / "clean")}
    assert gone == {"leak0": "eval1", "leak1": "eval1", "leak2": "eval4", "leak3": "eval7"}
    assert "t-dup" in kept_ids(tmp_path / "clean")
    hits = [json.loads(line) for line in
            (tmp_path / "clean" / "against_hits.jsonl").read_text().splitlines()]
    assert hits[0] == {"index": str(tmp_path / "eval"), "id": "eval1", "hits": 2}
    assert sorted(h["id"] for h in hits) == ["eval1", "eval4", "eval7"]
    summary = json.loads((tmp_path / "clean" / "summary.json").read_text())
    assert summary["against"]["only"] is True
    # --against-only without --against is a usage error.
    bad = run(["dedup", tmp_path / "train.jsonl", "--against-only", "--out", tmp_path / "x"],
              check=2)
    assert b"--against-only needs --against" in bad.stderr


def test_indexes_it_cannot_use_are_refused_clearly(tmp_path):
    dumps = three_dumps(tmp_path, families(seed=2, originals=30))
    run(["dedup", dumps[0], "--out", tmp_path / "run1", "-q"], check=0)
    other_k = run(["dedup", dumps[1], "-k", "5", "--against", tmp_path / "run1",
                   "--out", tmp_path / "k5"], check=2)
    assert b"built with k 8, this run uses 5" in other_k.stderr
    other_width = run(["dedup", dumps[1], "--shingle-width", "3", "--against", tmp_path / "run1",
                       "--out", tmp_path / "w3"], check=2)
    assert b"fingerprint.shingle_width" in other_width.stderr
    stream = run(["dedup", dumps[1], "--mode", "stream", "--against", tmp_path / "run1",
                  "--out", tmp_path / "s"], check=2)
    assert b"--against needs batch mode" in stream.stderr
    missing = run(["dedup", dumps[1], "--against", tmp_path / "nowhere", "--out", tmp_path / "m"],
                  check=1)
    assert b"holds no dedup index" in missing.stderr

    shingles = tmp_path / "run1" / "index" / "shingles.u32"
    data = bytearray(shingles.read_bytes())
    data[len(data) // 2] ^= 0x40
    shingles.write_bytes(bytes(data))
    damaged = run(["dedup", dumps[1], "--against", tmp_path / "run1", "--out", tmp_path / "d"],
                  check=1)
    assert b"shingles.u32 is damaged" in damaged.stderr
    for out in ("k5", "w3", "s", "m", "d"):
        assert not (tmp_path / out).exists()


def test_no_index_writes_none(tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl",
                         [{"id": i, "text": " ".join(random.Random(i).choices(WORDS, k=60))}
                          for i in range(20)])
    run(["dedup", corpus, "--out", tmp_path / "out", "--no-index", "-q"], check=0)
    assert not (tmp_path / "out" / "index").exists()
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["index"] is None
    run(["dedup", corpus, "--out", tmp_path / "with", "-q"], check=0)
    stats = json.loads(run(["index", "stats", tmp_path / "with", "--json"], check=0).stdout)
    assert stats["documents"] == 20
