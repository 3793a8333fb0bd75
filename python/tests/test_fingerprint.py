"""simdup.Fingerprinter / simdup.fingerprint: golden values, input types, bad input, options."""

import json
import threading

import numpy as np
import pandas as pd
import pytest

import simdup
from conftest import GOLDEN, jsonl_lines, run_cli

# The golden texts are fingerprinted as given (no normalisation), like their generator does.
RAW = dict(no_nfkc=True, no_casefold=True, no_t2s=True, keep_punctuation=True)


def golden_rows():
    rows = [json.loads(l) for l in (GOLDEN / "default_simhash.jsonl").read_text("utf-8").splitlines()]
    return [r for r in rows if "text" in r]


@pytest.mark.parametrize("row", golden_rows(), ids=lambda r: f"{r['hash']}-{r['width']}-{r['text'][:12]}")
def test_default_pipeline_matches_independent_golden(row):
    fp = simdup.Fingerprinter(hash=row["hash"], shingle_width=row["width"], **RAW)
    values, status = fp.fingerprint([row["text"]])
    assert values.dtype == np.uint64 and status.dtype == np.uint8
    assert status[0] == simdup.OK
    assert simdup.to_hex(values[0]) == row["fingerprint"]


def test_python_simhash_mode_matches_golden():
    rows = [json.loads(l) for l in (GOLDEN / "python_simhash.jsonl").read_text("utf-8").splitlines()]
    texts = [r["text"] for r in rows if "text" in r]
    want = [int(r["fingerprint"], 16) for r in rows if "text" in r]
    values, status = simdup.Fingerprinter(compat="python-simhash").fingerprint(texts)
    # python-simhash keeps the package's value even for texts without features.
    assert values.tolist() == want
    assert status[texts.index("")] == simdup.TOO_SHORT


def not_pages(records):
    """The records that are not HTML pages: the CLI normalises a page as HTML by itself
    (document_is_html), Python only when asked (html=True; test_same_fingerprints.py)."""
    return [r for r in records if not r["text"].lstrip()[:9].lower() == "<!doctype"]


def test_same_values_as_the_cli(sample_records, tmp_path):
    texts = [r["text"] for r in not_pages(sample_records)[:300]]
    proc = run_cli(["fingerprint", "--input-format", "jsonl", "-"],
                   input="".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)).encode())
    cli = [r["fingerprint"] for r in jsonl_lines(proc.stdout)]
    values, status = simdup.Fingerprinter().fingerprint(texts)
    ours = [simdup.to_hex(v) if s == simdup.OK else None for v, s in zip(values.tolist(), status)]
    assert ours == cli


def test_input_types_give_the_same_values():
    texts = ["The quick brown fox jumps over the lazy dog", "今天天气很好，我们去公园散步吧", "x" * 50]
    want = simdup.fingerprint(texts)
    assert simdup.fingerprint(tuple(texts)).tolist() == want.tolist()
    assert simdup.fingerprint(iter(texts)).tolist() == want.tolist()
    assert simdup.fingerprint(np.array(texts)).tolist() == want.tolist()
    assert simdup.fingerprint(np.array(texts, dtype=object)).tolist() == want.tolist()
    assert simdup.fingerprint(pd.Series(texts)).tolist() == want.tolist()
    assert simdup.fingerprint([t.encode() for t in texts]).tolist() == want.tolist()
    assert simdup.fingerprint([bytearray(t.encode()) for t in texts]).tolist() == want.tolist()
    assert simdup.fingerprint([]).shape == (0,)


def test_threads_do_not_change_values(sample_records):
    texts = [r["text"] for r in sample_records] * 3
    one = simdup.fingerprint(texts, threads=1)
    many = simdup.fingerprint(texts, threads=4)
    assert one.tolist() == many.tolist()


def test_short_texts_have_status_and_no_value():
    values, status = simdup.Fingerprinter(min_features=5).fingerprint(["", "ab", "a longer text here"])
    assert status.tolist() == [simdup.TOO_SHORT, simdup.TOO_SHORT, simdup.OK]
    assert values[0] == 0 and values[1] == 0 and values[2] != 0


