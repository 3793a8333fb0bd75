"""Ground truth for the evaluation: exact Jaccard of character 5-gram shingle sets.

Normalisation (applied to every document before shingling, in this order):
  1. HTML to text when the document looks like HTML (it starts with `<!doctype`, `<html`,
     `<head`, `<body`, `<div`, `<article` or `<p`, case-insensitive, after leading white space):
     tags, comments, `<script>`/`<style>` bodies removed, entities decoded.
  2. Unicode NFKC (full-width forms become ASCII, compatibility ideographs are unified).
  3. Lowercase (Python's str.lower).
  4. White space collapsed: every run of Unicode white space becomes one space; leading and
     trailing white space removed.
  5. Chinese corpora only: traditional to simplified with OpenCC's `t2s.json` (the `opencc`
     command, Debian package opencc), then every white space and punctuation character
     (Unicode categories Z* and P*, after NFKC) removed: the Jaccard is of the content, so the
     same text in two editions (zh-CN and zh-TW punctuation, spacing) counts as a duplicate.
Punctuation is kept in the other corpora.

Shingles are the sets of 5 consecutive code points of the normalised text. A text of 1 to 4
code points has one shingle, itself; an empty text has none and takes part in no pair.

All pairs with Jaccard >= t are found by prefix filtering, which is exact (no pair is missed):
tokens are ordered globally by (document frequency, value). If J(x, y) >= t then
|x & y| >= t * max(|x|, |y|), so |x & y| >= a_x = ceil(t |x|) and >= a_y = ceil(t |y|). Two sets
that share at least `a` tokens share a token among the first |x| - a + 1 of x and the first
|y| - a + 1 of y; using each set's own a_x (<= a) only lengthens its prefix. So every pair
with J >= t shares a prefix token: candidates are the pairs that do, filtered by
min(|x|, |y|) >= t max(|x|, |y|) and by a positional bound (see similar_pairs) that only drops
pairs that cannot reach t, and each remaining candidate is verified by its exact Jaccard.
Shingles are encoded exactly (no hashing): code points get dense ids in base B, and a 5-gram is
the integer id0 B^4 + ... + id4 when B^5 < 2^64, else a lexicographic rank of (hi, lo) parts.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import unicodedata
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

SHINGLE = 5
THRESHOLD = Fraction(4, 5)
CANDIDATE_BUDGET = 20_000_000  # candidates held at once by similar_pairs (see there)

_PARA_SEP = "\u2029"
_LOOKS_HTML = re.compile(r"\s*<(!doctype|html|head|body|div|article|p)\b", re.I)


class _VisibleText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._hidden += 1
        self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._hidden:
            self._hidden -= 1
        self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def html_to_text(text: str) -> str:
    parser = _VisibleText()
    parser.feed(text)
    parser.close()
    return "".join(parser.parts)


def normalize(text: str) -> str:
    """Steps 1-4 of the normalisation (everything except t2s)."""
    if _LOOKS_HTML.match(text):
        text = html_to_text(text)
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"\s+", " ", text).strip()


def opencc(texts: list[str], config: str) -> list[str]:
    """Converts texts with the `opencc` command and a config such as t2s.json (one process).

    Line breaks travel as U+2029 so that each text stays one line for opencc.
    """
    if not texts:
        return []
    if shutil.which("opencc") is None:
        raise RuntimeError("the `opencc` command is missing: apt-get install opencc")
    if any(_PARA_SEP in t for t in texts):
        raise ValueError("opencc(): texts must not contain U+2029")
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp, "in.txt"), Path(tmp, "out.txt")
        lines = [t.replace("\r", "").replace("\n", _PARA_SEP) for t in texts]
        src.write_text("\n".join(lines) + "\n", encoding="utf-8")
        subprocess.run(["opencc", "-c", config, "-i", str(src), "-o", str(dst)], check=True)
        out = dst.read_text(encoding="utf-8").split("\n")
    if out and out[-1] == "":
        out.pop()
    if len(out) != len(texts):
        raise RuntimeError(f"opencc returned {len(out)} lines for {len(texts)}")
    return [t.replace(_PARA_SEP, "\n") for t in out]


def content_only(text: str) -> str:
    """Step 5's second half: white space and punctuation removed (Unicode Z* and P*)."""
    return "".join(c for c in text if not c.isspace()
                   and unicodedata.category(c)[0] not in "PZ")


