"""simdup.scrapy.NearDuplicatePipeline in a real Scrapy crawl (CrawlerProcess, in a
subprocess) of a local site served on 127.0.0.1: originals (real English and Chinese text
from data/sample), and for each a repost, a lightly edited copy, a copy in another HTML
template and, for Chinese, a copy in traditional characters (OpenCC's s2t). Exactly the copies
are dropped; and `simdup serve` is killed (-9) and restarted in the middle of the crawl
without losing any page it acknowledged."""

import html
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cli_harness import run
from service_harness import SOURCE_DIR, Server, free_port

pytest.importorskip("scrapy")

PACKAGE = str(SOURCE_DIR / "python" / "simdup")
N_ENGLISH = 8
N_CHINESE = 4
K = 5

SPIDER = r'''
import json, sys, types

# simdup.scrapy and simdup.client without the compiled module (service_harness.py says why).
package = types.ModuleType("simdup")
package.__path__ = [sys.argv[5]]
sys.modules["simdup"] = package

import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess

site, out_path, simdup_url = sys.argv[1], sys.argv[2], sys.argv[3]
extra = json.loads(sys.argv[4])
passed, dropped = [], []


class KeepPipeline:
    """After simdup's: records what got through."""
    def process_item(self, item, spider):
        passed.append(item["url"])
        return item


class Site(scrapy.Spider):
    name = "site"
    start_urls = [site + "/"]

    def parse(self, response):
        article = response.css("article")
        if article:
            text = " ".join(t.strip() for t in article.xpath(".//text()").getall() if t.strip())
            yield {"url": response.url, "title": response.css("title::text").get(),
                   "text": text}
        # The page's item first, then the pages it links to (its copies come after it).
        for href in response.css("a.next::attr(href)").getall():
            yield response.follow(href, self.parse)


def on_dropped(item, response, exception, spider):
    dropped.append({"url": item["url"], "reason": str(exception)})


process = CrawlerProcess(settings={
    "ITEM_PIPELINES": {"simdup.scrapy.NearDuplicatePipeline": 300, "__main__.KeepPipeline": 900},
    "SIMDUP_URL": simdup_url,
    "SIMDUP_COLLECTION": "pages",
    "SIMDUP_COLLECTION_SETTINGS": {"k": %(k)d, "window": "0"},
    "SIMDUP_TEXT_FIELD": "text",
    "SIMDUP_URL_FIELD": "url",
    "SIMDUP_BATCH_SIZE": 4,
    "SIMDUP_BATCH_DELAY": 0.05,
    "SIMDUP_RETRIES": 12,
    "CONCURRENT_REQUESTS": 2,
    "LOG_LEVEL": "INFO",
    "TELNETCONSOLE_ENABLED": False,
    "ROBOTSTXT_OBEY": False,
    "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    **extra,
})
crawler = process.create_crawler(Site)
crawler.signals.connect(on_dropped, signal=signals.item_dropped)
process.crawl(crawler)
process.start()
stats = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith(("simdup/", "item_"))}
with open(out_path, "w") as f:
    json.dump({"passed": passed, "dropped": dropped, "stats": stats}, f)
''' % {"k": K}


def originals():
    """Real documents of the bundled sample: English man pages and Chinese (zh_CN) ones,
    originals only (file:// urls), of a few kilobytes."""
    records = [json.loads(line) for line in (SOURCE_DIR / "data/sample/news.jsonl").open()]
    english = [r for r in records if r["url"].startswith("file:///usr/share/man/man")
               and 1500 < len(r["text"]) < 5000 and "#part" not in r["url"]]
    chinese = [r for r in records if r["url"].startswith("file:///usr/share/man/zh_CN/")
               and 800 < len(r["text"]) < 4000 and "#part" not in r["url"]]
    return english, chinese


def fingerprints(texts, tmp_path):
    """`simdup fingerprint` of each text (the collection's settings are the CLI's defaults)."""
    path = tmp_path / "fp.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n"
                            for i, t in enumerate(texts)), encoding="utf-8")
    out = run(["fingerprint", path], check=0).stdout.decode().splitlines()
    return [int(json.loads(line)["fingerprint"], 16) for line in out]


