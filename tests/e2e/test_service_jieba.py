"""`simdup serve` collections that fingerprint Chinese text with jieba: compat jieba-tfidf
(checked bit for bit against jieba.analyse.extract_tags voted like the Python simhash package)
and the jieba / keywords feature kinds."""

import logging

import pytest

from simhash_reference import vote

from service_harness import Server

jieba = pytest.importorskip("jieba")
jieba.setLogLevel(logging.WARNING)
import jieba.analyse  # noqa: E402

# A weather warning, the same warning with light edits (punctuation, one added word), and an
# unrelated sports report. Written for this test.
WARNING = ("今天上午，市气象台发布暴雨蓝色预警信号。预计未来六小时内，城区及北部山区将出现强降雨，"
           "局地伴有雷电和短时大风。请市民注意防范，尽量减少外出，驾车经过低洼路段时务必小心。")
EDITED = WARNING.replace("请市民注意防范，", "请广大市民注意防范！")
SPORTS = ("新赛季足球联赛昨晚揭幕，主队凭借下半场的两粒进球逆转取胜。主教练在赛后发布会上表示，"
          "球员们展现了顽强的斗志，但防守端仍有不少问题需要改进。")


def expected_fp(text):
    return f"{vote(jieba.analyse.extract_tags(text, topK=20, withWeight=True)):016x}"


@pytest.fixture
def client(tmp_path):
    s = Server(["--data", str(tmp_path / "db")])
    c = s.client()
    yield c
    c.close()
    s.close()


def test_jieba_tfidf_collection_matches_extract_tags(client):
    # Fingerprints only: the edits are judged by the keywords, not by verification.
    status, body = client.request("PUT", "/v1/zh", {"compat": "jieba-tfidf", "window": "0",
                                                    "verify": "off"})
    assert status == 200, body
    status, body = client.post("/v1/zh/check-insert", {"id": "w1", "text": WARNING})
    assert status == 200, body
    assert body["status"] == "new" and body["fingerprint"] == expected_fp(WARNING)
    # The edits leave the keywords' relative weights and so the fingerprint unchanged.
    body = client.post("/v1/zh/check-insert", {"documents": [{"id": "w2", "text": EDITED},
                                                             {"id": "s1", "text": SPORTS}]})[1]
    first, second = body["results"]
    assert first["status"] == "duplicate"
    assert first["matches"] == [{"id": "w1", "distance": 0, "jaccard": None}]
    assert second["status"] == "new" and second["fingerprint"] == expected_fp(SPORTS)
    assert client.request("GET", "/v1/zh/stats")[1]["documents"] == 2


@pytest.mark.parametrize("features", ["jieba", "keywords"])
def test_jieba_feature_kinds(client, features):
    status, body = client.request("PUT", "/v1/zh", {"features": features, "top_k": 10,
                                                    "window": "0"})
    assert status == 200, body
    settings = client.request("GET", "/v1/zh/stats")[1]["collection"]
    assert settings["features"] == features and settings["top_k"] == 10
    a = client.post("/v1/zh/check-insert", {"id": "w1", "text": WARNING})[1]
    b = client.post("/v1/zh/check-insert", {"id": "s1", "text": SPORTS})[1]
    assert a["status"] == "new" and b["status"] == "new"
    # Same words, other punctuation: a duplicate of the first document.
    again = client.post("/v1/zh/check", {"id": "q", "text": WARNING.replace("，", "。")})[1]
    assert again["status"] == "duplicate" and again["matches"][0]["id"] == "w1"


def test_unknown_feature_kind_is_refused(client):
    status, body = client.request("PUT", "/v1/zh", {"features": "letters"})
    assert status == 400 and "features" in body["error"]["message"]
