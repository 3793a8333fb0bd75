"""TF-IDF keywords (compat=jieba-tfidf) against jieba.analyse.extract_tags on real Chinese
documents (manpages-zh), the SimHash of those keywords bit for bit, and `simdup idf build`."""

import logging
import math

import pytest

from simhash_reference import vote

import jieba_corpus
from cli_harness import jsonl, run, write_jsonl

jieba = pytest.importorskip("jieba")
jieba.setLogLevel(logging.WARNING)
import jieba.analyse  # noqa: E402
from jieba.analyse.tfidf import TFIDF  # noqa: E402

pytestmark = pytest.mark.skipif(not jieba_corpus.available(), reason="manpages-zh not installed")

DOCS = 200  # manual pages used here; bench/e2e measures the corpus


def same_up_to_ties(expected, got):
    """Same words in the same order, except that words of equal weight may swap."""
    if len(expected) != len(got):
        return False
    for (ew, ex), (gw, gx) in zip(expected, got):
        if not math.isclose(ex, gx, rel_tol=1e-12):
            return False
    key = lambda pairs: sorted((round(x, 12), w) for w, x in pairs)  # noqa: E731
    return key(expected) == key(got)


@pytest.fixture(scope="module")
def docs():
    return [text for _, text in jieba_corpus.documents(limit=DOCS)]


@pytest.fixture
def docs_file(tmp_path, docs):
    return write_jsonl(tmp_path / "docs.jsonl", [{"id": i, "text": t} for i, t in enumerate(docs)])


def test_top20_keywords_match_extract_tags(docs, docs_file):
    out = jsonl(run(["features", "--compat", "jieba-tfidf", "--top-k", "20", docs_file], check=0,
                    timeout=600))
    expected = [jieba.analyse.extract_tags(d, topK=20, withWeight=True) for d in docs]
    got = [[tuple(f) for f in o["features"]] for o in out]
    exact = sum(1 for e, g in zip(expected, got) if [w for w, _ in e] == [w for w, _ in g])
    close = [(i, e, g) for i, (e, g) in enumerate(zip(expected, got)) if not same_up_to_ties(e, g)]
    assert len(close) <= 0.01 * len(docs), f"differences: {close[:3]}"
    assert exact >= 0.99 * len(docs)


def test_default_top_k_is_jiebas_twenty(docs, docs_file):
    out = jsonl(run(["features", "--compat", "jieba-tfidf", docs_file], check=0, timeout=600))
    assert max(len(o["features"]) for o in out) == 20


def test_compat_fingerprint_is_simhash_of_the_keywords(docs, docs_file):
    out = jsonl(run(["fingerprint", "--compat", "jieba-tfidf", "--top-k", "20", docs_file],
                    check=0, timeout=600))
    expected = [vote(jieba.analyse.extract_tags(d, topK=20, withWeight=True)) for d in docs]
    same = sum(1 for e, o in zip(expected, out) if o["fingerprint"] == f"{e:016x}")
    assert same >= 0.99 * len(docs)


def test_keywords_feature_kind_uses_jieba_idf(tmp_path):
    doc = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "text": "我们研究中文分词，中文分词很有用。"}])
    out = jsonl(run(["features", "--features", "keywords", "--top-k", "3", doc], check=0))
    assert [w for w, _ in out[0]["features"]] == [
        w for w, _ in jieba.analyse.extract_tags("我们研究中文分词，中文分词很有用。", topK=3,
                                                 withWeight=True)]


def python_df(docs):
    stop = TFIDF().stop_words
    df = {}
    for d in docs:
        for w in {w for w in jieba.cut(d) if len(w.strip()) >= 2 and w.lower() not in stop}:
            df[w] = df.get(w, 0) + 1
    return df


def read_idf(path):
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, value = line.split(" ")
        table[word] = float(value)
    return table


def test_idf_build_counts_documents_like_jieba(tmp_path, docs):
    subset = docs[:80]
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": i, "text": t} for i, t in enumerate(subset)])
    out = tmp_path / "idf.txt"
    run(["idf", "build", "--compat", "jieba-tfidf", "-o", out, path], check=0, timeout=600)
    built = read_idf(out)
    df = python_df(subset)
    assert built.keys() == df.keys()
    for w, n in df.items():
        assert math.isclose(built[w], math.log(len(subset) / n), rel_tol=1e-12), w

    # The table works as --idf, with jieba's reading of it (median for unknown words).
    probe = write_jsonl(tmp_path / "p.jsonl", [{"id": 0, "text": docs[100]}])
    got = jsonl(run(["features", "--compat", "jieba-tfidf", "--idf", out, probe], check=0))
    ref = TFIDF(idf_path=str(out)).extract_tags(docs[100], topK=20, withWeight=True)
    assert same_up_to_ties(ref, [tuple(f) for f in got[0]["features"]])


def test_idf_build_memory_budget_keeps_frequent_words(tmp_path, docs):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": i, "text": t} for i, t in enumerate(docs)])
    out = tmp_path / "idf.txt"
    proc = run(["idf", "build", "--compat", "jieba-tfidf", "--max-terms", "1000", "-o", out, path],
               check=0, timeout=600)
    assert "dropped" in proc.stderr.decode()
    built = read_idf(out)
    assert 0 < len(built) <= 1000
    df = python_df(docs)
    # The most common words survive pruning with their exact counts when nothing of theirs
    # was ever dropped; at worst they are undercounted, never overcounted.
    common = sorted(df, key=lambda w: -df[w])[:50]
    for w in common:
        assert w in built
        assert built[w] >= math.log(len(docs) / df[w]) - 1e-12


def test_idf_build_rejects_empty_input(tmp_path):
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    proc = run(["idf", "build", "-o", tmp_path / "x.txt", empty], check=1)
    assert "no documents" in proc.stderr.decode()
