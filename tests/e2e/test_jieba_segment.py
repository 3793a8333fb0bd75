"""simdup's jieba segmentation against Python jieba 0.42 (Debian's python3-jieba) on real
Chinese text (manpages-zh), plus bad input through the CLI. The full corpus is measured by
bench/e2e/jieba_vs_python.py; here a deterministic sample keeps the test fast under ASan."""

import logging

import pytest

import jieba_corpus
from cli_harness import jsonl, run, write_jsonl

jieba = pytest.importorskip("jieba")
jieba.setLogLevel(logging.WARNING)

pytestmark = pytest.mark.skipif(not jieba_corpus.available(), reason="manpages-zh not installed")

SAMPLE_EVERY = 4  # every 4th sentence of the corpus: ~15k sentences


def segment(tmp_path, texts, *extra):
    path = write_jsonl(tmp_path / "in.jsonl", [{"id": i, "text": t} for i, t in enumerate(texts)])
    out = jsonl(run(["segment", *extra, path], check=0, timeout=600))
    assert [o["id"] for o in out] == list(range(len(texts)))
    return [o["words"] for o in out]


def test_sentences_match_python_jieba(tmp_path):
    sents = jieba_corpus.sentences(jieba_corpus.documents())[::SAMPLE_EVERY]
    assert len(sents) > 5000
    got = segment(tmp_path, sents)
    expected = [jieba.lcut(s) for s in sents]
    diffs = [(s, e, g) for s, e, g in zip(sents, expected, got) if e != g]
    rate = 1 - len(diffs) / len(sents)
    assert rate >= 0.995, f"{rate:.4%} identical; first differences: {diffs[:5]}"


def test_whole_documents_match_python_jieba(tmp_path):
    docs = [text for _, text in jieba_corpus.documents(limit=40)]
    got = segment(tmp_path, docs)
    same = sum(1 for d, g in zip(docs, got) if jieba.lcut(d) == g)
    assert same >= 0.99 * len(docs)


def test_without_hmm_matches_python_jieba(tmp_path):
    sents = jieba_corpus.sentences(jieba_corpus.documents(limit=60))
    got = segment(tmp_path, sents, "--no-hmm")
    same = sum(1 for s, g in zip(sents, got) if jieba.lcut(s, HMM=False) == g)
    assert same >= 0.995 * len(sents)


def test_mixed_scripts_emoji_and_control_characters(tmp_path):
    texts = [
        "Emoji 😀👍🏽 和中文🎉混在一起，还有 ZWJ 👨‍👩‍👧",
        "Ελληνικά, русский, العربية, עברית 和 中文 混排",
        "日本語のテキスト、한국어、ภาษาไทย",
        "tabs\tand\r\nCRLF\rand\x0bvertical\x1f分隔符",
        "数学符号∑∫√∞以及全角ＡＢＣ和半角abc",
        "\u200b零宽空格\u3000全角空格\u00a0不换行空格",
    ]
    got = segment(tmp_path, texts)
    assert got == [jieba.lcut(t) for t in texts]
    for t, words in zip(texts, got):
        assert "".join(words) == t


def test_invalid_utf8_never_crashes(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"\xe4\xb8\xad\xe6\x96\x87\xff\xfe\xe4\xb8 abc \xed\xa0\x80 \xf0\x9f\x98\n")
    proc = run(["segment", "--input-format", "text", path], timeout=120)
    assert proc.returncode in (0, 3), proc.stderr.decode(errors="replace")
    out = jsonl(proc)
    assert len(out) == 1 and out[0]["words"][0] == "中文"


def test_missing_and_corrupt_dictionary_are_clear_errors(tmp_path):
    doc = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "text": "中文分词"}])
    missing = run(["segment", "--jieba-dict", tmp_path / "nowhere", doc], check=1)
    assert str(tmp_path / "nowhere" / "jieba.bin") in missing.stderr.decode()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "jieba.bin").write_bytes(b"SIMDUPJB" + b"\x00" * 40)
    corrupt = run(["segment", "--jieba-dict", tmp_path / "bad", doc], check=1)
    err = corrupt.stderr.decode()
    assert "corrupt" in err and str(tmp_path / "bad" / "jieba.bin") in err
    for args in (["fingerprint", "--features", "jieba"], ["features", "--compat", "jieba-tfidf"]):
        proc = run([*args, "--jieba-dict", tmp_path / "bad", doc], check=1)
        assert str(tmp_path / "bad" / "jieba.bin") in proc.stderr.decode()


def test_environment_variable_selects_the_dictionary(tmp_path):
    doc = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "text": "中文分词"}])
    proc = run(["segment", doc], check=1, env={"SIMDUP_JIEBA_DIR": str(tmp_path / "none")})
    assert str(tmp_path / "none" / "jieba.bin") in proc.stderr.decode()


def test_user_dictionary_matches_python_jieba(tmp_path):
    user = tmp_path / "user.txt"
    user.write_text("云端计算平台 5 n\n石墨烯电池\n分开来 0\n", encoding="utf-8")
    texts = ["云端计算平台上的石墨烯电池研究可以分开来做", "我们分开来走吧"]
    tok = jieba.Tokenizer()
    tok.load_userdict(str(user))
    assert segment(tmp_path, texts, "--user-dict", user) == [tok.lcut(t) for t in texts]
