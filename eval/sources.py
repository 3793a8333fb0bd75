"""Real, freely licensed text from Debian packages, turned into plain-text documents.

Used by scripts/make_sample.py (the bundled sample) and eval/generate.py (the evaluation).
Every document carries its provenance: the Debian package, the file and the licence.
Only the Python standard library is used, so extraction is the same on every machine that
has the same package versions installed.
"""

from __future__ import annotations

import gzip
import subprocess
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path


@dataclass
class Doc:
    """One extracted document before any synthetic edit."""

    text: str
    title: str
    path: str  # file it came from (for the synthetic URL and the provenance table)
    package: str
    licence: str


def read_text(path: Path) -> str:
    """File contents as text; `.gz` is decompressed; invalid UTF-8 is replaced."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace")


def owning_package(path: Path, cache: dict[str, str]) -> str:
    """Debian package that ships `path` (by its /usr/share/doc/<pkg> or dpkg lists)."""
    parts = path.parts
    if len(parts) > 4 and parts[1:4] == ("usr", "share", "doc"):
        return parts[4]
    if not cache:
        info = Path("/var/lib/dpkg/info")
        for lst in sorted(info.glob("*.list")):
            pkg = lst.name[: -len(".list")].split(":")[0]
            for line in lst.read_text(errors="replace").splitlines():
                cache.setdefault(line, pkg)
    return cache.get(str(path), "unknown")


# ---------------------------------------------------------------- roff (man pages)

_ROFF_NAMED = {
    "em": "\u2014", "en": "\u2013", "aq": "'", "dq": '"', "lq": "\u201c", "rq": "\u201d",
    "oq": "\u2018", "cq": "\u2019", "bu": "\u2022", "co": "\u00a9", "rg": "\u00ae",
    "tm": "\u2122", "mu": "\u00d7", "de": "\u00b0", "ti": "~", "ha": "^", "ga": "`",
    "rs": "\\", "hy": "-", "mi": "-", "pl": "+", "eq": "=", "<=": "\u2264", ">=": "\u2265",
    "->": "\u2192", "<-": "\u2190", "sq": "\u25a1", "lA": "\u21d0", "rA": "\u21d2",
}
_ROFF_ESCAPE = re.compile(
    r"\\(\((..)|\[([^\]]*)\]|\*(\(..|\[[^\]]*\]|.)|f(\(..|\[[^\]]*\]|.)|s[+-]?\d+|"
    r"[&|^,/:%c]|-|e|~| |0|\"[^\n]*|.)"
)
_PARAGRAPH_MACROS = {"PP", "LP", "P", "TP", "HP", "sp", "br", "RS", "RE", "nf", "fi", "Sh", "Pp",
                     "TQ", "EX", "EE", "in", "ti", "ne", "bp"}
_FONT_MACROS = {"B", "I", "BR", "IR", "RB", "RI", "BI", "IB", "SM", "SB", "UR", "MT", "OP"}


def _roff_escape(m: re.Match[str]) -> str:
    whole = m.group(1)
    if m.group(2) is not None:
        return _ROFF_NAMED.get(m.group(2), "")
    if m.group(3) is not None:
        name = m.group(3)
        if name.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
            return chr(int(name[1:], 16))
        return _ROFF_NAMED.get(name, "")
    if whole == "-":
        return "-"
    if whole == "e":
        return "\\"
    if whole in ("~", " ", "0"):
        return " "
    return ""


def _roff_args(rest: str) -> list[str]:
    return [a[1:-1] if len(a) >= 2 and a[0] == '"' and a[-1] == '"' else a
            for a in re.findall(r'"[^"]*"|\S+', rest)]


def roff_to_text(src: str) -> tuple[str, str]:
    """(title, text) of a man(7) page: headings and paragraphs, macros and escapes removed.

    Not a full troff: enough to recover the prose a reader sees. Pages written with mdoc(7)
    or that only include another page (`.so`) give an empty text.
    """
    if re.search(r"^\.(Dd|so)\b", src, re.M):
        return "", ""
    title = ""
    paragraphs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    in_definition = False
    for line in src.splitlines():
        if in_definition:  # a macro body (.de NAME ... ..) is code, not text
            in_definition = not line.startswith("..")
            continue
        if re.match(r"[.']\s*(de|am|ig)\b", line):
            in_definition = True
            continue
        if re.match(r"[.']\s*(if|ie|el|ds|nr|tr|so|ft|ps|ll|hy|nh|ad|na|cs|ss|ta|lf|mso)\b", line):
            continue
        if line.startswith((".\\\"", "'\\\"", '."', "\\\"")):
            continue
        if line.startswith((".", "'")):
            m = re.match(r"[.']\s*(\S+)\s*(.*)", line)
            if not m:
                continue
            name, rest = m.group(1), m.group(2)
            rest = _ROFF_ESCAPE.sub(_roff_escape, rest)
            if name == "TH":
                args = _roff_args(rest)
                title = f"{args[0]}({args[1]})" if len(args) > 1 else (args[0] if args else "")
            elif name in ("SH", "SS"):
                flush()
                paragraphs.append(" ".join(_roff_args(rest)))
            elif name in _PARAGRAPH_MACROS:
                flush()
            elif name == "IP":
                flush()
                args = _roff_args(rest)
                if args:
                    current.append(args[0])
            elif name in _FONT_MACROS:
                args = _roff_args(rest)
                # .BR, .IR, ... alternate fonts between arguments without a space.
                alternating = len(name) == 2 and name not in ("SM", "SB", "UR", "MT", "OP")
                joiner = "" if alternating else " "
                if args:
                    current.append(joiner.join(args))
            continue
        text = _ROFF_ESCAPE.sub(_roff_escape, line).strip()
        if text:
            current.append(text)
    flush()
    body = "\n\n".join(p for p in (re.sub(r"\s+", " ", p).strip() for p in paragraphs) if p)
    return title, body


# ---------------------------------------------------------------- HTML documentation

_BLOCK_TAGS = {"p", "div", "li", "pre", "dt", "dd", "tr", "table", "section", "blockquote",
               "br", "ul", "ol", "dl", "h1", "h2", "h3", "h4", "h5", "h6", "title", "td", "th"}
_SKIP_TAGS = {"script", "style", "head", "nav", "noscript"}
_SKIP_CLASSES = ("navheader", "navfooter", "sphinxsidebar", "related", "footer", "toc",
                 "headerlink", "breadcrumb", "legalnotice", "docnav", "indexterm")
_SKIP_IDS = ("banner", "title", "site-footer", "breadcrumbs")


class _Blocks(HTMLParser):
    """Collects (kind, text) blocks; kind is 'h1'..'h6' for headings, 'p' otherwise."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, str]] = []
        self._buf: list[str] = []
        self._skip_stack: list[str] = []  # tags that opened a skipped region
        self._heading = ""

    def _flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self._buf)).strip()
        self._buf.clear()
        if text:
            self.blocks.append((self._heading or "p", text))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        cls = " ".join(v or "" for k, v in attrs if k == "class")
        ident = next((v or "" for k, v in attrs if k == "id"), "")
        if self._skip_stack:
            if tag == self._skip_stack[-1][0]:
                self._skip_stack.append((tag, 0))  # type: ignore[arg-type]
            return
        if (tag in _SKIP_TAGS or ident in _SKIP_IDS
                or any(c in cls.split() for c in _SKIP_CLASSES)):
            if tag not in ("br", "img", "hr", "meta", "link", "input"):
                self._skip_stack.append((tag, 0))  # type: ignore[arg-type]
            return
        if tag in _BLOCK_TAGS:
            self._flush()
            if re.fullmatch(r"h[1-6]", tag):
                self._heading = tag

    def handle_endtag(self, tag: str) -> None:
        if self._skip_stack:
            if tag == self._skip_stack[-1][0]:
                self._skip_stack.pop()
            return
        if tag in _BLOCK_TAGS:
            self._flush()
            if re.fullmatch(r"h[1-6]", tag):
                self._heading = ""

    def handle_data(self, data: str) -> None:
        if not self._skip_stack:
            self._buf.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


