"""Real Chinese text for the jieba verification tests and benchmark: Debian's manpages-zh
(zh_CN manual pages, installed by scripts/install-deps.sh), with the roff markup removed.

Only the text is used, never committed. Documents are manual pages; sentences are their lines
split after 。！？；."""

import glob
import gzip
import os
import re

MAN_DIR = "/usr/share/man/zh_CN"

# roff escapes: fonts (\fB \f(CW \f[B]), named characters (\(em \[em]), strings (\*x \*(xx),
# sizes (\s+2), and the one-character escapes (\- \e \& \| \^ \c ...).
_ESCAPE = re.compile(r"\\(f(\(..|\[[^\]]*\]|.)|\(..|\[[^\]]*\]|\*(\(..|\[[^\]]*\]|.)|s[+-]?\d+|.)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def available():
    return bool(man_pages())


def man_pages():
    return sorted(glob.glob(os.path.join(MAN_DIR, "man*", "*.gz")))


def _plain(line):
    if line.startswith((".", "'")):
        if line.startswith((".\\\"", "'\\\"")):
            return ""  # comment
        parts = line[1:].split(None, 1)
        line = parts[1] if len(parts) > 1 else ""
        line = line.replace('"', "")
    line = _ESCAPE.sub(lambda m: "-" if m.group(1) == "-" else "", line)
    return _CONTROL.sub("", line).strip()


def document(path):
    """The text of one manual page: one line per non-empty roff line."""
    with gzip.open(path, "rb") as f:
        raw = f.read().decode("utf-8", "replace")
    lines = (_plain(l) for l in raw.splitlines())
    return "\n".join(l for l in lines if l)


def documents(limit=None, min_chinese=200):
    """Manual pages with at least `min_chinese` CJK characters, in path order."""
    out = []
    for path in man_pages():
        text = document(path)
        if sum(1 for c in text if "\u4e00" <= c <= "\u9fd5") >= min_chinese:
            out.append((os.path.relpath(path, MAN_DIR), text))
            if limit and len(out) >= limit:
                break
    return out


_SENTENCE_END = re.compile(r"(?<=[。！？；])")


def sentences(docs):
    """Sentences (lines split after Chinese sentence punctuation) that contain Chinese."""
    out = []
    for _, text in docs:
        for line in text.split("\n"):
            for s in _SENTENCE_END.split(line):
                s = s.strip()
                if any("\u4e00" <= c <= "\u9fd5" for c in s):
                    out.append(s)
    return out