def test_bad_items_are_type_errors_naming_the_position():
    fp = simdup.Fingerprinter()
    with pytest.raises(TypeError, match=r"texts\[1\] is None"):
        fp.fingerprint(["a", None])
    with pytest.raises(TypeError, match=r"texts\[0\] must be str or bytes, not int"):
        fp.fingerprint([3])
    with pytest.raises(TypeError, match="not a single str"):
        fp.fingerprint("just one text")
    with pytest.raises(TypeError):
        fp.fingerprint(None)
    with pytest.raises(TypeError):
        fp.fingerprint_one(None)


def test_lone_surrogates_and_invalid_utf8_are_repaired():
    fp = simdup.Fingerprinter()
    values, status = fp.fingerprint(["abc\ud800def ghi", b"abc\xffdef ghi", "abc\U0010ffff"])
    assert status.tolist() == [simdup.OK] * 3
    # The replacement character is a symbol, removed like punctuation: both equal "abc def ghi".
    assert values[0] == values[1] == simdup.fingerprint(["abc def ghi"])[0]
    assert fp.features("\udfff") == []


def test_huge_string():
    text = ("All happy families are alike; each unhappy family is unhappy in its own way. " * 400_000)
    assert len(text) > 30_000_000
    values, status = simdup.Fingerprinter().fingerprint([text])
    assert status[0] == simdup.OK and values[0] != 0
    assert simdup.fingerprint([text.encode()])[0] == values[0]


def test_option_errors():
    with pytest.raises(TypeError, match="unknown option 'shingle_widht'"):
        simdup.Fingerprinter(shingle_widht=3)
    with pytest.raises(ValueError, match="shingle_width must be in 1..1024"):
        simdup.Fingerprinter(shingle_width=0)
    with pytest.raises(ValueError, match="features: unknown value 'letters'"):
        simdup.Fingerprinter(features="letters")
    with pytest.raises(TypeError, match="html must be a bool"):
        simdup.Fingerprinter(html="yes")
    with pytest.raises(ValueError, match="needs idf=FILE"):
        simdup.Fingerprinter(weighting="tfidf")
    with pytest.raises(FileNotFoundError, match="/nonexistent/idf.txt"):
        simdup.Fingerprinter(weighting="tfidf", idf="/nonexistent/idf.txt")
    with pytest.raises(OSError):
        simdup.Fingerprinter(features="jieba", user_dict="/nonexistent/user.dict")


def test_setting_errors_carry_the_setting():
    """A bad setting raises simdup.ParameterError (a ValueError) with the setting as data, the
    same fields the library's error_info::parameter holds; other errors stay what they were."""
    with pytest.raises(simdup.ParameterError) as e:
        simdup.Fingerprinter(shingle_width=0)
    assert isinstance(e.value, ValueError)
    assert (e.value.parameter, e.value.value, e.value.allowed, e.value.reason, e.value.needs) == \
        ("shingle_width", "0", "1..1024", "must be in 1..1024, got 0", "")
    with pytest.raises(simdup.ParameterError) as e:
        simdup.Fingerprinter(features="letters")
    assert (e.value.parameter, e.value.value) == ("features", "letters")
    assert e.value.allowed == "shingles, words, word-ngrams, jieba, keywords"
    with pytest.raises(simdup.ParameterError) as e:
        simdup.Fingerprinter(weighting="tfidf")
    assert (e.value.parameter, e.value.value, e.value.needs) == ("weighting", "tfidf", "idf")
    assert str(e.value) == "weighting='tfidf' needs idf=FILE"
    with pytest.raises(simdup.ParameterError) as e:  # from the library's detection profile
        simdup.dedup([{"id": 1, "text": "some text"}], k=40)
    assert (e.value.parameter, e.value.value, e.value.allowed) == ("k", "40", "0..32")
    with pytest.raises(simdup.ParameterError) as e:
        simdup.clusters(np.array([1, 2], dtype=np.uint64), k=1, mode="ring")
    assert (e.value.parameter, e.value.value) == ("mode", "ring")
    with pytest.raises(TypeError) as e:  # a wrong type is no ParameterError
        simdup.Fingerprinter(html="yes")
    assert not isinstance(e.value, simdup.ParameterError)


