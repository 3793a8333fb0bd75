"""A small deterministic corpus for the dedup end-to-end tests, and an independent Python
model of the parts of `simdup dedup` that can be checked without the C++ code: shingle Jaccard
and brute-force stream decisions over fingerprints from `simdup fingerprint`."""

import random
import re
import unicodedata

WORDS = ("river market city council report budget school water energy policy court music "
         "garden train station winter summer science museum harbour forest mountain island "
         "library hospital village bridge festival election weather storm farmer doctor "
         "teacher student engineer artist history future network language ocean desert "
         "planet coffee bread window kitchen engine bicycle airport tunnel castle").split()


def sentence(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 14))]
    return " ".join(words).capitalize() + "."


def base_texts(n, seed=7, sentences=12):
    rng = random.Random(seed)
    return [" ".join(sentence(rng) for _ in range(sentences)) for _ in range(n)]


def light_edit(text, rng):
    """Replaces one word: a near duplicate with a small SimHash distance."""
    words = text.split(" ")
    i = rng.randrange(len(words))
    words[i] = rng.choice(WORDS)
    return " ".join(words)


def corpus(seed=7):
    """Records with exact copies, URL duplicates, light edits, short documents and unique ones.

    Returns the records and the expected duplicates that any correct run must find (exact
    copies and URL duplicates)."""
    rng = random.Random(seed)
    texts = base_texts(30, seed)
    records, must = [], {}
    for i, t in enumerate(texts):
        records.append({"id": f"d{i}", "text": t, "url": f"https://news.example.com/a/{i}",
                        "time": 1_700_000_000 + i, "score": i % 7})
    for i in range(0, 30, 5):  # exact copies, different URL, punctuation and case changes
        rid = f"copy{i}"
        records.append({"id": rid, "text": texts[i].upper().replace(".", "!"),
                        "url": f"https://mirror.example.org/{i}", "time": 1_600_000_000})
        must[rid] = f"d{i}"
    for i in range(1, 30, 6):  # same URL (tracking parameter, www, http) with new text
        rid = f"url{i}"
        records.append({"id": rid, "text": "Updated page " + texts[(i + 3) % 30][::-1],
                        "url": f"http://www.news.example.com/a/{i}/?utm_source=x"})
        must[rid] = f"d{i}"
    for i in range(2, 30, 4):  # light edits
        records.append({"id": f"edit{i}", "text": light_edit(texts[i], rng),
                        "url": f"https://other.example.net/{i}"})
    for i in range(6):  # short documents: never near duplicates of each other
        records.append({"id": f"short{i}", "text": f"ok {i}"})
    records.append({"id": "short-copy", "text": "OK 0"})
    must["short-copy"] = "short0"
    records.append({"id": "html", "text": "<script>alert('x')</script> & <b>bold</b> " + texts[3],
                    "url": "https://x.example/h"})
    return records, must


def normalise(text):
    """Verification's normalisation of Latin text (docs/dedup.md, Verification): NFKC, casefold,
    collapsed whitespace; punctuation and symbols stay."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", text).strip()


def jaccard(a, b, width=5):
    def shingles(t):
        t = normalise(t)
        if len(t) < width:
            return {t} if t else set()
        return {t[i:i + width] for i in range(len(t) - width + 1)}
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 0.0
