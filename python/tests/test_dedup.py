"""simdup.dedup gives the same decisions as `simdup dedup` with the same options."""

import json
import math

import pandas as pd
import pytest

import simdup
from conftest import SAMPLE, jsonl_lines, run_cli

# (Python options, the same options as CLI flags)
OPTION_SETS = [
    ({}, []),
    ({"mode": "stream"}, ["--mode", "stream"]),
    ({"k": 3, "verify": None, "clusters": "components"},
     ["-k", "3", "--verify", "off", "--clusters", "components"]),
    ({"keep": "longest", "layers": "exact,near", "verify": "jaccard:0.6", "min_features": 3},
     ["--keep", "longest", "--layers", "exact,near", "--verify", "jaccard:0.6", "--min-features", "3"]),
    ({"features": "words", "shingle_width": 3, "verify_max_hashes": 64},
     ["--features", "words", "--shingle-width", "3", "--verify-max-hashes", "64"]),
]


def cli_dedup(tmp_path, flags, source=SAMPLE):
    out = tmp_path / "out"
    run_cli(["dedup", str(source), "--out", out, "-q", *flags])
    dups = jsonl_lines((out / "duplicates.jsonl").read_bytes())
    kept = [json.loads(l)["id"] for l in (out / "kept.jsonl").read_text("utf-8").splitlines() if l]
    summary = json.loads((out / "summary.json").read_text())
    return dups, kept, summary


def frame_duplicates(frame):
    rows = []
    for r in frame[~frame["keep"]].itertuples():
        row = {"id": r.id, "duplicate_of": r.duplicate_of, "cluster": r.cluster,
               "distance": None if pd.isna(r.distance) else int(r.distance), "layer": r.layer}
        if not pd.isna(r.jaccard):
            # The CLI writes std::round(j * 1e4) / 1e4 (half away from zero).
            row["jaccard"] = math.floor(float(r.jaccard) * 1e4 + 0.5) / 1e4
        rows.append(row)
    return rows


@pytest.mark.parametrize("options,flags", OPTION_SETS, ids=lambda x: str(x)[:40])
def test_same_decisions_as_the_cli(tmp_path, options, flags):
    dups, kept, summary = cli_dedup(tmp_path, flags)
    frame, ours = simdup.dedup(str(SAMPLE), **options)
    assert list(frame.columns) == ["id", "keep", "cluster", "duplicate_of", "distance", "layer", "jaccard"]
    assert frame[frame["keep"]]["id"].tolist() == kept
    assert frame_duplicates(frame) == dups
    assert ours["documents"] == summary["documents"]
    assert ours["duplicates_by_layer"] == summary["duplicates_by_layer"]
    assert ours["clusters"] == summary["clusters"]
    assert ours["distance_histogram"] == summary["distance_histogram"]
    assert ours["parameters"]["k"] == summary["parameters"]["k"]
    # The same pair counts, the in-memory pre-check's among them.
    assert ours["pairs"] == summary["pairs"]
    assert ours["pairs"]["prefiltered"] <= ours["pairs"]["rejected_by_verify"]


def test_records_and_dataframes_equal_the_file(sample_records):
    frame, _ = simdup.dedup(str(SAMPLE))
    from_dicts, summary = simdup.dedup(sample_records)
    assert from_dicts.equals(frame)
    from_frame, _ = simdup.dedup(pd.DataFrame(sample_records))
    assert from_frame["keep"].tolist() == frame["keep"].tolist()
    assert summary["documents"]["read"] == len(sample_records)


def test_ids_keep_their_types_and_short_texts():
    records = [
        {"id": 1, "text": "The quick brown fox jumps over the lazy dog near the river bank."},
        {"id": "two", "text": "The quick brown fox jumps over the lazy dog near the river bank."},
        {"id": 3.5, "text": "Completely different: stock markets fell sharply on Tuesday."},
        {"id": 4, "text": ""},
        {"id": 5, "text": ""},
    ]
    frame, summary = simdup.dedup(records)
    assert frame["id"].tolist() == [1, "two", 3.5, 4, 5]
    assert frame["keep"].tolist() == [True, False, True, True, True]
    assert frame.loc[1, "duplicate_of"] == 1 and frame.loc[1, "layer"] == "exact"
    assert frame.loc[0, "layer"] == "kept" and frame.loc[0, "duplicate_of"] is None
    assert summary["documents"]["short"] == 2


def test_the_frame_index_places_each_row_in_the_input_when_records_are_skipped():
    text = "the river rose two metres overnight in the old town near the bridge"
    records = [{"id": "a", "text": text}, {"id": "b", "text": None}, {"id": "c"},
               {"id": "d", "text": text + "!"}, {"id": "e", "text": "a recipe for lemon cake"}]
    frame, summary = simdup.dedup(records, on_error="skip", min_features=1)
    assert summary["documents"]["skipped"] == 2
    assert frame.index.tolist() == [0, 3, 4] and frame["id"].tolist() == ["a", "d", "e"]
    assert frame["keep"].tolist() == [True, False, True]
    # cluster stays the CLI's: the representative's position among the rows.
    assert frame.iloc[frame.loc[3, "cluster"]]["id"] == "a"
    df = pd.DataFrame(records, index=["r1", "r2", "r3", "r4", "r5"])
    frame, _ = simdup.dedup(df, on_error="skip", min_features=1)
    assert frame.index.tolist() == ["r1", "r4", "r5"]
    assert df.loc[frame.index[frame["keep"]], "id"].tolist() == ["a", "e"]
    # Nothing skipped: positions 0..n-1, as before (a DataFrame's own index).
    frame, _ = simdup.dedup(records[3:], min_features=1)
    assert isinstance(frame.index, pd.RangeIndex) and frame.index.tolist() == [0, 1]
    frame, _ = simdup.dedup(df.iloc[3:], min_features=1)
    assert frame.index.equals(df.index[3:])