def test_options_change_the_pipeline():
    text = ["Hello, WORLD! Hello world again and again"]
    base = simdup.fingerprint(text)
    assert simdup.fingerprint(text, no_casefold=True)[0] != base[0]
    assert simdup.fingerprint(text, shingle_width=3)[0] != base[0]
    assert simdup.fingerprint(text, hash="fnv1a")[0] != base[0]
    assert simdup.fingerprint(text, features="word-ngrams", ngram=1)[0] == \
        simdup.fingerprint(text, features="words")[0]


def test_features_heaviest_first():
    feats = simdup.Fingerprinter(features="words").features("b a b c b a")
    assert feats[0] == ("b", 3.0) and feats[1] == ("a", 2.0) and feats[2] == ("c", 1.0)


def test_supplied_features_python_simhash_rules():
    from gen_python_simhash import simhash_features
    fp = simdup.Fingerprinter(compat="python-simhash")
    assert fp.fingerprint_features(["aaa", "bbb"])[0] == simhash_features(["aaa", "bbb"])
    assert fp.fingerprint_features({"x": 2, "y": 1})[0] == simhash_features([("x", 2), ("y", 1)])


def test_releases_the_gil():
    """A Python thread keeps running while fingerprint works in C++: some call sees a ticker
    thread tick five times or more. A call that held the GIL would let it tick at most twice
    (between setting `inside` and entering C++, and after leaving it). The call is repeated
    until one qualifies, so a loaded machine that starves the ticker does not fail the test;
    no wall-clock bound."""
    texts = ["some words that repeat and repeat " * 200] * 1000
    ticks = [0]
    inside = threading.Event()
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            if inside.is_set():
                ticks[0] += 1
            stop.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    best = 0
    try:
        for _ in range(200):
            ticks[0] = 0
            inside.set()
            simdup.fingerprint(texts, threads=1)
            inside.clear()
            best = max(best, ticks[0])
            if best >= 5:
                break
    finally:
        stop.set()
        t.join()
    assert best >= 5


def test_option_sets_equal_the_cli(sample_records, tmp_path):
    """Each option maps to the CLI flag of the same name: same values on the same texts."""
    user = tmp_path / "user.dict"
    user.write_text("天安门广场 100 ns\n近似重复 50\n", encoding="utf-8")
    stop = tmp_path / "stop.txt"
    stop.write_text("the\nof\n的\n", encoding="utf-8")
    idf = tmp_path / "idf.txt"
    idf.write_text("quick 5.0\nfox 7.5\n天安门 9.0\n", encoding="utf-8")
    texts = [r["text"][:600] for r in not_pages(sample_records)[:120]] + [
        "我爱北京天安门广场，近似重复检测", "The QUICK brown fox, the lazy dog; 2024-05-01!"]
    option_sets = [
        ({"features": "jieba", "user_dict": [str(user)]}, ["--features", "jieba", "--user-dict", user]),
        ({"features": "keywords", "top_k": 5}, ["--features", "keywords", "--top-k", "5"]),
        ({"features": "words", "weighting": "tfidf", "idf": str(idf), "stopwords": str(stop)},
         ["--features", "words", "--weighting", "tfidf", "--idf", idf, "--stopwords", stop]),
        ({"features": "word-ngrams", "ngram": 3, "min_token_length": 2, "weighting": "binary"},
         ["--features", "word-ngrams", "--ngram", "3", "--min-token-length", "2", "--weighting", "binary"]),
        ({"html": True, "strip_digits": True, "no_t2s": True, "hash": "md5", "min_features": 3},
         ["--html", "--strip-digits", "--no-t2s", "--hash", "md5", "--min-features", "3"]),
        ({"compat": "jieba-tfidf", "top_k": 8}, ["--compat", "jieba-tfidf", "--top-k", "8"]),
    ]
    data = "".join(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n" for i, t in enumerate(texts)).encode()
    for options, flags in option_sets:
        cli = [r["fingerprint"] for r in jsonl_lines(run_cli(["fingerprint", *flags, "--input-format", "jsonl", "-"], input=data).stdout)]
        values, status = simdup.Fingerprinter(**options).fingerprint(texts)
        ours = [simdup.to_hex(v) if s == simdup.OK else None for v, s in zip(values.tolist(), status)]
        assert ours == cli, options
