"""eval/truth.py: normalisation, exact 5-gram Jaccard, and the all-pairs search."""

import itertools
import random
import shutil
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "eval"))

import truth  # noqa: E402


def shingles(text: str) -> set[str]:
    """Reference: the set of 5-code-point substrings (the text itself when shorter)."""
    if not text:
        return set()
    if len(text) < 5:
        return {text}
    return {text[i : i + 5] for i in range(len(text) - 4)}


def test_normalize_html_nfkc_case_and_space():
    assert truth.normalize("  Ｈｅｌｌｏ,\u3000WORLD!\n\n\tBye ") == "hello, world! bye"
    page = ("<!DOCTYPE html><html><head><title>T</title><style>p{x:1}</style>"
            "<script>var a = '<p>';</script></head><body><p>Fish&nbsp;&amp; chips</p>"
            "<!-- note --><p>&#x4e2d;&#25991;</p></body></html>")
    assert truth.normalize(page) == "t fish & chips 中文"
    # Only documents that start like HTML are parsed as HTML.
    assert truth.normalize("a <b> c") == "a <b> c"


def test_hand_computed_jaccard():
    # "abcdef": {abcde, bcdef}; "abcdefg": {abcde, bcdef, cdefg} -> J = 2/3.
    sets = truth.shingle_sets(["abcdef", "abcdefg", "ABCDEF", "xyz", "xyz", ""])
    assert [len(s) for s in sets] == [2, 3, 2, 1, 1, 0]
    assert truth.jaccard(sets[0], sets[1]) == pytest.approx(2 / 3)
    # Case is not folded by shingle_sets (normalize does that), so these share nothing.
    assert truth.jaccard(sets[0], sets[2]) == 0.0
    assert truth.jaccard(sets[3], sets[4]) == 1.0
    # "the cat sat" (7 shingles) vs "the cat sat!" (8 shingles, 7 shared): J = 7/8.
    a, b = truth.shingle_sets(["the cat sat", "the cat sat!"])
    assert (len(a), len(b), truth.jaccard(a, b)) == (7, 8, 7 / 8)


def test_threshold_is_inclusive_and_exact():
    # 4 shared of 5 in the union: J = 0.8 exactly is a pair; 3/4 is not.
    texts = ["abcdefgh", "abcdefghi", "abcdefg", "zzzz"]
    # sets: 4, 5, 3 shingles; J(0,1) = 4/5, J(0,2) = 3/4, J(1,2) = 3/5.
    pairs = truth.similar_pairs(truth.shingle_sets(texts))
    assert pairs == [(0, 1, 0.8)]
    assert truth.similar_pairs(truth.shingle_sets(texts), Fraction(3, 4)) == [
        (0, 1, 0.8), (0, 2, 0.75)]


def test_prefix_filter_finds_every_pair_brute_force_finds():
    rng = random.Random(7)
    base = ["".join(rng.choice("abcde ") for _ in range(rng.randint(0, 80))) for _ in range(80)]
    texts = base + [b[: int(len(b) * rng.uniform(0.6, 1.0))] + rng.choice(["", "x", "yz"])
                    for b in base]
    sets = truth.shingle_sets(texts)
    for t in (Fraction(4, 5), Fraction(1, 2), Fraction(9, 10)):
        expected = []
        for i, j in itertools.combinations(range(len(texts)), 2):
            a, b = shingles(texts[i]), shingles(texts[j])
            if a and b and Fraction(len(a & b), len(a | b)) >= t:
                expected.append((i, j))
        assert [(i, j) for i, j, _ in truth.similar_pairs(sets, t)] == expected


def test_wide_alphabet_takes_the_exact_two_word_path():
    # More than 7131 distinct code points: base**5 no longer fits 64 bits.
    chars = "".join(chr(0x4E00 + i) for i in range(7200))
    texts = [chars[:4000], chars[:4000] + "x", chars[3000:7200], "abcdef"]
    sets = truth.shingle_sets(texts)
    assert sets[0].dtype == np.int64
    assert [len(s) for s in sets] == [3996, 3997, 4196, 2]
    assert truth.jaccard(sets[0], sets[1]) == pytest.approx(3996 / 3997)
    assert [(i, j) for i, j, _ in truth.similar_pairs(sets)] == [(0, 1)]


@pytest.mark.skipif(shutil.which("opencc") is None, reason="opencc command not installed")
def test_chinese_traditional_folds_to_simplified():
    texts = ["軟體開發的過程\n很長。", "软体开发的过程，很长", "ＡＢＣ中文「x」"]
    # Content only: white space and punctuation (full-width or not) go after t2s.
    assert truth.normalize_all(texts, chinese=True) == [
        "软体开发的过程很长", "软体开发的过程很长", "abc中文x"]
    assert [(i, j) for i, j, _ in truth.pairs_for_texts(texts, chinese=True)] == [(0, 1)]


def test_chunked_search_finds_the_same_pairs(monkeypatch):
    # A budget of a few candidates splits the search into many chunks of left documents.
    rng = np.random.default_rng(3)
    sets = []
    for _ in range(40):
        base = rng.choice(5000, 300, replace=False)
        for _ in range(3):
            x = base.copy()
            n = rng.integers(0, 40)
            x[:n] = rng.integers(5000, 10000, n)
            sets.append(np.unique(x).astype(np.int64))
    whole = truth.similar_pairs(sets)
    monkeypatch.setattr(truth, "CANDIDATE_BUDGET", 7)
    assert truth.similar_pairs(sets) == whole
    brute = [(i, j) for i in range(len(sets)) for j in range(i + 1, len(sets))
             if truth.jaccard(sets[i], sets[j]) >= 0.8]
    assert [(i, j) for i, j, _ in whole] == brute and len(brute) > 20
