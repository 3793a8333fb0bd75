"""Fixtures of released file formats are never rewritten in place.

tests/data/index/vN_small.simdupix were written by the version-N writer and prove that today's
loader still reads what that version wrote (tests/unit/index/online_index_test.cpp). Rewriting
one with a newer writer would silently turn that proof into a round-trip test. A format change
gets a new version number and a new fixture, added here with its SHA-256; the old ones stay.
"""

import hashlib
import os
import pathlib

SOURCE = pathlib.Path(os.environ.get("SIMDUP_SOURCE_DIR", pathlib.Path(__file__).parents[2]))

FROZEN = {
    "tests/data/index/v1_small.simdupix":
        "6fa6337beb4fdd516594acb7a35b1e4e8d32f860d82720cd56dbe47f8e106677",
    "tests/data/index/v2_small.simdupix":
        "8ef43fcd0c5ffe5e798be26c82e10dd005814163d030a618909b2df0b5745476",
    "tests/data/index/v3_small.simdupix":
        "01cfb141b534dd22cfed86b8f95bfb2ec7ef0b75a407d82b83f7390573b8f767",
}


def test_every_format_fixture_keeps_its_bytes():
    for path, digest in FROZEN.items():
        assert hashlib.sha256((SOURCE / path).read_bytes()).hexdigest() == digest, (
            f"{path} was rewritten: add a new version and fixture instead")


def test_every_fixture_is_listed():
    on_disk = {str(p.relative_to(SOURCE)) for p in (SOURCE / "tests/data/index").iterdir()}
    assert on_disk == set(FROZEN), "list a new fixture in FROZEN with its SHA-256"


def test_the_fuzz_seeds_are_copies_of_the_older_fixtures():
    seeds = SOURCE / "fuzz/corpus/index_file"
    for version in ("v1", "v2"):
        seed = (seeds / f"{version}_fixture.simdupix").read_bytes()
        assert hashlib.sha256(seed).hexdigest() == FROZEN[f"tests/data/index/{version}_small.simdupix"]
