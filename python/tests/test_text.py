"""segment / keywords against Python jieba itself (python3-jieba), explain against the CLI."""

import json

import pytest

import simdup
from conftest import run_cli

jieba = pytest.importorskip("jieba")
import jieba.analyse  # noqa: E402

jieba.setLogLevel(60)

TEXTS = [
    "我爱北京天安门，天安门上太阳升。",
    "今天天气很好，我们去公园散步吧！",
    "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
    "Python编程语言 version 3.11 发布了, simdup 近似重复检测",
    "他来到了网易杭研大厦",
    "",
]


def corpus(sample_records):
    zh = [r["text"][:400] for r in sample_records if any("\u4e00" <= c <= "\u9fff" for c in r["text"][:200])]
    return TEXTS + zh[:40]


def test_segment_equals_jieba(sample_records):
    for text in corpus(sample_records):
        assert simdup.segment(text) == list(jieba.cut(text)), text
    assert simdup.segment("他来到了网易杭研大厦", hmm=False) == list(jieba.cut("他来到了网易杭研大厦", HMM=False))


def test_keywords_equal_extract_tags(sample_records):
    for text in corpus(sample_records):
        ours = simdup.keywords(text, k=10)
        theirs = jieba.analyse.extract_tags(text, topK=10, withWeight=True)
        assert [w for w, _ in ours] == [w for w, _ in theirs], text
        for (_, a), (_, b) in zip(ours, theirs):
            assert a == pytest.approx(b, rel=1e-12)


def test_segment_bad_input():
    assert simdup.segment(b"\xe4\xbd\xa0\xff") [0] == "你"  # invalid byte: a one-byte word
    assert "".join(simdup.segment("a\ud800b")) != ""
    with pytest.raises(TypeError):
        simdup.segment(None)
    with pytest.raises(FileNotFoundError):
        simdup.segment("你好", user_dict="/nonexistent/user.dict")
    with pytest.raises(ValueError):
        simdup.keywords("你好", k=0)


def test_explain_equals_the_cli():
    a = "The quick brown fox jumps over the lazy dog near the river bank."
    b = "The quick brown fox jumped over the lazy dog near the river bank!"
    for options, flags in (({}, []), ({"features": "words"}, ["--features", "words"])):
        cli = json.loads(run_cli(["explain", "--json", *flags, a, b]).stdout)
        ours = simdup.explain(a, b, **options)
        assert ours["a"] == cli["a"] and ours["b"] == cli["b"]
        assert ours["distance"] == cli["distance"]
        assert ours["differing_bits"] == cli["differing_bits"]
        assert [list(x) for x in ours["shared"]] == cli["shared"]
        assert [list(x) for x in ours["only_a"]] == cli["only_a"]
        assert [list(x) for x in ours["only_b"]] == cli["only_b"]
        for key in ("jaccard", "minhash_candidate", "duplicate", "layer", "reason"):
            assert ours[key] == cli[key], key
    short = simdup.explain("", "some text here")
    assert short["distance"] is None and short["a"]["status"] == "too_short"
