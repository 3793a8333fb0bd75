"""report.html shows an HTML document's text as dedup compared it (its markup read as HTML),
not the markup itself as escaped source (issue 36, item 9)."""

import html
import re

from cli_harness import run, write_jsonl

STORY = ("The harbour authority said on Monday that the old pier will close for repairs "
         "until the spring, and that the ferries to the islands will leave from the north quay "
         "instead. Fish & chips stalls on the pier move to the market square.")


def page(body_markup, head=""):
    return (f"<!DOCTYPE html><html><head><title>Harbour</title>{head}</head><body>"
            f"{body_markup}</body></html>")


def sample_texts(report):
    """The texts of the report's sample documents, unescaped."""
    return [html.unescape(re.sub(r"<[^>]+>", "", t))
            for t in re.findall(r'<div class="doc">(.*?)</div>', report, re.S)]


def test_html_documents_are_shown_as_their_text(tmp_path):
    paragraphs = "".join(f"<p>{html.escape(s.strip())}.</p>" for s in STORY.split(".") if s)
    records = [
        {"id": "a", "text": page(paragraphs)},
        # The same story with other markup: a script, a style, a nav, entities.
        {"id": "b", "text": page("<nav><a href='/'>Home</a></nav>" + paragraphs.replace(
            "<p>", "<div class='para'>").replace("</p>", "</div>"),
            head="<style>p { color: #333 }</style><script>if (a < b) go();</script>")},
        {"id": "c", "text": "A plain text about something else entirely, with <angle> brackets "
                            "kept as they are, since it is not an HTML document at all."},
    ]
    path = write_jsonl(tmp_path / "in.jsonl", records)
    run(["dedup", path, "--out", tmp_path / "out", "-q"], check=0)
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    # The cluster of a and b is shown, by its documents' text.
    assert "&lt;p&gt;" not in report and "&lt;html" not in report.lower()
    assert "&lt;script" not in report and "go()" not in report and "color: #333" not in report
    texts = sample_texts(report)
    assert len(texts) >= 2, report
    for text in texts:
        assert "Fish & chips stalls on the pier" in text, text
        assert "<" not in text and "DOCTYPE" not in text
    # Markup-free text keeps its characters; it is in no cluster here, so not on the page.
    assert "angle" not in report


def test_html_flag_reads_every_text_as_html(tmp_path):
    body = "<b>Breaking</b>: " + STORY
    records = [{"id": "x", "text": body}, {"id": "y", "text": body.replace("<b>", "<i>")
                                                                  .replace("</b>", "</i>")}]
    path = write_jsonl(tmp_path / "in.jsonl", records)
    run(["dedup", path, "--html", "--out", tmp_path / "out", "-q"], check=0)
    texts = sample_texts((tmp_path / "out" / "report.html").read_text(encoding="utf-8"))
    assert texts and all(t.startswith("Breaking: The harbour") for t in texts), texts
