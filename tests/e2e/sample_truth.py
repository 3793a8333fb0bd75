"""The ground truth of the bundled sample (data/sample/news.jsonl), computed independently of
simdup by eval/truth.py: exact Jaccard >= 0.8 of character 5-gram sets, with the English
normalisation for every pair, or, for two documents that both hold Han characters, the Chinese
one (the content after t2s, without white space and punctuation); the sample mixes the
languages, and a zh_CN page left partly untranslated pairs with its English original."""

import json
import sys

from cli_harness import SOURCE_DIR

sys.path.insert(0, str(SOURCE_DIR / "eval"))

import score  # noqa: E402
import truth  # noqa: E402

CORPUS = SOURCE_DIR / "data" / "sample" / "news.jsonl"


def has_han(text):
    return any("\u3400" <= c <= "\u9fff" for c in text)


def sample_truth():
    """(records, pairs, jaccard): the sample's records in order, its true pairs as score._key
    tuples, and jaccard(a, b) of two ids under the normalisation the pair would be judged by."""
    records = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    ids = [str(r["id"]) for r in records]
    texts = [r["text"] for r in records]
    pairs = set()
    sets = ({}, {})  # per normalisation: English (every document), Chinese (Han documents)
    for chinese in (False, True):
        members = [k for k, t in enumerate(texts) if not chinese or has_han(t)]
        shingles = truth.shingle_sets(truth.normalize_all([texts[k] for k in members], chinese))
        sets[chinese].update((ids[k], s) for k, s in zip(members, shingles))
        for a, b, _ in truth.similar_pairs(shingles):
            pairs.add(score._key(ids[members[a]], ids[members[b]]))

    def jaccard(a, b):
        both_han = a in sets[True] and b in sets[True]
        return max(truth.jaccard(sets[False][a], sets[False][b]),
                   truth.jaccard(sets[True][a], sets[True][b]) if both_han else 0.0)

    return records, pairs, jaccard
