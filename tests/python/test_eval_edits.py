"""eval/edits.py and eval/generate.py: edits do what they say, and generation is seeded."""

import random
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "eval"))

import edits  # noqa: E402
import generate  # noqa: E402
import sources  # noqa: E402
import truth  # noqa: E402

TEXT = "\n\n".join(
    f"Paragraph {i}: the quick brown fox number {i} jumps over the lazy dog near river {i}."
    for i in range(12))


def jac(a: str, b: str) -> float:
    x, y = truth.shingle_sets([truth.normalize(a), truth.normalize(b)])
    return truth.jaccard(x, y)


def test_fullwidth_and_html_wrap_normalise_back():
    rng = random.Random(1)
    wide = edits.fullwidth(TEXT, rng, 2)
    assert "Ｐａｒａｇｒａｐｈ" in wide and "\u3000" in wide
    assert truth.normalize(wide) == truth.normalize(TEXT)
    page = edits.html_wrap(TEXT, "Fox & dog", "en", rng, 0)
    assert page.startswith("<!DOCTYPE html>") and "<script>" in page and "&nbsp;" in page
    # Only the <title> and <h1> headline are added to the visible text.
    assert jac(page, TEXT) > 0.9
    # Navigation, sidebar and footer add visible boilerplate: less similar.
    assert jac(edits.html_wrap(TEXT, "Fox & dog", "en", rng, 2), TEXT) < jac(page, TEXT)


def test_truncate_keeps_the_stated_share():
    for strength, keep in enumerate([0.95, 0.85, 0.75, 0.6, 0.4]):
        cut = edits.truncate(TEXT, random.Random(0), strength)
        assert TEXT.startswith(cut)
        assert keep - 0.05 <= len(cut) / len(TEXT) <= keep + 0.001


def test_reorder_keeps_paragraphs_and_stays_similar():
    for strength in range(3):
        moved = edits.reorder(TEXT, random.Random(strength), strength)
        assert sorted(edits.paragraphs(moved)) == sorted(edits.paragraphs(TEXT))
        assert moved != TEXT
        assert jac(moved, TEXT) > 0.85


def test_stronger_edits_are_less_similar():
    for edit in (edits.word_edits, edits.truncate):
        sims = [jac(edit(TEXT, random.Random(3), s), TEXT) for s in range(5)]
        assert sims == sorted(sims, reverse=True) and sims[0] > 0.9 and sims[-1] < 0.8
    sims = [jac(edits.boilerplate(TEXT, "en", random.Random(3), s), TEXT) for s in range(5)]
    assert sims == sorted(sims, reverse=True) and sims[-1] < sims[0]


def test_headline_and_chinese_boilerplate():
    rng = random.Random(5)
    out = edits.headline("正文第一段。\n\n正文第二段。", "标题", "zh", rng, 1)
    first, *rest = edits.paragraphs(out)
    assert "标题" in first and first != "标题"
    assert rest[-2:] == ["正文第一段。", "正文第二段。"] and len(rest) == 3
    assert edits.paragraphs(edits.boilerplate("一。\n\n二。", "zh", rng, 0))[0] in \
        edits.BOILERPLATE["zh"]


def test_variants_are_deterministic_for_a_seed():
    base = sources.Doc(TEXT, "Fox", "/x", "pkg", "GPL-2+")
    other = sources.Doc("Another story entirely. " * 20, "Other", "/y", "pkg", "GPL-2+")
    when = generate.EPOCH

    def run(seed):
        rng = random.Random(seed)
        return [generate.make_variant(base, 0, "en", rng, other, when) for _ in range(20)]

    a, b, c = run(9), run(9), run(10)
    assert [(r.text, r.url, r.edit) for r in a] == [(r.text, r.url, r.edit) for r in b]
    assert [r.text for r in a] != [r.text for r in c]
    assert {r.edit.split("+")[0].split(":")[0] for r in a} <= set(generate.EDIT_KINDS)
    assert all(not r.opencc_config for r in a)  # traditional is a Chinese-only edit


@pytest.mark.skipif(shutil.which("opencc") is None, reason="opencc command not installed")
def test_chinese_build_converts_traditional_in_one_batch():
    text = "软件开发的过程很长。\n\n默认文件保存在这里，请检查网络设置。"
    bases = [sources.Doc(text, "标题", "/z", "pkg", "GPL-2+")]
    converted = []
    for seed in range(30):
        records = generate.build("zh", bases, random.Random(seed), family_rate=1.0,
                                 mean_variants=50)
        assert sum(r.edit == "original" for r in records) == 1
        assert 2 <= len(records) <= 7
        converted += [r for r in records if r.opencc_config]
    assert converted
    for r in converted:
        assert not set("软这设网") & set(r.text)  # no simplified form is left
        assert set("軟這設網") & set(r.text)
        assert "traditional:" in r.edit
    assert generate.is_chinese(text) and not generate.is_chinese(TEXT)
