"""`--user-dict` on the commands that fingerprint (features, fingerprint): jieba user
dictionaries reach the segmenter of the jieba feature kinds and of compat jieba-tfidf."""

import pytest

from cli_harness import jsonl, run, write_jsonl

pytest.importorskip("jieba")

TEXT = "云端计算平台上的石墨烯电池研究可以分开来做"


def features(tmp_path, *opts):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "text": TEXT}])
    out = jsonl(run(["features", *opts, path], check=0))
    return [tok for tok, _ in out[0]["features"]]


def test_user_dict_joins_words_for_jieba_features(tmp_path):
    plain = features(tmp_path, "--features", "jieba")
    assert "云端计算平台" not in plain and "石墨烯电池" not in plain
    a = tmp_path / "a.txt"
    a.write_text("云端计算平台 5 n\n", encoding="utf-8")
    b = tmp_path / "b.txt"
    b.write_text("石墨烯电池\n", encoding="utf-8")
    one = features(tmp_path, "--features", "jieba", "--user-dict", a)
    assert "云端计算平台" in one and "石墨烯电池" not in one
    both = features(tmp_path, "--features", "jieba", "--user-dict", a, "--user-dict", b)
    assert "云端计算平台" in both and "石墨烯电池" in both


def test_user_dict_reaches_keywords_and_fingerprints(tmp_path):
    user = tmp_path / "user.txt"
    user.write_text("云端计算平台 5 n\n", encoding="utf-8")
    kw = features(tmp_path, "--compat", "jieba-tfidf", "--user-dict", user)
    assert "云端计算平台" in kw
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "text": TEXT}])
    plain = jsonl(run(["fingerprint", "--features", "jieba", path], check=0))
    joined = jsonl(run(["fingerprint", "--features", "jieba", "--user-dict", user, path], check=0))
    assert plain[0]["fingerprint"] != joined[0]["fingerprint"]


def test_missing_user_dict_is_a_clear_error(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "text": TEXT}])
    missing = tmp_path / "no-such-dict.txt"
    proc = run(["fingerprint", "--features", "jieba", "--user-dict", missing, path])
    assert proc.returncode != 0
    assert str(missing) in proc.stderr.decode()