def html_blocks(src: str) -> list[tuple[str, str]]:
    """Visible text blocks of an HTML page, navigation and scripts dropped."""
    parser = _Blocks()
    parser.feed(src)
    parser.close()
    return parser.blocks


def chunk_blocks(blocks: list[tuple[str, str]], min_chars: int, max_chars: int,
                 ) -> list[tuple[str, str]]:
    """Groups blocks into (title, text) documents that start at headings when possible.

    A document closes at a heading once it holds `min_chars`, and before a block that would
    take it past `max_chars`. Its title is its first heading (or its first words).
    """
    out: list[tuple[str, str]] = []
    title, parts, size = "", [], 0

    def close() -> None:
        if parts and size >= min_chars // 4:
            body = "\n\n".join(parts)
            out.append((title or body[:60], body))

    for kind, text in blocks:
        starts_section = kind != "p"
        if parts and ((starts_section and size >= min_chars) or size + len(text) > max_chars):
            close()
            title, parts, size = "", [], 0
        if starts_section and not title:
            title = text
        parts.append(text)
        size += len(text)
    close()
    return out


# ---------------------------------------------------------------- source catalogues


def _files(pattern_root: str, glob: str) -> list[Path]:
    root = Path(pattern_root)
    return sorted(p for p in root.glob(glob) if p.is_file()) if root.is_dir() else []


def common_licenses() -> list[Doc]:
    """Every text in /usr/share/common-licenses (base-files); symlinks give exact copies."""
    out = []
    for p in sorted(Path("/usr/share/common-licenses").iterdir()):
        if p.is_file():
            text = read_text(p)
            out.append(Doc(text.strip(), f"{p.name} licence text", str(p), "base-files",
                           "verbatim copying permitted (each licence's own notice)"))
    return out