def pick_distinct(candidates, count, chosen_fps, tmp_path):
    """The first `count` candidates far (> 2K + 10 bits) from every other one chosen, so only
    the copies made below can be near-duplicates."""
    fps = fingerprints([c["text"] for c in candidates], tmp_path)
    picked = []
    for c, fp in zip(candidates, fps):
        if all(bin(fp ^ o).count("1") > 2 * K + 10 for o in chosen_fps):
            picked.append(c)
            chosen_fps.append(fp)
        if len(picked) == count:
            break
    assert len(picked) == count
    return picked


def edit_words(text, seed):
    """Replaces three words with others: a light edit."""
    rng = random.Random(seed)
    words = text.split(" ")
    spots = [i for i, w in enumerate(words) if w.isalpha() and len(w) > 3]
    for i in rng.sample(spots, 3):
        words[i] = rng.choice(["river", "yellow", "quietly", "seventeen", "market"])
    return " ".join(words)


def edit_chinese(text, seed):
    """Replaces three characters of Chinese text."""
    rng = random.Random(seed)
    chars = list(text)
    spots = [i for i, ch in enumerate(chars) if "\u4e00" <= ch <= "\u9fff"]
    for i in rng.sample(spots, 3):
        chars[i] = rng.choice("山水风云花")
    return "".join(chars)


def template_a(title, body_html, links):
    return (f"<!doctype html><html><head><title>{html.escape(title)}</title>"
            "<style>body{font:14px serif}</style></head><body>"
            "<nav><a href='/'>Home</a> | World | Technology</nav>"
            f"<article><h1>{html.escape(title)}</h1>{body_html}</article>"
            + "".join(f"<a class='next' href='{u}'>more</a>" for u in links)
            + "<footer>Example News, all rights reserved</footer></body></html>")


def template_b(title, text):
    """Another site's template: the same article inside other markup (divs, spans, line
    breaks, entities, inline tags)."""
    paras = [p for p in text.split("\n") if p.strip()]
    inner = "".join(
        "<div class='para'><span>" + "<br>".join(html.escape(p).split(". ")) + "</span></div>"
        for p in paras)
    return ("<html><head><title>Mirror: " + html.escape(title) + "</title>"
            "<script>var tracking = {id: 42};</script></head><body><div id='wrap'>"
            "<header>Mirror Blog</header><aside>Sponsored links</aside>"
            f"<div class='content'><article><h2>{html.escape(title)}</h2>{inner}</article>"
            "</div><footer>Reposted without permission</footer></div></body></html>")


def paragraphs(text):
    return "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n") if p.strip())


class Site:
    """The crawled site, and the kill -9 + restart of `simdup serve` when the crawl asks for
    the restart page."""

    def __init__(self, pages, restart_path, restart):
        self.pages = pages
        self.requests = []
        self.restart_path = restart_path
        self.restart = restart
        self.restart_thread = None
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                site.requests.append((time.time(), self.path))
                if self.path == site.restart_path and site.restart_thread is None:
                    site.restart_thread = threading.Thread(target=site.restart)
                    site.restart_thread.start()
                body = site.pages.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                time.sleep(0.03)  # a little latency, so the crawl spans the restart
                data = body.encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.skipif(shutil.which("opencc") is None, reason="needs OpenCC's opencc program")
