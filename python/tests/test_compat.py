"""simdup.compat against the simhash package's (v2.x) rules and its own test suite.

Golden values come from independent code: tests/data/golden (the stdlib reference of the
package's rules and its frozen vectors), the values the package's own tests assert, and a
general stdlib reference below (any f, reg, hashfunc), never from simdup's output."""

import collections
import hashlib
import json
import logging
import random
import re

import numpy as np
import pytest

from conftest import GOLDEN
from simdup.compat import Simhash, SimhashIndex

DEFAULT_REG = r'[\w\u4e00-\u9fcc]+'


def reference(value, f=64, reg=DEFAULT_REG, hashfunc=lambda b: hashlib.md5(b).digest()):
    """The package's value, from its documented rules, with the standard library only."""
    if isinstance(value, str):
        kept = ''.join(re.findall(reg, value.lower()))
        shingles = [kept[i:i + 4] for i in range(max(len(kept) - 3, 1))]
        counts = collections.Counter(shingles)
        weighted = [(k, counts[k]) for k in sorted(counts)]
    else:
        if isinstance(value, dict):
            value = value.items()
        weighted, w = [], 1
        for item in value:
            if not isinstance(item, str):
                item, w = item
            weighted.append((item, w))  # a plain token reuses the last pair's weight
    total = 0
    sums = [0] * f
    for feature, w in weighted:
        total += w
        h = hashfunc(feature.encode('utf-8'))
        h = h & ((1 << f) - 1) if isinstance(h, int) else int.from_bytes(h[-(f // 8):], 'big')
        if isinstance(w, int) and w <= 0:
            continue  # the package repeats the digest w times: nothing
        for bit in range(f):
            if h >> bit & 1:
                sums[bit] += w
    return sum(1 << bit for bit in range(f) if sums[bit] > total / 2)


def golden_rows():
    return [json.loads(l) for l in (GOLDEN / "python_simhash.jsonl").read_text("utf-8").splitlines()]


@pytest.mark.parametrize("row", golden_rows(), ids=lambda r: str(r.get("text", r.get("features")))[:20])
def test_frozen_golden_vectors(row):
    value = row["text"] if "text" in row else row["features"]
    assert Simhash(value).value == int(row["fingerprint"], 16)


# --- the package's own test suite (tests/test_simhash.py of simhash 2.x), ported ------------

def test_int_value():
    assert Simhash(0).value == 0
    assert Simhash(4390059585430954713).value == 4390059585430954713
    assert Simhash(9223372036854775808).value == 9223372036854775808


def test_value():
    assert Simhash(['aaa', 'bbb']).value == 57087923692560392


def test_distance():
    sh = Simhash('How are you? I AM fine. Thanks. And you?')
    sh2 = Simhash('How old are you ? :-) i am fine. Thanks. And you?')
    assert sh.distance(sh2) > 0
    sh3 = Simhash(sh2)
    assert sh2.distance(sh3) == 0
    assert Simhash('1').distance(Simhash('2')) != 0


def test_chinese():
    sh1 = Simhash(u'你好　世界！　　呼噜。')
    sh2 = Simhash(u'你好，世界　呼噜')
    sh4 = Simhash(u'How are you? I Am fine. ablar ablar xyz blar blar blar blar blar blar blar Thanks.')
    sh5 = Simhash(u'How are you i am fine.ablar ablar xyz blar blar blar blar blar blar blar than')
    sh6 = Simhash(u'How are you i am fine.ablar ablar xyz blar blar blar blar blar blar blar thank')
    assert sh1.distance(sh2) == 0
    assert sh4.distance(sh6) < 3
    assert sh5.distance(sh6) < 3


def test_short():
    shs = [Simhash(s).value for s in ('aa', 'aaa', 'aaaa', 'aaaab', 'aaaaabb', 'aaaaabbb')]
    for i, a in enumerate(shs):
        for j, b in enumerate(shs):
            if i != j:
                assert a != b


def tfidf_rows(data):
    """scikit-learn's TfidfVectorizer defaults (not installable here), by their definition:
    token pattern (?u)\\b\\w\\w+\\b on lowercased text, smooth idf ln((1+n)/(1+df)) + 1, l2
    rows; features in vocabulary (alphabetical) order."""
    token = re.compile(r"(?u)\b\w\w+\b")
    docs = [token.findall(d.lower()) for d in data]
    vocab = sorted({w for d in docs for w in d})
    n = len(docs)
    idf = {w: np.log((1 + n) / (1 + sum(1 for d in docs if w in d))) + 1 for w in vocab}
    rows = []
    for d in docs:
        c = collections.Counter(d)
        words = [w for w in vocab if w in c]
        vals = np.array([c[w] * idf[w] for w in words], dtype=np.float64)
        vals = vals / np.sqrt(np.sum(vals * vals))
        rows.append(list(zip(words, vals.tolist())))
    return rows


def test_sparse_features():
    data = [
        'How are you? I Am fine. blar blar blar blar blar Thanks.',
        'How are you i am fine. blar blar blar blar blar than',
        'This is simhash test.',
        'How are you i am fine. blar blar blar blar blar thank1',
    ]
    rows = tfidf_rows(data)
    shs = [Simhash(iter(r)) for r in rows]  # (token, weight) tuples from an iterator
    assert shs[0].distance(shs[1]) != 0
    assert shs[2].distance(shs[3]) != 0
    assert shs[0].distance(shs[1]) < shs[2].distance(shs[3])
    dict_features = dict(rows[0])
    assert Simhash(dict_features).value == 17583409636488780916
    assert Simhash(dict_features).value != Simhash(data[0]).value


def test_equality_comparison():
    a = Simhash('My name is John')
    b = Simhash('My name is John')
    c = Simhash('My name actually is Jane')
    assert a == b
    assert a != c


def test_custom_hashfunc():
    def int_hashfunc(x):
        return int(hashlib.md5(x).hexdigest(), 16)

    def sha_hashfunc(x):
        return hashlib.sha256(x).digest()

    a = Simhash('My name is John')
    b = Simhash('My name is John', hashfunc=int_hashfunc)
    c = Simhash('My name is John', hashfunc=sha_hashfunc)
    assert a == b
    assert a != c
    assert c.value == reference('My name is John', hashfunc=sha_hashfunc)


def test_large_inputs():
    many = [str(i) for i in range(int(Simhash.batch_size * 2.5))]
    many_large = [(f, Simhash.large_weight_cutoff * i) for i, f in enumerate(many)]
    assert Simhash(many).value == 7984652473404407437
    assert Simhash(many_large).value == 3372825719632739723


class TestSimhashIndexPackageSuite:
    data = {
        1: 'How are you? I Am fine. blar blar blar blar blar Thanks.',
        2: 'How are you i am fine. blar blar blar blar blar than',
        3: 'This is simhash test.',
        4: 'How are you i am fine. blar blar blar blar blar thank1',
    }

    def test_get_near_dup(self):
        index = SimhashIndex([(str(k), Simhash(v)) for k, v in self.data.items()], k=10)
        s1 = Simhash(u'How are you i am fine.ablar ablar xyz blar blar blar blar blar blar blar thank')
        assert len(index.get_near_dups(s1)) == 3
        index.delete('1', Simhash(self.data[1]))
        assert len(index.get_near_dups(s1)) == 2
        index.delete('1', Simhash(self.data[1]))
        assert len(index.get_near_dups(s1)) == 2
        index.add('1', Simhash(self.data[1]))
        assert len(index.get_near_dups(s1)) == 3
        index.add('1', Simhash(self.data[1]))
        assert len(index.get_near_dups(s1)) == 3


# --- beyond the package's suite -------------------------------------------------------------

def random_texts(n, seed=1):
    rng = random.Random(seed)
    words = ("the of and to in is was for on that with as by at from his her it an were are "
             "which this be or has had not but one new after first two who they have their "
             "中国 北京 天气 今天 我们 公园 散步 Straße ΟΔΟΣ café naïve 123 4567").split()
    base = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 60))) for _ in range(n // 2)]
    edits = []
    for t in base:
        w = t.split()
        if w:
            w[rng.randrange(len(w))] = rng.choice(words)
        edits.append(" ".join(w) + rng.choice(["", "!", " ok", " THE END"]))
    return base + edits


def test_texts_match_the_reference():
    for t in random_texts(300):
        assert Simhash(t).value == reference(t), t


@pytest.mark.parametrize("f", [8, 32, 128])
def test_other_widths_match_the_reference(f):
    for t in random_texts(20, seed=f):
        assert Simhash(t, f=f).value == reference(t, f=f)
    assert Simhash(["a", ("b", 3)], f=f).value == reference(["a", ("b", 3)], f=f)
    with pytest.raises(ValueError, match="multiple of 8"):
        Simhash("x", f=f + 1)


def test_custom_reg_and_subclassed_tokenizer():
    t = "Hello, World! 你好，世界 foo_bar-baz"
    assert Simhash(t, reg=r'\w').value == reference(t, reg=r'\w')
    assert Simhash(t, reg=re.compile(r'[a-z]+')).value == reference(t, reg=r'[a-z]+')

    class Words(Simhash):
        def _tokenize(self, content):
            return content.lower().split()

    counts = collections.Counter(t.lower().split())
    assert Words(t).value == reference([(k, counts[k]) for k in sorted(counts)])


def test_weight_corners():
    cases = [
        [("a", 0), ("b", -3), ("c", 2)],          # ints <= 0 count in the total only
        [("a", -1.5), ("b", 2.0), ("c", 1)],       # negative floats subtract
        [("a", -2.0), ("b", 5)],                   # an integral negative float subtracts too
        [("x", 0.5), ("y", 0.25), ("z", 1.5)],
        [("a", 2), "b", "c"],                      # plain tokens reuse the last weight
        [("big", 2**60), ("small", 1)],            # exact big-int sums
        [("a", True), ("b", 3)],
        [],
    ]
    for features in cases:
        assert Simhash(features).value == reference(features), features
    assert Simhash({"k": 3, "v": 1}).value == reference({"k": 3, "v": 1})
    with pytest.raises(TypeError, match="non-int"):
        Simhash([("a", 1.5), "b"])  # the package multiplies bytes by a float here


def test_bad_parameters():
    with pytest.raises(Exception, match="Bad parameter with type"):
        Simhash(None)
    with pytest.raises(Exception, match="Bad parameter with type"):
        Simhash(1.5)
    with pytest.raises(TypeError):
        Simhash(b"bytes are iterables of ints")
    with pytest.raises(UnicodeEncodeError):
        Simhash(["ok", "\ud800"])
    # In text the surrogate is not a word character: it disappears, as in the package.
    assert Simhash("abc\ud800def").value == reference("abcdef")


def test_attributes_and_copies():
    s = Simhash("hello world")
    assert (s.f, s.f_bytes, s.reg, s.hashfunc_returns_int) == (64, 8, DEFAULT_REG, False)
    assert s.hashfunc(b"a") == hashlib.md5(b"a").digest() and s.log.name == "simhash"
    # Another setting is the instance's own and leaves the defaults of the others alone.
    log = logging.getLogger("mine")
    s32 = Simhash("hello world", f=32, log=log)
    assert (s32.f, s32.f_bytes, s32.log, s.f, s.log.name) == (32, 4, log, 64, "simhash")
    assert s32.value == reference("hello world", f=32)
    assert Simhash(s).value == s.value and Simhash(s) == s
    assert Simhash.large_weight_cutoff == 50 and Simhash.batch_size == 200
    big = Simhash(3 << 64 | 5)
    assert big.value == 3 << 64 | 5 and big.distance(Simhash(5)) == 0
    with pytest.raises(TypeError):
        hash(s)  # the package defines __eq__ without __hash__


def brute_near(entries, q, k, f=64):
    mask = (1 << f) - 1
    return {obj for obj, v in entries if bin((v ^ q) & mask).count("1") <= k}


@pytest.mark.parametrize("k,f", [(0, 64), (2, 64), (3, 64), (6, 64), (2, 128), (40, 64)])
def test_index_matches_brute_force(k, f):
    texts = random_texts(300, seed=k + f)
    objs = [(i, Simhash(t, f=f)) for i, t in enumerate(texts)]
    index = SimhashIndex(objs, f=f, k=k)
    entries = [(str(i), s.value) for i, s in objs]
    for t in texts[:80]:
        q = Simhash(t, f=f)
        assert set(index.get_near_dups(q)) == brute_near(entries, q.value, k, f)
    # Deleting removes exactly the (id, simhash) entry; deleting with another simhash does not.
    index.delete(0, objs[0][1])
    index.delete(1, objs[2][1])
    entries = [e for e in entries if e[0] != "0"]
    q = objs[0][1]
    assert set(index.get_near_dups(q)) == brute_near(entries, q.value, k, f)
    index.add("x", q)
    assert "x" in index.get_near_dups(q)
    assert index.bucket_size() > 0
    assert list(index.get_keys(q)) and len(index.offsets) == k + 1


def test_index_ids_are_strings_and_values_masked():
    index = SimhashIndex([(7, Simhash(5)), ("a,b", Simhash(1 << 64 | 5))], k=0)
    assert sorted(index.get_near_dups(Simhash(5))) == ["7", "a,b"]
