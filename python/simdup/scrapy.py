"""A Scrapy item pipeline that drops near-duplicate pages, asking `simdup serve`.

    # settings.py
    ITEM_PIPELINES = {"simdup.scrapy.NearDuplicatePipeline": 300}
    SIMDUP_URL = "http://127.0.0.1:8080"
    SIMDUP_COLLECTION = "pages"
    SIMDUP_TOKEN = None                 # the server's --token-file contents, if it has one
    SIMDUP_TEXT_FIELD = "text"          # the item field holding the page's text
    SIMDUP_URL_FIELD = "url"            # the document id (a hash of the text when missing)
    SIMDUP_TITLE_FIELD = None           # e.g. "title": put before the text when set
    SIMDUP_COLLECTION_SETTINGS = None   # e.g. {"k": 3, "window": "7d"}: created at open
    SIMDUP_BATCH_SIZE = 50              # items per request
    SIMDUP_BATCH_DELAY = 0.05           # seconds an item waits for others to share a request
    SIMDUP_FAIL_OPEN = True             # service down: keep items (True) or drop them (False)

Each item with text is sent to POST /v1/{collection}/check-insert. An item the service calls a
duplicate is dropped with DropItem("near-duplicate of <id> (distance d, jaccard j)"; without
"jaccard j" when the collection does not verify); a new one is passed
on, and is then stored durably by the service. Items without text pass unchecked.

Batching: Scrapy lets process_item return a Deferred, so items are held (at most
SIMDUP_BATCH_DELAY seconds, or until SIMDUP_BATCH_SIZE are waiting) and sent as one batch
request from a thread, while Scrapy goes on crawling. Batches are sent one at a time, in the
order their items arrived, so an item is checked against every item that came before it (a
page's copies linked from it are never kept in its place).

When the service is down: the client retries (simdup.client.Client: connection failures and
503s with backoff, a lost check-insert answer resolved without inserting twice). If it still
gets no answer, SIMDUP_FAIL_OPEN decides: True (default) keeps the items unchecked -- a crawl
should not lose pages because the dedup service is away; they are counted in
`simdup/unchecked` and not remembered by the service -- False drops them with DropItem("simdup
service unavailable"). Other service errors (a wrong token: 401, a missing collection: 404)
are logged and handled the same way.

Stats (in Scrapy's stats collector): simdup/new, simdup/duplicate, simdup/too_short,
simdup/no_text, simdup/unchecked, simdup/dropped_unavailable, simdup/errors, simdup/batches,
simdup/recovered (check-insert answers lost and recovered), simdup/retries (attempts the client
made again).
"""

from __future__ import annotations

import hashlib
import logging

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem, NotConfigured
from twisted.internet import defer, reactor, threads

from simdup.client import Client, Document, ServiceError

__all__ = ["NearDuplicatePipeline"]

logger = logging.getLogger(__name__)


def _closeness(match) -> str:
    """"distance d, jaccard j" of a match ("distance d" when the pair was not verified)."""
    if match.jaccard is None:
        return f"distance {match.distance}"
    return f"distance {match.distance}, jaccard {match.jaccard:.2f}"