def normalize_all(texts: list[str], chinese: bool) -> list[str]:
    norm = [normalize(t) for t in texts]
    return [content_only(t) for t in opencc(norm, "t2s.json")] if chinese else norm


def shingle_sets(norm: list[str]) -> list[np.ndarray]:
    """Per document, the sorted unique exact codes of its 5-gram shingles (int64 or uint64)."""

    def code_points(t: str) -> np.ndarray:
        return np.frombuffer(t.encode("utf-32-le"), dtype=np.uint32)

    # Code points are decoded again per document below rather than kept: at 50K+ documents
    # the (hi, lo) columns of every text at once would take gigabytes.
    seen = [np.unique(code_points(t)) for t in norm]
    alphabet = np.unique(np.concatenate(seen)) if any(len(c) for c in seen) else \
        np.zeros(0, np.uint32)
    del seen
    base = len(alphabet) + 1  # id 0 is the padding of texts shorter than one shingle
    fits = base**SHINGLE < 2**64
    b = np.uint64(base)

    def hi_lo(t: str) -> tuple[np.ndarray, np.ndarray]:
        ids = np.searchsorted(alphabet, code_points(t)).astype(np.uint64) + np.uint64(1)
        if len(ids) == 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
        if len(ids) < SHINGLE:
            ids = np.concatenate([ids, np.zeros(SHINGLE - len(ids), np.uint64)])
        n = len(ids) - SHINGLE + 1
        cols = [ids[j : j + n] for j in range(SHINGLE)]
        return cols[0] * b + cols[1], (cols[2] * b + cols[3]) * b + cols[4]

    if fits:
        b3 = np.uint64(base**3)
        return [np.unique(hi * b3 + lo) for hi, lo in map(hi_lo, norm)]
    parts = [hi_lo(t) for t in norm]
    # Too many distinct code points for one word: rank (hi, lo) pairs lexicographically.
    hi_all = np.concatenate([p[0] for p in parts])
    lo_all = np.concatenate([p[1] for p in parts])
    order = np.lexsort((lo_all, hi_all))
    new = np.ones(len(order), bool)
    new[1:] = (hi_all[order][1:] != hi_all[order][:-1]) | (lo_all[order][1:] != lo_all[order][:-1])
    code = np.empty(len(order), np.int64)
    code[order] = np.cumsum(new) - 1
    out, pos = [], 0
    for hi, _ in parts:
        out.append(np.unique(code[pos : pos + len(hi)]))
        pos += len(hi)
    return out


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) == 0 and len(b) == 0:
        return 0.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def _ceil_frac(t: Fraction, n: np.ndarray) -> np.ndarray:
    return -((-t.numerator * n) // t.denominator)


def _runs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start index and length of each run of equal values in a sorted array."""
    start = np.nonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))[0]
    return start, np.diff(np.append(start, len(keys)))


def similar_pairs(sets: list[np.ndarray], threshold: Fraction = THRESHOLD,
                  ) -> list[tuple[int, int, float]]:
    """Every pair (i, j), i < j, with exact Jaccard >= threshold, and its Jaccard.

    Prefix filtering (see the module comment) gives candidates; a length filter and the
    positional bound of PPJoin (Xiao et al. 2008) drop candidates that cannot reach the
    threshold; survivors are verified exactly. Positional bound: if w is the highest-ranked
    token the two prefixes share, the pair's overlap is at most (shared prefix tokens) +
    min(tokens after w in x, tokens after w in y), because every common token ranked before w
    lies in both prefixes. J >= t needs overlap >= t / (1 + t) * (|x| + |y|).
    """
    num, den = threshold.numerator, threshold.denominator
    sizes = np.array([len(s) for s in sets], np.int64)
    docs = np.nonzero(sizes)[0]
    if len(docs) < 2:
        return []
    n_docs = np.int64(len(sets))
    # Token frequencies first, without an inverse index over every token: only the prefixes
    # (about 1 - t of each set) are kept as (rank, owner, position) rows, so memory stays near
    # one copy of the shingle sets at 50K+ documents.
    every = np.concatenate([sets[i] for i in docs])
    tokens, counts = np.unique(every, return_counts=True)
    del every
    n_tok = np.int64(len(tokens))
    token_rank = np.empty(len(tokens), np.int64)
    token_rank[np.argsort(counts, kind="stable")] = np.arange(len(tokens))
    del counts
    prefix_len = sizes - (-(-num * sizes // den)) + 1
    ranks, owners, positions = [], [], []
    for doc in docs.tolist():
        r = np.sort(token_rank[np.searchsorted(tokens, sets[doc])])[: prefix_len[doc]]
        ranks.append(r)  # rarest tokens first: the document's prefix
        owners.append(np.full(len(r), doc, np.int64))
        positions.append(np.arange(len(r), dtype=np.int64))
    del tokens, token_rank
    rank, owner = np.concatenate(ranks), np.concatenate(owners)
    position = np.concatenate(positions)
    del ranks, owners, positions
    grouped = np.argsort(rank * n_docs + owner)  # by token, then document
    rank, owner, position = rank[grouped], owner[grouped], position[grouped]
    # All pairs within each token's run: entry k with entry k + d of the same run.
    start, length = _runs(rank)
    run_of = np.repeat(np.arange(len(start)), length)
    remaining = length[run_of] - 1 - (np.arange(len(rank)) - start[run_of])
    first_active = np.nonzero(remaining >= 1)[0]

    def candidates(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Entry pairs (left, right) sharing a token, passing the length filter, whose left
        document (the smaller: runs are ordered by document) is in [lo, hi)."""
        left_parts, right_parts = [], []
        active, d = first_active, 1
        while len(active):
            a, b = owner[active], owner[active + d]
            small = np.minimum(sizes[a], sizes[b])
            large = np.maximum(sizes[a], sizes[b])
            ok = (small * den >= large * num) & (a >= lo) & (a < hi)  # length filter, chunk
            left_parts.append(active[ok])
            right_parts.append(active[ok] + d)
            d += 1
            active = active[remaining[active] >= d]
        if not left_parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(left_parts), np.concatenate(right_parts)

    # Large families make many candidates (each takes some 50 bytes while sorted): the search
    # runs in chunks of left documents, each chunk's pairs complete in it, so that memory stays
    # bounded (about 20M candidates at a time).
    counts = np.zeros(int(n_docs) + 1, np.int64)
    active, d = first_active, 1
    while len(active):
        a, b = owner[active], owner[active + d]
        ok = np.minimum(sizes[a], sizes[b]) * den >= np.maximum(sizes[a], sizes[b]) * num
        counts += np.bincount(a[ok], minlength=int(n_docs) + 1)
        d += 1
        active = active[remaining[active] >= d]
    cumulative = np.cumsum(counts)
    bounds = [0]
    budget = CANDIDATE_BUDGET
    while bounds[-1] < n_docs:
        done = cumulative[bounds[-1] - 1] if bounds[-1] else 0
        nxt = int(np.searchsorted(cumulative, done + budget, side="right"))
        bounds.append(min(int(n_docs), max(nxt, bounds[-1] + 1)))
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        left, right = candidates(lo, hi)
        if len(left) == 0:
            continue
        pair = owner[left] * n_docs + owner[right]
        order = np.argsort(pair * n_tok + rank[left])  # by pair, then token rank
        pair, left, right = pair[order], left[order], right[order]
        first, shared = _runs(pair)
        last = first + shared - 1  # the highest-ranked shared prefix token of each pair
        i, j = owner[left[last]], owner[right[last]]
        bound = shared + np.minimum(sizes[i] - 1 - position[left[last]],
                                    sizes[j] - 1 - position[right[last]])
        survivors = bound * (num + den) >= num * (sizes[i] + sizes[j])
        del pair, order, left, right
        for x, y in zip(i[survivors].tolist(), j[survivors].tolist()):
            inter = len(np.intersect1d(sets[x], sets[y], assume_unique=True))
            union = int(sizes[x] + sizes[y]) - inter
            if inter * den >= num * union:
                out.append((x, y, inter / union))
    return out


def pairs_for_texts(texts: list[str], chinese: bool, threshold: Fraction = THRESHOLD,
                    ) -> list[tuple[int, int, float]]:
    return similar_pairs(shingle_sets(normalize_all(texts, chinese)), threshold)
