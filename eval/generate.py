#!/usr/bin/python3
"""Builds the evaluation corpora and their ground truth (deterministic for a seed).

    /usr/bin/python3 eval/generate.py [--out eval/out] [--seed 20240501] [--lang en,zh]
                                      [--profile small|large]

`--profile large` builds the >= 50K documents per language corpora of docs/tuning.md: 4,000
English man pages (sections 1-8) and every Python documentation page, English documents cut
at 2,000 characters and Chinese ones at 1,200 (news-article sizes), GNOME's zh_CN help and
one fortune per document, and more reposts per original (PROFILES below).

Writes, per language L in {en, zh}:
  L.jsonl      one document per line: id, text, title, url, time, family, edit
  L.truth.tsv  `a<TAB>b<TAB>jaccard` (with a header line): every pair with exact Jaccard >= 0.8
               of character 5-gram shingle sets of the normalised text (see eval/truth.py)
and manifest.json (sources, counts, edit kinds, timings). The text comes from Debian packages
(eval/install-deps.sh installs them; docs/data.md lists them with their licences). `family` and
`edit` say which original a document was derived from and how; they are for analysis only:
the ground truth is the Jaccard, whatever the edit was meant to do.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import edits  # noqa: E402
import sources  # noqa: E402
import truth  # noqa: E402

MAX_CHARS = 8000  # longer texts are cut into parts at paragraph boundaries


@dataclass(frozen=True)
class Profile:
    """How big a corpus is: what is read, how it is cut, how many reposts an original gets."""

    man_sections: tuple[str, ...]  # English man page sections
    all_sources: bool  # every Python page and en_man_pages man pages, not a scale-sized sample
    en_man_pages: int  # with all_sources: how many English man pages (a seeded sample)
    en_max_chars: int  # English documents are cut at this length
    zh_max_chars: int  # Chinese documents are cut at this length
    zh_extra: bool  # GNOME zh_CN help, one fortune per document
    family_rate: dict[str, float]  # share of originals that get reposts
    mean_variants: dict[str, float]  # mean of the (capped) exponential repost count


PROFILES = {
    "small": Profile(("1", "5", "7", "8"), False, 0, MAX_CHARS, MAX_CHARS, False,
                     {"en": 0.5, "zh": 0.6}, {"en": 1.5, "zh": 1.5}),
    "large": Profile(("1", "2", "3", "4", "5", "6", "7", "8"), True, 4000, 2000, 1200, True,
                     {"en": 0.6, "zh": 0.85}, {"en": 2.0, "zh": 3.5}),
}
EPOCH = dt.datetime(2023, 1, 1, tzinfo=dt.timezone.utc)
SITES = ["news.example.com", "www.daily-mirror-site.example", "m.portal.example.net",
         "feeds.aggregator.example.org", "blog.reposter.example", "cn.mirror.example.cn"]

# Edit kinds with their weights and strength ranges (inclusive), per language.
EDIT_KINDS = {
    "copy": (1, 0, 0),
    "headline": (3, 0, 2),
    "boilerplate": (3, 0, 4),
    "html": (3, 0, 2),
    "fullwidth": (2, 0, 2),
    "truncate": (3, 0, 4),
    "reorder": (2, 0, 2),
    "word_edits": (4, 0, 4),
    "splice": (2, 0, 2),
    "traditional": (4, 0, 2),
}
TRADITIONAL_CONFIG = ["s2t.json", "s2tw.json", "s2twp.json"]  # strength 0, 1, 2
# Content edits first, then what a site wraps around the content.
APPLY_ORDER = ["word_edits", "truncate", "reorder", "splice", "boilerplate", "headline",
               "fullwidth", "html", "traditional", "copy"]


@dataclass
class Record:
    text: str
    title: str
    url: str
    time: dt.datetime
    family: int
    edit: str
    opencc_config: str = ""


def english_bases(rng: random.Random, scale: float, prof: Profile) -> list[sources.Doc]:
    pkg_of: dict[str, str] = {}
    lic: dict[str, str] = {}
    py = sorted(Path("/usr/share/doc/python3.11/html").rglob("*.html"))
    man = sources.debian_files(sources.man_page_files("", prof.man_sections), pkg_of)
    out = sources.common_licenses()
    out += sources.copyright_files(20000)
    py_pages = py if prof.all_sources else rng.sample(py, min(len(py), int(200 * scale)))
    out += sources.html_docs(py_pages, "python3.11-doc", "PSF-2.0 (Python documentation licence)")
    out += sources.html_docs(sorted(Path("/usr/share/doc/debian-handbook/html/en-US")
                                    .glob("*.html")), "debian-handbook", "GPL-2.0+ or CC-BY-SA-3.0")
    out += sources.html_docs(sorted(Path("/usr/share/debian-reference").glob("*.en.html")),
                             "debian-reference-en", "GPL-2+")
    out += sources.html_docs(sorted(Path("/usr/share/doc/maint-guide/html").glob("*.en.html")),
                             "maint-guide", "GPL-2.0+")
    out += sources.html_docs(sorted(Path("/usr/share/doc/debian/FAQ").glob("*.en.html")),
                             "debian-faq", "GPL-2+ (see its copyright file)")
    man_count = prof.en_man_pages if prof.all_sources else int(1000 * scale)
    out += sources.man_pages(sorted(rng.sample(man, min(len(man), man_count))), pkg_of, lic)
    return sources.split_long(sources.from_debian(out), prof.en_max_chars)


def chinese_bases(rng: random.Random, scale: float, prof: Profile) -> list[sources.Doc]:
    cut = prof.zh_max_chars
    chunk = (800, 6000) if cut >= 6000 else (cut // 4, cut)
    pkg_of: dict[str, str] = {}
    lic: dict[str, str] = {"manpages-zh": "GFDL-1.2+"}
    out: list[sources.Doc] = []
    for variant in ("zh_CN", "zh_TW"):
        files = sources.debian_files(
            sources.man_page_files(variant, ("1", "2", "3", "4", "5", "6", "7", "8")), pkg_of)
        out += sources.man_pages(sorted(rng.sample(files, min(len(files), int(900 * scale)))),
                                 pkg_of, lic, min_chars=200)
    for variant in ("zh-CN", "zh-TW"):
        out += sources.html_docs(sorted(Path(f"/usr/share/doc/debian-handbook/html/{variant}")
                                        .glob("*.html")), "debian-handbook",
                                 "GPL-2.0+ or CC-BY-SA-3.0", *chunk)
    for variant in ("zh-cn", "zh-tw"):
        out += sources.html_docs(sorted(Path("/usr/share/debian-reference")
                                        .glob(f"*.{variant}.html")),
                                 f"debian-reference-{variant}", "GPL-2+", *chunk)
        out += sources.html_docs(sorted(Path(f"/usr/share/doc/maint-guide-{variant}/html")
                                        .glob("*.html")), f"maint-guide-{variant}", "GPL-2.0+",
                                 *chunk)
    out += sources.html_docs(sorted(Path("/usr/share/doc/debian/FAQ").glob("*.zh-cn.html")),
                             "debian-faq-zh-cn", "GPL-2+ (see its copyright file)", *chunk)
    if prof.zh_extra:  # GNOME's help pages are Mallard XML, which html_blocks reads as well
        out += sources.html_docs(sorted(Path("/usr/share/help/zh_CN/gnome-help")
                                        .glob("*.page")), "gnome-user-docs", "CC-BY-SA-3.0",
                                 *chunk)
    for name, per_doc in (("tang300", 3), ("song100", 2), ("chinese", 4)):
        out += sources.fortunes(f"/usr/share/games/fortunes/{name}", "fortunes-zh", "GPL-3.0+",
                                1 if prof.zh_extra else per_doc)
    return sources.split_long(sources.from_debian(out), cut)


def is_chinese(text: str) -> bool:
    """True when at least a tenth of the characters are Han (Chinese man pages quote a lot of
    ASCII: options, paths, examples)."""
    han = sum(1 for c in text if "\u3400" <= c <= "\u9fff")
    return han * 10 >= len(text)


def _pick_kind(lang: str, rng: random.Random, exclude: set[str]) -> str:
    kinds = [k for k in EDIT_KINDS if k not in exclude and (lang == "zh" or k != "traditional")]
    return rng.choices(kinds, weights=[EDIT_KINDS[k][0] for k in kinds])[0]


def _slug(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:48]
    return slug or "article"


def make_variant(base: sources.Doc, family: int, lang: str, rng: random.Random,
                 other: sources.Doc, when: dt.datetime) -> Record:
    """One repost of `base`: one edit, or two different ones, each at a random strength."""
    kinds = [_pick_kind(lang, rng, set())]
    if kinds[0] != "copy" and rng.random() < 0.3:
        kinds.append(_pick_kind(lang, rng, set(kinds) | {"copy"}))
    kinds.sort(key=APPLY_ORDER.index)
    text, title, config, labels = base.text, base.title, "", []
    for kind in kinds:
        strength = rng.randint(EDIT_KINDS[kind][1], EDIT_KINDS[kind][2])
        labels.append(f"{kind}:{strength}")
        if kind == "word_edits":
            text = edits.word_edits(text, rng, strength)
        elif kind == "truncate":
            text = edits.truncate(text, rng, strength)
        elif kind == "reorder":
            text = edits.reorder(text, rng, strength)
        elif kind == "splice":
            text = edits.splice(text, other.text, rng, strength)
        elif kind == "boilerplate":
            text = edits.boilerplate(text, lang, rng, strength)
        elif kind == "headline":
            title = edits.new_headline(title, lang, rng)
            text = edits.headline(text, title, lang, rng, strength)
        elif kind == "fullwidth":
            text = edits.fullwidth(text, rng, strength)
        elif kind == "html":
            text = edits.html_wrap(text, title, lang, rng, strength)
        elif kind == "traditional":
            config = TRADITIONAL_CONFIG[strength]
    later = when + dt.timedelta(seconds=rng.randint(600, 30 * 86400))
    url = f"https://{rng.choice(SITES)}/{later:%Y/%m}/{_slug(title)}-{rng.randrange(10**6)}.html"
    return Record(text, title, url, later, family, "+".join(labels), config)


def build(lang: str, bases: list[sources.Doc], rng: random.Random, family_rate: float,
          mean_variants: float) -> list[Record]:
    """Originals plus their reposts, shuffled. Traditional conversions run in one batch."""
    records: list[Record] = []
    part: Counter[str] = Counter()
    for fam, base in enumerate(bases):
        when = EPOCH + dt.timedelta(seconds=rng.randrange(2 * 365 * 86400))
        part[base.path] += 1
        suffix = f"#part-{part[base.path]}" if part[base.path] > 1 else ""
        url = base.path if base.path.startswith("http") else "file://" + base.path + suffix
        records.append(Record(base.text, base.title, url, when, fam, "original"))
        if rng.random() >= family_rate:
            continue
        count = 1 + min(int(rng.expovariate(1.0 / mean_variants)), 5)
        for _ in range(count):
            other = bases[rng.randrange(len(bases))]
            records.append(make_variant(base, fam, lang, rng, other, when))
    for config in TRADITIONAL_CONFIG:
        todo = [r for r in records if r.opencc_config == config]
        for r, converted in zip(todo, truth.opencc([r.text for r in todo], config)):
            r.text = converted
    rng.shuffle(records)
    return records


def write_corpus(lang: str, records: list[Record], out: Path) -> list[str]:
    ids = [f"{lang}-{i:06d}" for i in range(len(records))]
    with open(out / f"{lang}.jsonl", "w", encoding="utf-8") as f:
        for rid, r in zip(ids, records):
            f.write(json.dumps({"id": rid, "text": r.text, "title": r.title, "url": r.url,
                                "time": r.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                "family": r.family, "edit": r.edit}, ensure_ascii=False) + "\n")
    return ids


def write_truth(path: Path, ids: list[str], pairs: list[tuple[int, int, float]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("a\tb\tjaccard\n")
        for i, j, jac in pairs:
            f.write(f"{ids[i]}\t{ids[j]}\t{jac:.6f}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--seed", type=int, default=20240501)
    ap.add_argument("--lang", default="en,zh")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies how many source files are sampled (default 1.0)")
    ap.add_argument("--profile", choices=sorted(PROFILES), default="small",
                    help="small: the 8K-10K documents corpora; large: >= 50K per language")
    args = ap.parse_args()
    prof = PROFILES[args.profile]
    args.out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, object] = {"seed": args.seed, "scale": args.scale,
                                   "profile": args.profile, "languages": {}}
    for lang in args.lang.split(","):
        t0 = time.monotonic()
        rng = random.Random(f"{args.seed}:{lang}")
        bases = (english_bases(rng, args.scale, prof) if lang == "en"
                 else chinese_bases(rng, args.scale, prof))
        if not bases:
            print(f"generate: no {lang} source text found; run eval/install-deps.sh",
                  file=sys.stderr)
            return 1
        t1 = time.monotonic()
        records = build(lang, bases, rng, family_rate=prof.family_rate[lang],
                        mean_variants=prof.mean_variants[lang])
        ids = write_corpus(lang, records, args.out)
        t2 = time.monotonic()
        pairs = truth.pairs_for_texts([r.text for r in records], chinese=(lang == "zh"))
        write_truth(args.out / f"{lang}.truth.tsv", ids, pairs)
        t3 = time.monotonic()
        by_source = Counter(b.package for b in bases)
        manifest["languages"][lang] = {  # type: ignore[index]
            "documents": len(records), "originals": len(bases),
            "characters": sum(len(r.text) for r in records),
            "truth_pairs": len(pairs),
            "truth_pairs_within_family": sum(records[i].family == records[j].family
                                             for i, j, _ in pairs),
            "edits": Counter(r.edit.split(":")[0] for r in records).most_common(),
            "sources": by_source.most_common(),
            "seconds": {"extract": round(t1 - t0, 2), "edit": round(t2 - t1, 2),
                        "truth": round(t3 - t2, 2)},
        }
        print(f"generate: {lang}: {len(records)} documents, {len(pairs)} pairs with "
              f"Jaccard >= 0.8 ({t3 - t0:.1f} s)", file=sys.stderr)
    (args.out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