def test_bad_records_and_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "fine text here"}\nnot json\n{"id": 3, "text": "more text"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        simdup.dedup(str(bad))
    frame, summary = simdup.dedup(str(bad), on_error="skip")
    assert len(frame) == 2 and summary["documents"]["skipped"] == 1
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        simdup.dedup(str(tmp_path / "missing.jsonl"))
    with pytest.raises(TypeError, match="unknown option 'kk'"):
        simdup.dedup(str(bad), kk=3)
    with pytest.raises(ValueError, match="layers: unknown layer 'fuzzy'"):
        simdup.dedup(str(bad), layers="exact,fuzzy")
    with pytest.raises(ValueError):
        simdup.dedup(str(bad), keep="biggest")
    with pytest.raises(ValueError):
        simdup.dedup([])
    with pytest.raises(TypeError):
        simdup.dedup([1, 2, 3])
    with pytest.raises(TypeError, match="wrap a single record"):
        simdup.dedup({"id": 1, "text": "one record"})


def test_annotate_records_and_frames_equal_the_cli(tmp_path, sample_records):
    out = tmp_path / "out"
    run_cli(["dedup", str(SAMPLE), "--out", out, "-q", "--annotate"])
    cli = [json.loads(l) for l in (out / "annotated.jsonl").read_text("utf-8").splitlines()]
    annotated, summary = simdup.dedup(sample_records, annotate=True)
    # The input records, unchanged, each with the CLI's "simdup" object.
    assert [dict(r, simdup=None) for r in annotated] == [dict(r, simdup=None) for r in sample_records]
    assert [r["simdup"] for r in annotated] == [r["simdup"] for r in cli]
    assert "simdup" not in sample_records[0]
    frame = pd.DataFrame(sample_records)
    from_frame, _ = simdup.dedup(frame, annotate=True)
    assert from_frame.drop(columns="simdup").equals(frame)
    assert from_frame["simdup"].tolist() == [r["simdup"] for r in cli]
    assert sum(r["simdup"]["keep"] for r in annotated) == summary["documents"]["kept"]
    with pytest.raises(ValueError, match="simdup dedup --annotate"):
        simdup.dedup(str(SAMPLE), annotate=True)


def test_profile_errors_name_parameters():
    records = [{"id": 1, "text": "The quick brown fox jumps over the lazy dog near the river."}]
    with pytest.raises(ValueError, match="anchor_floor must be in"):
        simdup.dedup(records, anchor_floor=1.5)
    with pytest.raises(ValueError, match="minhash: expected"):
        simdup.dedup(records, minhash="10by6")


def test_against_an_earlier_run_decides_as_the_cli(tmp_path):
    lines = SAMPLE.read_text("utf-8").splitlines(keepends=True)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("".join(lines[:1000]), "utf-8")
    second.write_text("".join(lines[1000:]), "utf-8")
    run_cli(["dedup", str(first), "--out", tmp_path / "run1", "-q"])
    run_cli(["dedup", str(second), "--against", tmp_path / "run1", "--out", tmp_path / "run2",
             "-q"])
    cli = {r["id"]: r for r in jsonl_lines((tmp_path / "run2" / "duplicates.jsonl").read_bytes())}
    frame, summary = simdup.dedup(str(second), against=tmp_path / "run1")
    dropped = frame[~frame["keep"]]
    assert set(dropped["id"]) == set(cli)
    earlier = dropped[dropped["against"].notna()]
    assert len(earlier) == summary["against"]["dropped"] > 100
    for r in earlier.itertuples():
        assert cli[r.id]["against"] == r.against == str(tmp_path / "run1")
        assert cli[r.id]["duplicate_of"] == r.duplicate_of
        assert r.cluster == r.Index  # its own cluster here: the cluster is the earlier run's
    only, _ = simdup.dedup(str(second), against=[tmp_path / "run1"], against_only=True)
    only_dropped = only[~only["keep"]]
    # Each dropped for its own match; the run's duplicates among themselves stay.
    assert only_dropped["against"].notna().all()
    assert set(only_dropped["id"]) <= set(earlier["id"])
    assert len(only_dropped) > 100
    within = [i for i, r in cli.items() if "against" not in r]
    assert within and only.set_index("id").loc[within, "keep"].all()
    with pytest.raises(ValueError, match="built with k 8, this run uses 3"):
        simdup.dedup(str(second), against=tmp_path / "run1", k=3)
    with pytest.raises(ValueError, match="needs against"):
        simdup.dedup(str(second), against_only=True)
