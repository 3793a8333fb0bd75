#!/usr/bin/python3
"""Golden vectors for simdup's compat=python-simhash mode.

A small reference of the Python `simhash` package v2.x (Simhash(value) with its defaults),
written from its documented rules with the standard library only:

  text:     lowercase (str.lower); keep the concatenation of the matches of
            [\\w\\u4e00-\\u9fcc]+ ; width-4 shingles over code points
            ([s[i:i+4] for i in range(max(len(s) - 4 + 1, 1))]); weight = occurrences
  features: tokens (weight 1 each, repeats count again) or (token, weight) pairs
  hash:     int.from_bytes(md5(feature.encode('utf-8')).digest()[-8:], 'big')
  vote:     bit i set iff the total weight of features with bit i set > total weight / 2

Writes one JSON object per line: {"text": ..., "fingerprint": "<16 hex>"} or
{"features": [...], "fingerprint": ...}. Usage: gen_python_simhash.py [OUTPUT]
(default: python_simhash.jsonl next to this script).
"""

import collections
import hashlib
import json
import os
import re
import sys

PATTERN = re.compile(r'[\w\u4e00-\u9fcc]+')


def feature_hash(feature):
    return int.from_bytes(hashlib.md5(feature.encode('utf-8')).digest()[-8:], 'big')


def vote(weighted):
    total = 0
    sums = [0] * 64
    for feature, weight in weighted:
        total += weight
        h = feature_hash(feature)
        for bit in range(64):
            if (h >> bit) & 1:
                sums[bit] += weight
    return sum(1 << bit for bit in range(64) if sums[bit] > total / 2)


def simhash_text(text):
    kept = ''.join(PATTERN.findall(text.lower()))
    shingles = [kept[i:i + 4] for i in range(max(len(kept) - 4 + 1, 1))]
    return vote(collections.Counter(shingles).items())


def simhash_features(features):
    return vote((f, 1) if isinstance(f, str) else (f[0], f[1]) for f in features)


PARAGRAPH = (
    "The quick brown fox jumps over the lazy dog near the riverbank, while a small "
    "group of children watch from the old stone bridge. ")

TEXTS = [
    # empty, short and boundary lengths
    "", "a", "ab", "abc", "abcd", "abcde", "abcdef", "A", "   ", "\t\n",
    # punctuation and symbols only
    "!!!", "...,;:?", "---", "$%^&*()", "<>[]{}|\\/", "~`@#",
    # English
    "Hello, World!", "HeLLo WoRLD", "hello world", "How are you? I Am fine. blar blar blar blar blar Thanks.",
    "How are you i am fine. blar blar blar blar blar than",
    "This is simhash test.", "My name is John", "My name actually is Jane",
    "It's a dog's life, isn't it?", "e-mail: someone@example.com, http://example.org/a?b=c",
    # numbers and underscores
    "123", "1234567890", "3.14159 2.71828", "snake_case_variable_name", "__init__", "_", "a_b c_d",
    "Room 101, floor 7", "x² + y² = z²", "½ ¾ ⅓", "Ⅻ ⅻ ⅰⅱⅲ", "١٢٣ ٤٥٦", "०१२३",
    # accented Latin, composed and decomposed
    "Café naïve résumé", "CAFÉ NAÏVE RÉSUMÉ", "Cafe\u0301 nai\u0308ve", "Ångström Øre Ærø",
    "Straße STRASSE", "ẞ", "İstanbul ISTANBUL ıi", "Łódź Świętokrzyskie", "ǅemal ǈubav ǋ",
    # Greek: capital sigma lowercases to final sigma at the end of a word
    "ΟΔΟΣ", "ΟΔΟΣ ΟΔΟΣ.", "ΣΑΣ ΣΑΣ", "Σ", "ΑΣ'Α", "Ὀδυσσεύς ΟΔΥΣΣΕΥΣ", "ΣΑΣ.ΣΑΣ",
    # Cyrillic, Arabic, Hebrew, Devanagari, Thai
    "Привет, мир! ПРИВЕТ", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก",
    # Chinese, Japanese, Korean
    "你好世界", "中华人民共和国成立于1949年。", "我爱北京天安门，天安门上太阳升。",
    "今天天气很好，我们去公园散步吧！", "這是繁體中文的句子，請幫我轉換。",
    "龥龦鿌鿍鿿", "㐀㐁 𠀀𠀁", "ひらがな カタカナ ｶﾀｶﾅ", "한국어 문장입니다",
    # mixed scripts
    "Python编程语言 version 3.11 发布了", "simdup：近似重复检测 near-duplicate detection",
    "iPhone 15 Pro Max 手机 售价 9999 元", "COVID-19 疫情 2020年",
    # full-width forms (kept as is by the package: it does not apply NFKC)
    "ＡＢＣ１２３", "Ｈｅｌｌｏ，Ｗｏｒｌｄ！", "ｈｅｌｌｏ ｗｏｒｌｄ", "１２３４５",
    # emoji and other symbols
    "😀👍 ok", "I ❤ NY", "🇫🇷🇩🇪", "emoji 😀 in 😀 the 😀 middle", "™ © ®",
    # whitespace and control characters
    "line one\nline two\r\nline three", "tab\tseparated\tvalues", "no\u00a0break\u2003space",
    "zero\u200bwidth", "soft\u00adhyphen",
    # repeated shingles (weights above the package's batching cutoff of 50)
    "a" * 300, "ab" * 200, "blah " * 120, "重复" * 80,
    # long text
    PARAGRAPH * 40,
    " ".join(f"word{i} token{i % 17} item{i % 5}" for i in range(600)),
    "".join("第%d章 我们在这里讨论近似重复文本的检测方法。" % i for i in range(60)),
]

FEATURES = [
    ["a"], ["aa", "bb", "cc"], ["aa", "aa", "bb"], ["hello", "world", "hello"],
    [["hello", 1], ["world", 2]], [["hello", 3], ["world", 1], ["foo", 1]],
    [["apple", 100], ["banana", 51], ["cherry", 50]], [["中文", 2], ["特征", 5]],
    [["x", 0.5], ["y", 0.25], ["z", 1.5]], [["", 1]], [[str(i), i + 1] for i in range(300)],
    [str(i) for i in range(500)], ["aaa", "bbb"],
    [[str(i), 50 * i] for i in range(500)],
]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'python_simhash.jsonl')
    with open(out_path, 'w', encoding='utf-8', newline='\n') as out:
        for text in TEXTS:
            row = {"text": text, "fingerprint": "%016x" % simhash_text(text)}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        for features in FEATURES:
            row = {"features": features, "fingerprint": "%016x" % simhash_features(features)}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == '__main__':
    main()