def copyright_files(max_chars: int) -> list[Doc]:
    """/usr/share/doc/*/copyright of `max_chars` or less: Debian's per-package copyright and
    licence summaries."""
    out = []
    for p in _files("/usr/share/doc", "*/copyright"):
        text = read_text(p).strip()
        if 200 <= len(text) <= max_chars:
            out.append(Doc(text, f"{p.parent.name} copyright", str(p), p.parent.name,
                           "as stated in the file (distributed with the package)"))
    return out


def man_page_files(lang_dir: str, sections: tuple[str, ...] = ("1", "5", "7", "8"),
                   ) -> list[Path]:
    """Man page files (no symlinks) under /usr/share/man/<lang_dir>/man<section>."""
    base = Path("/usr/share/man") / lang_dir if lang_dir else Path("/usr/share/man")
    return [p for sec in sections for p in _files(str(base / f"man{sec}"), "*.gz")
            if not p.is_symlink()]


def man_pages(files: list[Path], package_of: dict[str, str], licence: dict[str, str],
              min_chars: int = 300) -> list[Doc]:
    """Man pages with roff stripped to prose; pages shorter than `min_chars` are left out."""
    out = []
    for p in files:
        title, text = roff_to_text(read_text(p))
        if len(text) < min_chars:
            continue
        pkg = owning_package(p, package_of)
        out.append(Doc(text, title or p.name, str(p), pkg, package_licence(pkg, licence)))
    return out


def html_docs(paths: list[Path], package: str, licence: str, min_chars: int = 1500,
              max_chars: int = 9000) -> list[Doc]:
    """Sections of HTML manuals, each a document of roughly min..max characters."""
    out = []
    for p in paths:
        for title, text in chunk_blocks(html_blocks(read_text(p)), min_chars, max_chars):
            out.append(Doc(text, title, str(p), package, licence))
    return out


def fortunes(path: str, package: str, licence: str, per_doc: int) -> list[Doc]:
    """A fortune file (entries separated by `%` lines), `per_doc` entries per document."""
    p = Path(path)
    if not p.is_file():
        return []
    entries = [e.strip() for e in re.split(r"^%\s*$", read_text(p), flags=re.M) if e.strip()]
    out = []
    for i in range(0, len(entries), per_doc):
        group = entries[i : i + per_doc]
        out.append(Doc("\n\n".join(group), group[0].splitlines()[0][:40], f"{path}#{i}",
                       package, licence))
    return out


def package_licence(package: str, cache: dict[str, str]) -> str:
    """The first `License:` of a package's machine-readable copyright file, or a pointer."""
    if package not in cache:
        path = Path("/usr/share/doc") / package / "copyright"
        found = ""
        if path.is_file():
            m = re.search(r"^License:[ \t]*(\S[^\n]*)", read_text(path), re.M)
            found = m.group(1).strip() if m else ""
        cache[package] = found or f"see /usr/share/doc/{package}/copyright"
    return cache[package]


def split_long(docs: list[Doc], max_chars: int) -> list[Doc]:
    """Documents longer than `max_chars` cut into parts at paragraph boundaries."""
    out = []
    for d in docs:
        if len(d.text) <= max_chars:
            out.append(d)
            continue
        blocks = [("p", p) for p in re.split(r"\n\s*\n", d.text) if p.strip()]
        for k, (_, text) in enumerate(chunk_blocks(blocks, max_chars, max_chars)):
            out.append(Doc(text, f"{d.title} ({k + 1})", d.path, d.package, d.licence))
    return out


def debian_packages(packages: set[str]) -> set[str]:
    """The packages among `packages` installed from Debian's archive (apt-cache policy names
    deb.debian.org); text from third-party packages may not be free to redistribute."""
    if not packages:
        return set()
    proc = subprocess.run(["apt-cache", "policy", *sorted(packages)], capture_output=True,
                          text=True, check=True)
    found = {block.split(":", 1)[0].strip() for block in re.split(r"\n(?=\S)", proc.stdout)
             if "deb.debian.org" in block}
    if not found:
        raise RuntimeError("apt-cache knows no package from deb.debian.org: the package lists "
                           "are missing (run `apt-get update`)")
    return found


def from_debian(docs: list[Doc]) -> list[Doc]:
    """Only the documents whose package comes from Debian's archive."""
    debian = debian_packages({d.package for d in docs})
    return [d for d in docs if d.package in debian]


def debian_files(files: list[Path], package_of: dict[str, str]) -> list[Path]:
    """Only the files shipped by a package from Debian's archive."""
    owners = [owning_package(p, package_of) for p in files]
    debian = debian_packages(set(owners))
    return [p for p, o in zip(files, owners) if o in debian]