class NearDuplicatePipeline:
    """Drops items whose text is a near-duplicate of one seen before (see the module docs)."""

    def __init__(self, client, collection, stats, text_field="text", url_field="url",
                 title_field=None, batch_size=50, batch_delay=0.05, fail_open=True,
                 collection_settings=None):
        if batch_size < 1 or batch_delay < 0:
            raise ValueError("SIMDUP_BATCH_SIZE must be at least 1, SIMDUP_BATCH_DELAY >= 0")
        self.client = client
        self.collection = collection
        self.stats = stats
        self.text_field = text_field
        self.url_field = url_field
        self.title_field = title_field
        self.batch_size = batch_size
        self.batch_delay = batch_delay
        self.fail_open = fail_open
        self.collection_settings = collection_settings
        self._waiting = []  # (item, document, deferred)
        self._timer = None
        self._sending = defer.DeferredLock()  # one batch at a time, in arrival order
        self._in_flight = set()

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        url = s.get("SIMDUP_URL")
        collection = s.get("SIMDUP_COLLECTION")
        if not url or not collection:
            raise NotConfigured("NearDuplicatePipeline needs SIMDUP_URL and SIMDUP_COLLECTION")
        client = Client(url, token=s.get("SIMDUP_TOKEN"),
                        timeout=s.getfloat("SIMDUP_TIMEOUT", 10.0),
                        retries=s.getint("SIMDUP_RETRIES", 8),
                        backoff=s.getfloat("SIMDUP_BACKOFF", 0.1),
                        max_connections=s.getint("SIMDUP_MAX_CONNECTIONS", 4))
        return cls(client, collection, crawler.stats,
                   text_field=s.get("SIMDUP_TEXT_FIELD", "text"),
                   url_field=s.get("SIMDUP_URL_FIELD", "url"),
                   title_field=s.get("SIMDUP_TITLE_FIELD"),
                   batch_size=s.getint("SIMDUP_BATCH_SIZE", 50),
                   batch_delay=s.getfloat("SIMDUP_BATCH_DELAY", 0.05),
                   fail_open=s.getbool("SIMDUP_FAIL_OPEN", True),
                   collection_settings=s.getdict("SIMDUP_COLLECTION_SETTINGS") or None)

    def open_spider(self, spider):
        if self.collection_settings is not None:
            return threads.deferToThread(self.client.create_collection, self.collection,
                                         **self.collection_settings)
        return None

    def close_spider(self, spider):
        self._flush()
        pending = list(self._in_flight)
        d = defer.DeferredList(pending) if pending else defer.succeed(None)
        d.addBoth(lambda _: self.client.close())
        return d

    def _document(self, adapter):
        text = adapter.get(self.text_field)
        if isinstance(text, (list, tuple)):
            text = " ".join(str(t) for t in text)
        if not text or not str(text).strip():
            return None
        text = str(text)
        if self.title_field and adapter.get(self.title_field):
            text = f"{adapter.get(self.title_field)}\n\n{text}"
        doc_id = adapter.get(self.url_field) if self.url_field else None
        if not doc_id:
            doc_id = "sha1:" + hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()
        return Document(str(doc_id), text=text)

    def process_item(self, item, spider):
        doc = self._document(ItemAdapter(item))
        if doc is None:
            self.stats.inc_value("simdup/no_text", spider=spider)
            return item
        d = defer.Deferred()
        self._waiting.append((item, doc, d, spider))
        if len(self._waiting) >= self.batch_size:
            self._flush()
        elif self._timer is None:
            self._timer = reactor.callLater(self.batch_delay, self._flush)
        return d

    def _flush(self):
        if self._timer is not None:
            if self._timer.active():
                self._timer.cancel()
            self._timer = None
        if not self._waiting:
            return
        batch, self._waiting = self._waiting, []
        sent = self._sending.run(threads.deferToThread, self.client.check_insert_many,
                                 self.collection, [doc for _, doc, _, _ in batch])
        self._in_flight.add(sent)
        sent.addBoth(self._done, sent)
        sent.addCallbacks(self._answer, self._failed, callbackArgs=(batch,),
                          errbackArgs=(batch,))

    def _done(self, result, sent):
        self._in_flight.discard(sent)
        return result

    def _answer(self, results, batch):
        spider = batch[0][3]
        self.stats.inc_value("simdup/batches", spider=spider)
        self.stats.set_value("simdup/retries", self.client.retried, spider=spider)
        for (item, doc, d, _), r in zip(batch, results):
            if r.recovered:
                self.stats.inc_value("simdup/recovered", spider=spider)
            self.stats.inc_value(f"simdup/{r.status}", spider=spider)
            if r.is_duplicate:
                closest = r.matches[0] if r.matches else None
                reason = (f"near-duplicate of {closest.id} ({_closeness(closest)})"
                          if closest else "near-duplicate")
                d.errback(DropItem(reason))
            else:
                d.callback(item)

    def _failed(self, failure, batch):
        spider = batch[0][3]
        self.stats.inc_value("simdup/errors", spider=spider)
        err = failure.value
        what = (f"{err.status} {err.code}: {err.message}" if isinstance(err, ServiceError)
                else repr(err))
        logger.error("simdup service: %d items not checked: %s", len(batch), what)
        for item, _, d, _ in batch:
            if self.fail_open:
                self.stats.inc_value("simdup/unchecked", spider=spider)
                d.callback(item)
            else:
                self.stats.inc_value("simdup/dropped_unavailable", spider=spider)
                d.errback(DropItem(f"simdup service unavailable ({what})"))
