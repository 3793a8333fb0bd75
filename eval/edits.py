"""Realistic edits that turn one document into a repost, at a chosen strength.

Every function takes the text (paragraphs separated by blank lines), a seeded random.Random and
a strength, and returns the edited text. Strength 0 is the mildest setting; larger values edit
more, so that some variants stay near-duplicates and others do not (the ground truth decides,
never the edit's label). The boilerplate lines below were written for this project.
"""

from __future__ import annotations

import html
import random
import re

BOILERPLATE = {
    "en": [
        "Home | News | World | Business | Technology | Science | Sport | Contact",
        "Skip to main content",
        "Sign in  Register  Subscribe",
        "Advertisement",
        "Share this article: Facebook Twitter LinkedIn Email Print",
        "Subscribe to our daily newsletter and never miss a story.",
        "Related stories: Five things to know this week; Readers' letters; Weekend picks",
        "This site uses cookies to improve your experience. By continuing you accept our policy.",
        "Copyright 2024 The Daily Mirror Site. All rights reserved.",
        "Terms of use | Privacy policy | Cookie settings | Accessibility",
        "Follow us on social media for the latest updates.",
        "Most read: 1. Weather warning issued  2. Council budget approved  3. Local team wins",
        "Sponsored content: Compare the best broadband deals in your area today",
        "Comments are closed for this article.",
        "Report a correction or typo",
        "Back to top",
    ],
    "zh": [
        "首页 | 新闻 | 国际 | 财经 | 科技 | 体育 | 娱乐 | 联系我们",
        "跳转到正文",
        "登录  注册  订阅",
        "广告",
        "分享到：微信 微博 QQ空间 复制链接",
        "订阅我们的每日简报，不错过任何一条新闻。",
        "相关阅读：本周必读五件事；读者来信；周末推荐",
        "本网站使用Cookie以改善您的浏览体验，继续浏览即表示同意。",
        "版权所有 2024 每日镜像网 保留所有权利",
        "使用条款 | 隐私政策 | 网站地图 | 无障碍浏览",
        "关注我们的公众号，获取最新资讯。",
        "热门排行：1. 气象台发布预警 2. 市政预算获批 3. 本地球队夺冠",
        "推广内容：比较您所在地区的宽带套餐",
        "本文评论已关闭。",
        "纠错 | 举报",
        "返回顶部",
    ],
}

HEADLINE_PREFIX = {
    "en": ["UPDATED: ", "Breaking: ", "Opinion: ", "Explainer: ", "Read: ", "Repost: "],
    "zh": ["【更新】", "【快讯】", "转载：", "【深度】", "独家：", "【解读】"],
}


def paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


def join(paras: list[str]) -> str:
    return "\n\n".join(paras)


def new_headline(title: str, lang: str, rng: random.Random) -> str:
    """A reposted article's changed headline: a prefix, and sometimes a rewording."""
    head = rng.choice(HEADLINE_PREFIX[lang]) + title
    if rng.random() < 0.5:
        head += " - " + ("more details" if lang == "en" else "详细报道")
    return head


def headline(text: str, title: str, lang: str, rng: random.Random, strength: int) -> str:
    """Reposted with a changed headline line at the top (strength: extra standfirst lines)."""
    lines = [new_headline(title, lang, rng)]
    lines += rng.sample(BOILERPLATE[lang], min(strength, len(BOILERPLATE[lang])))
    return join(lines + paragraphs(text))