def test_crawl_drops_exactly_the_copies_across_a_restart(tmp_path):
    english, chinese = originals()
    chosen = []
    english = pick_distinct(english, N_ENGLISH, chosen, tmp_path)
    chinese = pick_distinct(chinese, N_CHINESE, chosen, tmp_path)

    pages = {}
    index_links = []
    expected_pass, expected_drop = [], {}
    for n, rec in enumerate(english + chinese):
        zh = n >= N_ENGLISH
        text, title = rec["text"], rec["title"] or f"Article {n}"
        copies = {f"/repost/{n}": template_a("Repost: " + title, paragraphs(text), []),
                  f"/edit/{n}": template_a(title, paragraphs(
                      edit_chinese(text, n) if zh else edit_words(text, n)), []),
                  f"/wrap/{n}": template_b(title, text)}
        if zh:
            trad = subprocess.run(["opencc", "-c", "s2t.json"], input=text.encode(),
                                  stdout=subprocess.PIPE, check=True).stdout.decode()
            assert trad != text
            copies[f"/trad/{n}"] = template_a(title, paragraphs(trad), [])
        pages[f"/a/{n}"] = template_a(title, paragraphs(text), list(copies))
        pages.update(copies)
        index_links.append(f"/a/{n}")
        expected_pass.append(f"/a/{n}")
        for path in copies:
            expected_drop[path] = f"/a/{n}"
    pages["/"] = "<html><body>" + "".join(
        f"<a class='next' href='{u}'>{u}</a>" for u in index_links) + "</body></html>"

    port = free_port()
    data = tmp_path / "db"
    servers = [Server(["--data", str(data)], listen=f"127.0.0.1:{port}")]
    restart_times = []

    def restart():
        restart_times.append(time.time())
        servers[-1].kill9()
        servers[-1].close()
        servers.append(Server(["--data", str(data)], listen=f"127.0.0.1:{port}"))
        restart_times.append(time.time())

    site = Site(pages, f"/a/{N_ENGLISH - 2}", restart)
    try:
        script = tmp_path / "crawl.py"
        script.write_text(SPIDER)
        out = tmp_path / "out.json"
        env = dict(os.environ)
        proc = subprocess.run([sys.executable, str(script), site.url, str(out),
                               f"http://127.0.0.1:{port}", "{}", PACKAGE], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        log = proc.stderr.decode(errors="replace")
        assert proc.returncode == 0, log[-4000:]
        result = json.loads(out.read_text())
        site.restart_thread.join()
        # The restart happened while pages were still being crawled and checked.
        assert len(restart_times) == 2
        later = [t for t, _ in site.requests if t > restart_times[1]]
        assert later, "the crawl ended before the service came back"

        def path_of(url):
            return url[len(site.url):]

        passed = sorted(path_of(u) for u in result["passed"])
        dropped = {path_of(d["url"]): d["reason"] for d in result["dropped"]}
        assert passed == sorted(expected_pass), log[-3000:]
        assert sorted(dropped) == sorted(expected_drop)
        for path, reason in dropped.items():
            # Dropped as a copy of its own original (the only stored page near it).
            assert reason.startswith(f"near-duplicate of {site.url}{expected_drop[path]} "), (
                path, reason)
        stats = result["stats"]
        assert stats["simdup/new"] == len(expected_pass)
        assert stats["simdup/duplicate"] == len(expected_drop)
        assert stats.get("simdup/unchecked", 0) == 0 and stats.get("simdup/errors", 0) == 0
        # Some requests met the stopped service and were sent again.
        assert stats.get("simdup/retries", 0) > 0, stats
        assert stats["item_dropped_count"] == len(expected_drop)
        # Every page acknowledged as new is in the restarted service: nothing was lost.
        c = servers[-1].client()
        assert c.request("GET", "/v1/pages/stats")[1]["documents"] == len(expected_pass)
        for url in result["passed"]:
            from urllib.parse import quote
            status, body = c.request("GET", "/v1/pages/documents/" + quote(url, safe=""))
            assert status == 200, (url, body)
        c.close()
    finally:
        site.close()
        for s in servers:
            s.close()


@pytest.mark.parametrize("fail_open", [True, False])
def test_service_down_fails_open_or_closed_as_configured(tmp_path, fail_open):
    pages = {f"/a/{n}": template_a(f"Page {n}", paragraphs(f"page number {n} " * 30), [])
             for n in range(5)}
    pages["/"] = "<html><body>" + "".join(
        f"<a class='next' href='{u}'>{u}</a>" for u in pages) + "</body></html>"
    site = Site(pages, None, None)
    try:
        script = tmp_path / "crawl.py"
        script.write_text(SPIDER)
        out = tmp_path / "out.json"
        env = dict(os.environ)
        extra = {"SIMDUP_COLLECTION_SETTINGS": None, "SIMDUP_RETRIES": 1,
                 "SIMDUP_BACKOFF": 0.01, "SIMDUP_FAIL_OPEN": fail_open}
        # Nothing listens on this port.
        proc = subprocess.run([sys.executable, str(script), site.url, str(out),
                               f"http://127.0.0.1:{free_port()}", json.dumps(extra), PACKAGE],
                              env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        log = proc.stderr.decode(errors="replace")
        assert proc.returncode == 0, log[-4000:]
        result = json.loads(out.read_text())
        stats = result["stats"]
        assert stats["simdup/errors"] >= 1 and "simdup service" in log
        if fail_open:
            assert len(result["passed"]) == 5 and not result["dropped"]
            assert stats["simdup/unchecked"] == 5
        else:
            assert not result["passed"] and len(result["dropped"]) == 5
            assert all(d["reason"].startswith("simdup service unavailable")
                       for d in result["dropped"])
            assert stats["simdup/dropped_unavailable"] == 5
    finally:
        site.close()
