"""A client for `simdup serve` (docs/service.md), standard library only.

    from simdup.client import Client

    with Client("http://127.0.0.1:8080", token="...") as c:
        c.create_collection("news", k=3, window="7d")
        r = c.check_insert("news", "https://example.com/a", text="Breaking: ...")
        if r.is_duplicate:
            print("seen before as", r.matches[0].id, "at distance", r.matches[0].distance)

One client may be shared by any number of threads: it keeps a pool of keep-alive HTTP/1.1
connections (at most `max_connections` in use at once; more callers wait for one).

Fingerprints are Python ints (unsigned 64-bit) both ways: they are sent as JSON integers and the
client asks the server for integers back (`?fingerprint_format=int`).

Retries (with exponential backoff, `retries` times) never insert a document twice:

- a request that never reached the server (connection refused or reset while connecting, the
  server restarting) is sent again, whatever it is;
- `check`, `insert`, `get` and `delete` are sent again after any transport failure or a 503:
  checking and reading change nothing, and inserting or deleting an id twice leaves the same
  state as once (an insert replaces the document with that id);
- `check_insert` is not simply sent again after a failure that may have reached the server (the
  first attempt may have inserted the document, and a second one would then report it a
  duplicate of itself). The client first asks the server which of its ids are now stored
  (`GET /v1/{c}/documents/{id}`): those were inserted by the first attempt (answered `new`,
  with `recovered=True`); only the others are sent again. This assumes, as crawlers do, that
  no one else inserts the same ids at the same moment.

HTTP errors other than 503 (400, 401, 404, 405, 413, 500, ...) are raised at once as
ServiceError with the server's code and message.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time as _time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

__all__ = [
    "Client",
    "CollectionInfo",
    "Document",
    "Match",
    "Result",
    "ServiceError",
    "ServiceUnavailable",
    "StoredDocument",
]

_MAX_U64 = (1 << 64) - 1


class ServiceError(Exception):
    """An error answer of the service: `status` (HTTP), `code` and `message` from its JSON."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class ServiceUnavailable(ServiceError):
    """The service could not be reached (or answered 503) within the retries."""

    def __init__(self, message: str):
        super().__init__(503, "unavailable", message)


@dataclass(frozen=True)
class Match:
    """A stored document near the query: its id, Hamming distance and, where the server
    verified the pair, the Jaccard similarity of their shingle sets (else None)."""

    id: str
    distance: int
    jaccard: Optional[float] = None


@dataclass(frozen=True)
class Result:
    """The answer for one document.

    status: "new" or "duplicate" (check_insert), "unique" or "duplicate" (check), "inserted"
    (insert), "expired" (insert and check_insert: its time is already out of the collection's
    window, so it is not stored), or "too_short" (a text with too few features: never stored,
    never a match).
    fingerprint: the document's fingerprint (None for too_short). matches: closest first.
    recovered: check_insert only, after a failed attempt: the server had stored the document
    during that attempt (so it is "new"; the matches of that attempt are not known).
    """

    id: str
    status: str
    fingerprint: Optional[int]
    matches: tuple = ()
    recovered: bool = False

    @property
    def is_duplicate(self) -> bool:
        return self.status == "duplicate"

    @property
    def is_new(self) -> bool:
        return self.status in ("new", "unique", "inserted")


@dataclass(frozen=True)
class StoredDocument:
    """A stored document: fingerprint, time (seconds since the epoch) and when the window drops
    it (None without a window)."""

    id: str
    fingerprint: int
    time: int
    expires: Optional[int]


@dataclass(frozen=True)
class CollectionInfo:
    """A collection's settings (as PUT /v1/{c} takes them) and its document count."""

    name: str
    k: int
    window_s: int
    compat: str
    shingle_width: int
    features: str
    top_k: int
    verify: str = "off"
    #: Shingle hashes kept per text document for verification; a server from before the setting
    #: kept 128.
    sketch: int = 128
    #: MinHash bands ("10x6") or "off" (also what a server from before the setting answers).
    minhash: str = "off"
    documents: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Document:
    """A document to send: exactly one of `text` and `fingerprint`; `time` in seconds since the
    epoch (the server's clock when None)."""

    id: str
    text: Optional[str] = None
    fingerprint: Optional[int] = None
    time: Optional[int] = None


DocumentLike = Union[Document, Mapping[str, Any]]

_SETTINGS_FIELDS = ("name", "k", "window_s", "compat", "shingle_width", "features", "top_k",
                    "verify", "sketch", "minhash")


