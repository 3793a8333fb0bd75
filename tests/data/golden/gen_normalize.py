#!/usr/bin/python3
"""Golden vectors for simdup::normalizer's character steps (t2s and HTML off), computed with
Python's unicodedata, independently of the C++ code.

Reference semantics (include/simdup/normalize.hpp): NFKC; full case folding (str.casefold,
then NFKC again so folded text stays normalised); digits = category Nd removed; punctuation =
each run of P* / S* characters becomes one space; whitespace = categories Zs, Zl, Zp, Cc, each
run collapsed to one space, both ends trimmed. Samples avoid characters whose data changed
between Python's Unicode version and utf8proc's, and default-ignorable code points.

Each line of normalize.tsv: option flags, input (hex of UTF-8), expected output (hex).
    /usr/bin/python3 tests/data/golden/gen_normalize.py [OUT]
"""
import pathlib
import sys
import unicodedata

SAMPLES = [
    "",
    "   ",
    "Hello, World!",
    "  Leading and trailing  ",
    "tabs\tand\nnewlines\r\nand\x0bvertical\x0cfeeds",
    "Ｆｕｌｌ－ｗｉｄｔｈ　ＡＢＣ１２３！",
    "Straße STRASSE straße",
    "Café CAFÉ cafe\u0301 CAFE\u0301",
    "ÉCOLE Élève ÀÖØ Ωμέγα ΣΊΣΥΦΟΣ",
    "Привет, МИР! Ёжик",
    "ﬁnance ﬂow ﬀ",
    "① ② ⑩ ¹²³ ½ ㎏ ㎞ ™ ℃",
    "中文，标点。测试！「引号」《书名》",
    "日本語のテキスト、カタカナ ｶﾀｶﾅ",
    "한국어 텍스트 입니다",
    "price: $12.50 (€9,99) — 100% off...",
    "e-mail: someone@example.com; url=https://example.com/a?b=c&d=e",
    "emoji 😀🎉 and symbols ★☆♥ ← → ∑ ∞",
    "a,b.c;d:e!f?g",
    "!!!  ...  ???",
    "digits 0123456789 ٠١٢٣ ४५६ ０１２",
    "mixed\u00a0nbsp\u2003em\u2009thin\u3000ideographic",
    "line\u2028separator\u2029paragraph\u0085nel",
    "ǅungla ǈ ǋ",
    "İstanbul ıi",
    "ΜΆΪΟΣ ΐ",
    "x\x00y\x01z\x7fw",
    "under_score hyphen-ated",
    "Ｈｅｌｌｏ，Ｗｏｒｌｄ！ＦＵＬＬ",
    "ﾊﾝｶｸ ｶﾞｷﾞ",
]

OPTION_SETS = [
    "nfkc,casefold,punct,collapse",  # the defaults (without t2s)
    "nfkc,casefold,punct,collapse,digits",
    "nfkc,collapse",
    "casefold,punct,collapse",
    "punct",
    "nfkc,casefold,punct",
    "",
]


def reference(text, flags):
    if "nfkc" in flags:
        text = unicodedata.normalize("NFKC", text)
    if "casefold" in flags:
        text = text.casefold()
        if "nfkc" in flags:
            text = unicodedata.normalize("NFKC", text)
    out = []
    in_punct = False
    for ch in text:
        cat = unicodedata.category(ch)
        if "digits" in flags and cat == "Nd":
            continue
        if "punct" in flags and cat[0] in "PS":
            if not in_punct:
                out.append(" ")
            in_punct = True
            continue
        in_punct = False
        out.append(ch)
    text = "".join(out)
    if "collapse" in flags:
        words, word = [], []
        for ch in text:
            if unicodedata.category(ch) in ("Zs", "Zl", "Zp", "Cc"):
                if word:
                    words.append("".join(word))
                word = []
            else:
                word.append(ch)
        if word:
            words.append("".join(word))
        text = " ".join(words)
    return text


lines = []
for flags in OPTION_SETS:
    for sample in SAMPLES:
        lines.append(f"{flags or '-'}\t{sample.encode().hex()}\t{reference(sample, flags).encode().hex()}")
# An optional argument writes elsewhere (tests/python/test_golden_regenerated.py compares).
out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).with_name("normalize.tsv")
out.write_text("\n".join(lines) + "\n", encoding="ascii")
print(f"wrote {out} ({len(lines)} cases)")