def boilerplate(text: str, lang: str, rng: random.Random, strength: int) -> str:
    """Navigation at the top, ads in the middle, a footer at the bottom: 2 + 3*strength lines."""
    count = 2 + 3 * strength
    lines = [rng.choice(BOILERPLATE[lang]) for _ in range(count)]
    paras = paragraphs(text)
    top = lines[: count // 3 + 1]
    middle = lines[count // 3 + 1 : 2 * count // 3 + 1]
    bottom = lines[2 * count // 3 + 1 :]
    for line in middle:
        paras.insert(rng.randrange(len(paras) + 1), line)
    return join(top + paras + bottom)


def html_wrap(text: str, title: str, lang: str, rng: random.Random, strength: int) -> str:
    """The page as a crawler fetched it: head, scripts, styles, entities, navigation.

    Strength 0 wraps only; 1 adds a navigation list; 2 adds navigation, a sidebar and a
    footer (visible text that survives HTML stripping).
    """
    # A no-break space entity in each paragraph: NFKC turns it back into a space.
    body = "\n".join(f"<p>{html.escape(p, quote=False).replace(' ', '&nbsp;', 1)}</p>"
                     for p in paragraphs(text))
    nav = ""
    if strength >= 1:
        items = BOILERPLATE[lang][0].split(" | ")
        nav = "<nav><ul>" + "".join(f'<li><a href="/{i}">{html.escape(i)}</a></li>'
                                     for i in items) + "</ul></nav>"
    side = ""
    if strength >= 2:
        picks = rng.sample(BOILERPLATE[lang][4:], 4)
        side = '<aside class="sidebar">' + "".join(f"<div>{html.escape(s)}</div>"
                                                  for s in picks) + "</aside>"
        side += f"<footer>{html.escape(BOILERPLATE[lang][8])}&nbsp;&middot;</footer>"
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:serif;max-width:40em} .ad{display:none}</style>"
        f"<script>var _track={{id:{rng.randrange(10**6)},page:'article'}};</script>"
        f"</head><body>{nav}<article><h1>{html.escape(title)}</h1>\n{body}</article>"
        f"<!-- cache {rng.randrange(10**9):09d} -->{side}</body></html>"
    )


def fullwidth(text: str, rng: random.Random, strength: int) -> str:
    """ASCII letters, digits and punctuation as full-width forms, in 1 of 3 paragraphs,
    2 of 3, or all of them (strength 0, 1, 2); spaces as ideographic spaces at strength 2."""
    def widen(p: str) -> str:
        out = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in p)
        return out.replace(" ", "\u3000") if strength >= 2 else out

    paras = paragraphs(text)
    share = (strength + 1) / 3
    return join([widen(p) if rng.random() < share else p for p in paras])


def truncate(text: str, rng: random.Random, strength: int) -> str:
    """Keeps the first 95, 85, 75, 60 or 40 per cent of the characters (strength 0..4),
    cut at a white space or sentence end when one is near."""
    keep = [0.95, 0.85, 0.75, 0.6, 0.4][min(strength, 4)]
    cut = max(1, int(len(text) * keep))
    window = text[max(0, cut - 40) : cut]
    m = None
    for m in re.finditer(r"[\s。！？.!?]", window):
        pass
    if m is not None:
        cut = max(0, cut - 40) + m.end()
    return text[:cut].rstrip()


def reorder(text: str, rng: random.Random, strength: int) -> str:
    """Swaps two paragraphs (strength 0), moves the last third to the front (1), or shuffles
    all paragraphs (2)."""
    paras = paragraphs(text)
    if len(paras) < 2:
        return text
    if strength == 0:
        i, j = rng.sample(range(len(paras)), 2)
        paras[i], paras[j] = paras[j], paras[i]
    elif strength == 1:
        k = max(1, len(paras) // 3)
        paras = paras[-k:] + paras[:-k]
    else:
        rng.shuffle(paras)
    return join(paras)


_WORD = re.compile(r"[A-Za-z]+|[\u3400-\u9fff]")


def word_edits(text: str, rng: random.Random, strength: int) -> str:
    """Replaces, deletes or inserts 1, 3, 6, 12 or 25 per cent of the words (strength 0..4).

    Words are runs of Latin letters or single Han characters; replacements and insertions
    are drawn from the document's own words, as a copy editor's changes would be.
    """
    rate = [0.01, 0.03, 0.06, 0.12, 0.25][min(strength, 4)]
    spans = [m.span() for m in _WORD.finditer(text)]
    if not spans:
        return text
    vocab = [text[a:b] for a, b in spans]
    out, last = [], 0
    for a, b in spans:
        out.append(text[last:a])
        word = text[a:b]
        r = rng.random()
        if r < rate / 3:
            word = rng.choice(vocab)
        elif r < 2 * rate / 3:
            word = ""
        elif r < rate:
            sep = " " if word.isascii() else ""
            word = word + sep + rng.choice(vocab)
        out.append(word)
        last = b
    out.append(text[last:])
    return "".join(out)


def splice(text: str, other: str, rng: random.Random, strength: int) -> str:
    """Appends 10, 25 or 50 per cent (strength 0..2) of another document's length from it:
    an article with a second story glued on, as aggregators do."""
    share = [0.1, 0.25, 0.5][min(strength, 2)]
    extra = other[: max(1, int(len(text) * share))]
    return text + "\n\n" + extra