def _document_json(doc: DocumentLike) -> dict:
    if isinstance(doc, Document):
        doc = {"id": doc.id, "text": doc.text, "fingerprint": doc.fingerprint, "time": doc.time}
    doc_id = doc.get("id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or doc_id == "":
        raise ValueError(f"document id must be a non-empty string or an int, not {doc_id!r}")
    text, fp = doc.get("text"), doc.get("fingerprint")
    if (text is None) == (fp is None):
        raise ValueError(f"document {doc_id!r}: give exactly one of text and fingerprint")
    out: dict = {"id": doc_id}
    if text is not None:
        if not isinstance(text, str):
            raise ValueError(f"document {doc_id!r}: text must be a str")
        out["text"] = text
    else:
        if isinstance(fp, str):
            fp = int(fp, 16)
        if isinstance(fp, bool) or not isinstance(fp, int) or not 0 <= fp <= _MAX_U64:
            raise ValueError(f"document {doc_id!r}: fingerprint must be an int from 0 to 2**64-1")
        out["fingerprint"] = fp
    t = doc.get("time")
    if t is not None:
        if isinstance(t, bool) or not isinstance(t, int):
            raise ValueError(f"document {doc_id!r}: time must be an int (seconds since the epoch)")
        out["time"] = t
    return out


def _result(obj: Mapping[str, Any], recovered: bool = False) -> Result:
    fp = obj.get("fingerprint")
    if isinstance(fp, str):
        fp = int(fp, 16)
    matches = tuple(Match(str(m["id"]), int(m["distance"]), m.get("jaccard"))
                    for m in obj.get("matches", ()))
    return Result(str(obj["id"]), obj["status"], fp, matches, recovered)


class _Ambiguous(Exception):
    """The request may have reached the server, and no answer came back."""


class Client:
    """A thread-safe client of one `simdup serve`.

    url: "http://HOST:PORT" (a path prefix is kept, for a proxy). token: the bearer token of a
    server started with --token-file. timeout: seconds for connecting and for each answer.
    retries: further attempts after a failure that may be retried (see the module docstring),
    waiting backoff, 2 * backoff, ... (each with up to 50% jitter, capped at max_backoff).
    max_connections: keep-alive connections open at most (callers beyond wait for one).
    max_documents: batches are split into requests of at most this many documents (the
    server's --max-docs), sent in order, so each document still sees the ones before it.
    idle_timeout: seconds a pooled connection may sit unused before it is closed rather than
    reused; keep it below the server's --timeout (default 10 s), so that a request is not sent
    on a connection the server is closing (for a check-insert that would cost a recovery).
    """

    def __init__(self, url: str = "http://127.0.0.1:8080", token: Optional[str] = None,
                 timeout: float = 10.0, retries: int = 5, backoff: float = 0.1,
                 max_backoff: float = 5.0, max_connections: int = 16,
                 max_documents: int = 1000, idle_timeout: float = 5.0):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(f"url must be http://HOST[:PORT][/prefix], not {url!r}")
        if max_connections < 1 or max_documents < 1 or retries < 0 or timeout <= 0:
            raise ValueError("max_connections, max_documents and timeout must be positive, "
                             "retries at least 0")
        self._host = parsed.hostname
        self._port = parsed.port or 80
        self._prefix = parsed.path.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_documents = max_documents
        self.idle_timeout = idle_timeout
        self._idle: list = []  # (connection, time.monotonic() when it was released)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_connections)
        self._closed = False
        self._retried = 0

    @property
    def retried(self) -> int:
        """Attempts made again so far (all threads): connection failures, 503s, lost answers."""
        return self._retried

    def _count_retry(self) -> None:
        with self._lock:
            self._retried += 1

    # -- connection pool ------------------------------------------------------------------

    def _acquire(self) -> http.client.HTTPConnection:
        self._slots.acquire()
        stale = []
        conn = None
        with self._lock:
            now = _time.monotonic()
            while self._idle:
                candidate, since = self._idle.pop()
                if now - since < self.idle_timeout:
                    conn = candidate
                    break
                stale.append(candidate)
        for c in stale:
            c.close()
        return conn or http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def _release(self, conn: Optional[http.client.HTTPConnection]) -> None:
        if conn is not None:
            with self._lock:
                if self._closed:
                    conn.close()
                else:
                    self._idle.append((conn, _time.monotonic()))
        self._slots.release()

    def close(self) -> None:
        """Closes the idle connections (connections in use close when their request ends)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- one exchange ---------------------------------------------------------------------

    def _exchange(self, method: str, path: str, body: Optional[bytes]):
        """One HTTP exchange on a pooled connection: (status, parsed body). Raises
        ConnectionRefusedError and friends when the request surely did not reach the server,
        _Ambiguous when it may have."""
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        conn = self._acquire()
        try:
            if conn.sock is None:
                conn.connect()  # failures here never reached the server
            try:
                conn.request(method, self._prefix + path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException) as e:
                # The server may have closed an idle keep-alive connection, or may have been
                # stopped with the request in hand: the caller decides.
                conn.close()
                raise _Ambiguous(str(e) or type(e).__name__) from e
        except BaseException:
            conn.close()
            self._release(None)
            raise
        if resp.will_close:
            conn.close()
        self._release(conn)
        ctype = resp.getheader("Content-Type", "")
        if "json" in ctype:
            try:
                return resp.status, json.loads(data)
            except ValueError:
                pass
        return resp.status, data.decode("utf-8", "replace")

    def _sleep(self, attempt: int) -> None:
        delay = min(self.max_backoff, self.backoff * (2 ** attempt))
        _time.sleep(delay * (1 + random.random() / 2))

    def _request(self, method: str, path: str, payload: Any = None, idempotent: bool = True,
                 ok: Sequence[int] = (200,)):
        """Sends with retries; returns (status, body) for a status in `ok`, else raises.

        Not idempotent: only failures that surely did not reach the server are retried; others
        raise _Ambiguous for the caller to resolve."""
        body = None if payload is None else json.dumps(payload, ensure_ascii=False).encode()
        last: Optional[BaseException] = None
        for attempt in range(self.retries + 1):
            if attempt:
                self._count_retry()
                self._sleep(attempt - 1)
            try:
                status, data = self._exchange(method, path, body)
            except _Ambiguous as e:
                if not idempotent:
                    raise
                last = e
                continue
            except OSError as e:  # connect() failed: nothing was sent
                last = e
                continue
            if status in ok:
                return status, data
            err = data.get("error", {}) if isinstance(data, dict) else {}
            code = err.get("code", "http_error")
            message = err.get("message", str(data)[:200])
            if status == 503:
                # Unavailable (too many connections, Redis unreachable): a Redis connection may
                # have broken after the script ran, so only requests safe to repeat go again.
                if not idempotent:
                    raise _Ambiguous(f"503 {code}: {message}")
                last = ServiceError(status, code, message)
                continue
            raise ServiceError(status, code, message)
        raise ServiceUnavailable(f"{method} {path}: no answer after {self.retries + 1} attempts: "
                                 f"{last}")

    @staticmethod
    def _quote(name: str) -> str:
        return urllib.parse.quote(str(name), safe="")

    # -- collections ----------------------------------------------------------------------

    def health(self) -> bool:
        """True when GET /healthz answers ok."""
        _, body = self._request("GET", "/healthz")
        return isinstance(body, dict) and body.get("status") == "ok"

    def create_collection(self, name: str, **settings: Any) -> CollectionInfo:
        """PUT /v1/{name}: k, window ("7d") or window_s, compat, shingle_width, features, top_k,
        verify ("jaccard:0.8" or "off"), sketch (16 to 4096) and minhash ("10x6" or "off"). The
        same settings again are accepted; different ones raise ServiceError (400)."""
        _, body = self._request("PUT", "/v1/" + self._quote(name), settings)
        return self._info(body)

    def drop_collection(self, name: str) -> bool:
        """DELETE /v1/{name} with all its documents; False when there was none."""
        status, _ = self._request("DELETE", "/v1/" + self._quote(name), ok=(200, 404))
        return status == 200

    def collections(self) -> list:
        """Every collection: a list of CollectionInfo, by name."""
        _, body = self._request("GET", "/v1")
        return [self._info(c) for c in body["collections"]]

    def stats(self, collection: str) -> dict:
        """GET /v1/{c}/stats: {"collection": settings, "documents", "inserted", "expired",
        "deleted", ...}."""
        _, body = self._request("GET", f"/v1/{self._quote(collection)}/stats")
        return body

    @staticmethod
    def _info(obj: Mapping[str, Any]) -> CollectionInfo:
        # A server from before verification has no "verify" field: it never verified.
        known = {k: obj[k] for k in _SETTINGS_FIELDS if k in obj}
        extra = {k: v for k, v in obj.items() if k not in _SETTINGS_FIELDS and k != "documents"}
        return CollectionInfo(**known, documents=int(obj.get("documents", 0)), extra=extra)

    # -- documents ------------------------------------------------------------------------

    def check(self, collection: str, id: Union[str, int], text: Optional[str] = None,
              fingerprint: Optional[int] = None, time: Optional[int] = None) -> Result:
        """Matches of one document; changes nothing."""
        return self.check_many(collection, [Document(id, text, fingerprint, time)])[0]

    def insert(self, collection: str, id: Union[str, int], text: Optional[str] = None,
               fingerprint: Optional[int] = None, time: Optional[int] = None) -> Result:
        """Inserts (replacing a document with the same id); durable when it returns."""
        return self.insert_many(collection, [Document(id, text, fingerprint, time)])[0]

    def check_insert(self, collection: str, id: Union[str, int], text: Optional[str] = None,
                     fingerprint: Optional[int] = None, time: Optional[int] = None) -> Result:
        """Atomically: "duplicate" with its matches, or "new" (inserted, durable)."""
        return self.check_insert_many(collection, [Document(id, text, fingerprint, time)])[0]

    def check_many(self, collection: str, documents: Iterable[DocumentLike]) -> list:
        return self._batch(collection, "check", documents, idempotent=True)

    def insert_many(self, collection: str, documents: Iterable[DocumentLike]) -> list:
        return self._batch(collection, "insert", documents, idempotent=True)

    def check_insert_many(self, collection: str, documents: Iterable[DocumentLike]) -> list:
        """check_insert for many documents, in order: each sees the ones before it."""
        return self._batch(collection, "check-insert", documents, idempotent=False)

    def get(self, collection: str, id: Union[str, int]) -> Optional[StoredDocument]:
        """The stored document with this id (None when there is none or it left the window)."""
        status, body = self._request(
            "GET", f"/v1/{self._quote(collection)}/documents/{self._quote(id)}"
            "?fingerprint_format=int", ok=(200, 404))
        if status == 404:
            if isinstance(body, dict) and "no collection" in body.get("error", {}).get(
                    "message", ""):
                raise ServiceError(404, "not_found", body["error"]["message"])
            return None
        return StoredDocument(str(body["id"]), int(body["fingerprint"]), int(body["time"]),
                              body.get("expires"))

    def delete(self, collection: str, id: Union[str, int]) -> bool:
        """Removes a document; False when there was none."""
        status, body = self._request(
            "DELETE", f"/v1/{self._quote(collection)}/documents/{self._quote(id)}",
            ok=(200, 404))
        if status == 404 and isinstance(body, dict) and "no collection" in body.get(
                "error", {}).get("message", ""):
            raise ServiceError(404, "not_found", body["error"]["message"])
        return status == 200

    def _batch(self, collection: str, op: str, documents: Iterable[DocumentLike],
               idempotent: bool) -> list:
        docs = [_document_json(d) for d in documents]
        path = f"/v1/{self._quote(collection)}/{op}?fingerprint_format=int"
        out: list = []
        for start in range(0, len(docs), self.max_documents):
            chunk = docs[start:start + self.max_documents]
            if idempotent:
                out.extend(self._send_chunk(path, chunk, True))
            else:
                out.extend(self._check_insert_chunk(collection, path, chunk))
        return out

    def _send_chunk(self, path: str, chunk: list, idempotent: bool) -> list:
        _, body = self._request("POST", path, {"documents": chunk}, idempotent=idempotent)
        return [_result(r) for r in body["results"]]

    def _check_insert_chunk(self, collection: str, path: str, chunk: list) -> list:
        """check-insert with recovery: after an attempt that may have reached the server, the
        ids it stored are answered "new" (recovered) and only the rest are sent again."""
        results: list = [None] * len(chunk)
        pending = list(range(len(chunk)))
        for attempt in range(self.retries + 1):
            if attempt:
                self._count_retry()
                self._sleep(attempt - 1)
            try:
                answered = self._send_chunk(path, [chunk[i] for i in pending], False)
            except _Ambiguous:
                # Which of them did the lost attempt store? (Reads are retried as needed; if the
                # server stays away, ServiceUnavailable: sending them again blind could report
                # a stored document a duplicate of itself.)
                still = []
                for i in pending:
                    stored = self.get(collection, chunk[i]["id"])
                    if stored is not None:
                        results[i] = Result(str(chunk[i]["id"]), "new", stored.fingerprint, (),
                                            recovered=True)
                    else:
                        still.append(i)
                pending = still
                if not pending:
                    return results
                continue
            for i, r in zip(pending, answered):
                results[i] = r
            return results
        raise ServiceUnavailable(f"POST {path}: no answer after {self.retries + 1} attempts")
