"""simdup: near-duplicate text detection with 64-bit SimHash fingerprints.

Batch-first: texts go in as any iterable of str (a list, a numpy array of str, a pandas
Series), fingerprints come out as numpy ``uint64`` arrays, and every call that takes time runs
in C++ without the GIL. Option names are the ``simdup`` CLI's flags in snake_case
(``--shingle-width`` is ``shingle_width``, ``--no-t2s`` is ``no_t2s=True``).

>>> import simdup
>>> fps = simdup.fingerprint(["The quick brown fox jumps over the lazy dog.",
...                           "The quick brown fox jumped over the lazy dog!"])
>>> int(simdup.distance(fps[0], fps[1])) <= 10
True

``simdup.compat`` is a drop-in for the Python ``simhash`` package (``Simhash``,
``SimhashIndex``), bit for bit. See docs/python.md.
"""

from __future__ import annotations

import functools
import json
import numbers
import os
import time as _time
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from .client import Client, Document, Match, Result, ServiceError, ServiceUnavailable
from .errors import ParameterError

__version__ = _core.__version__

__all__ = [
    "Fingerprinter", "fingerprint", "distance", "pairs", "clusters", "plan", "Index", "dedup",
    "segment", "keywords", "explain", "to_hex", "OK", "TOO_SHORT", "STATUS_NAMES",
    "Client", "Document", "Match", "Result", "ServiceError", "ServiceUnavailable",
    "ParameterError",
]

#: Status codes of :meth:`Fingerprinter.fingerprint`'s status array.
OK = 0
#: Fewer distinct features than ``min_features``: the text has no fingerprint (value 0).
TOO_SHORT = 1
STATUS_NAMES = ("ok", "too_short")

_PAIR_DTYPE = np.dtype([("a", np.uint32), ("b", np.uint32), ("distance", np.uint8)])


def _text_list(texts: Any) -> Any:
    """A sequence the C++ side reads without another copy: lists and tuples as they are,
    numpy arrays and pandas objects as lists of their str objects."""
    if isinstance(texts, (list, tuple)):
        return texts
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be an iterable of str (a list, a numpy array, a pandas "
                        "Series), not a single str; wrap it in a list")
    if isinstance(texts, np.ndarray):
        if texts.ndim != 1:
            raise ValueError(f"texts must be one-dimensional, got shape {texts.shape}")
        return texts.tolist()
    to_list = getattr(texts, "tolist", None)  # pandas Series / Index
    if callable(to_list):
        return to_list()
    return list(texts)


def _u64(values: Any, name: str) -> np.ndarray:
    """A C-contiguous uint64 array (no copy when it already is one); ValueError for negative
    or fractional values instead of a silent wrap."""
    if isinstance(values, np.ndarray) and values.dtype == np.uint64:
        return np.ascontiguousarray(values).reshape(-1)
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        values = [values]
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be unsigned 64-bit integers: {e}") from None
    if arr.dtype == object:
        try:
            ints = [int(v) for v in arr.reshape(-1)]
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name} must be unsigned 64-bit integers: {e}") from None
        if any(v < 0 or v >= 1 << 64 for v in ints):
            raise ValueError(f"{name} must be unsigned 64-bit integers, got a value out of range")
        arr = np.array(ints, dtype=np.uint64)
    if arr.size == 0:
        return np.zeros(0, dtype=np.uint64)
    if arr.dtype.kind == "i":
        if (arr < 0).any():
            raise ValueError(f"{name} must be unsigned 64-bit integers, got a negative value")
    elif arr.dtype.kind not in "u":
        raise TypeError(f"{name} must be unsigned 64-bit integers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.uint64).reshape(-1)


class Fingerprinter:
    """A configured fingerprint pipeline (normalise, features, weights, hash, vote).

    Options (the CLI's flags, all optional):

    - normalisation: ``html``, ``no_nfkc``, ``no_casefold``, ``no_t2s``, ``keep_punctuation``,
      ``strip_digits`` (bools);
    - features: ``features`` ("shingles", "words", "word-ngrams", "jieba", "keywords"),
      ``shingle_width`` (4), ``ngram`` (2), ``min_token_length`` (1), ``jieba_dict``,
      ``user_dict`` (a path or a list of paths), ``min_features`` (1);
    - weighting and hashing: ``weighting`` ("count", "binary", "tfidf"), ``idf``,
      ``stopwords``, ``top_k`` (0 = all), ``hash`` ("xxh3", "fnv1a", "md5"), ``compat``
      ("none", "python-simhash", "jieba-tfidf").

    Creating one loads dictionaries and IDF files (``OSError``/``ValueError`` naming the file);
    afterwards it is immutable and safe to share between threads.
    """

    def __init__(self, **options: Any) -> None:
        self._options = dict(options)
        self._core = _core.Fingerprinter(self._options)

    @property
    def options(self) -> dict:
        """The options given (only those)."""
        return dict(self._options)

    def fingerprint(self, texts: Iterable[Union[str, bytes]], threads: int = 0
                    ) -> Tuple[np.ndarray, np.ndarray]:
        """Fingerprints many texts on ``threads`` threads (0: every usable core).

        Returns ``(fingerprints, status)``: a ``uint64`` array and a ``uint8`` array of
        :data:`OK` / :data:`TOO_SHORT`. A too-short text (fewer distinct features than
        ``min_features``) has fingerprint 0, except with ``compat="python-simhash"``, which
        keeps the package's value. bytes are read as UTF-8; invalid UTF-8 and lone surrogates
        are repaired (U+FFFD), never an error. ``None`` is a ``TypeError`` naming the position.
        """
        return self._core.fingerprint(_text_list(texts), threads)

    def fingerprint_one(self, text: Union[str, bytes]) -> Tuple[int, int]:
        """One text: ``(fingerprint, status)``."""
        return self._core.fingerprint_one(text)

    def fingerprint_features(self, features: Iterable[Any]) -> Tuple[int, int]:
        """Supplied features: tokens (weight 1) or ``(token, weight)`` pairs, or a dict; no
        normalisation or weighting. Returns ``(fingerprint, status)``."""
        if isinstance(features, Mapping):
            features = features.items()
        pairs = [(f, 1.0) if isinstance(f, str) else (f[0], float(f[1])) for f in features]
        return self._core.fingerprint_features(pairs)

    def features(self, text: Union[str, bytes]) -> list:
        """The weighted features ``[(feature, weight), ...]`` the text votes with, heaviest
        first."""
        return self._core.features(text)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._options.items())
        return f"simdup.Fingerprinter({args})"


@functools.lru_cache(maxsize=16)
def _cached_fingerprinter(options: Tuple[Tuple[str, Any], ...]) -> Fingerprinter:
    return Fingerprinter(**dict(options))


def _fingerprinter_for(options: Mapping[str, Any]) -> Fingerprinter:
    """A cached Fingerprinter for hashable options (dictionaries load once per option set)."""
    items = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
    try:
        return _cached_fingerprinter(items)
    except TypeError:  # unhashable option values
        return Fingerprinter(**options)


def fingerprint(texts: Iterable[Union[str, bytes]], threads: int = 0, **options: Any) -> np.ndarray:
    """Fingerprints of ``texts`` as a ``uint64`` array (see :class:`Fingerprinter` for the
    options). Texts too short to have a fingerprint get 0; use
    ``Fingerprinter(**options).fingerprint(texts)`` to get the status array too."""
    return _fingerprinter_for(options).fingerprint(texts, threads)[0]


def distance(a: Any, b: Any) -> Any:
    """Hamming distance (differing bits) between fingerprints. Two ints give an int; arrays
    (or an array and an int) give a ``uint8`` array, broadcast like numpy."""
    if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral) and \
            not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        for name, v in (("a", a), ("b", b)):
            if v < 0 or v >= 1 << 64:
                raise ValueError(f"{name} must be an unsigned 64-bit fingerprint, got {v}")
        return bin(int(a) ^ int(b)).count("1")
    a_arr = np.asarray(a)
    b_arr = np.asarray(b)
    shape = np.broadcast_shapes(a_arr.shape, b_arr.shape)
    x = _u64(np.broadcast_to(a_arr, shape).reshape(-1), "a")
    y = _u64(np.broadcast_to(b_arr, shape).reshape(-1), "b")
    return _core.distance(x, y).reshape(shape)


def pairs(fingerprints: Any, k: int = 3, ids: Optional[Sequence[Any]] = None, threads: int = 0,
          memory: int = 0) -> np.ndarray:
    """Every pair within Hamming distance ``k`` (inclusive), each once, sorted by ``(a, b)``:
    a structured array with fields ``a``, ``b`` (positions, or ``ids[position]`` when ``ids``
    is given) and ``distance``. No resident index; memory O(n); all cores."""
    fps = _u64(fingerprints, "fingerprints")
    a, b, d = _core.pairs(fps, int(k), int(memory), int(threads))
    if ids is None:
        out = np.empty(len(a), dtype=_PAIR_DTYPE)
        out["a"], out["b"], out["distance"] = a, b, d
        return out
    id_arr = np.asarray(ids)
    if len(id_arr) != len(fps):
        raise ValueError(f"pairs: {len(id_arr)} ids for {len(fps)} fingerprints")
    dtype = np.dtype([("a", id_arr.dtype), ("b", id_arr.dtype), ("distance", np.uint8)])
    out = np.empty(len(a), dtype=dtype)
    out["a"], out["b"], out["distance"] = id_arr[a], id_arr[b], d
    return out


def clusters(fingerprints: Any, k: int = 3, mode: str = "components",
             ids: Optional[Sequence[Any]] = None, threads: int = 0, memory: int = 0) -> np.ndarray:
    """The cluster of every fingerprint: the position (or ``ids`` entry) of its
    representative. ``mode="components"`` joins chains (connected components, representative
    = first member); ``mode="star"`` links each member directly to a representative within
    ``k``; ``mode="centers"`` clusters around the most linked fingerprints, every member
    within ``k`` of its cluster's center. A fingerprint without partners is its own representative."""
    fps = _u64(fingerprints, "fingerprints")
    rep = _core.clusters(fps, int(k), str(mode), int(memory), int(threads))
    if ids is None:
        return rep
    id_arr = np.asarray(ids)
    if len(id_arr) != len(fps):
        raise ValueError(f"clusters: {len(id_arr)} ids for {len(fps)} fingerprints")
    return id_arr[rep]


def plan(n: int, k: int = 3, memory: int = 0, purpose: str = "batch",
         blocks: Optional[str] = None) -> dict:
    """The index layout the planner picks for ``n`` fingerprints within ``k`` bits (or the
    costs of ``blocks``, the CLI's ``--blocks`` syntax): tables, prefix bits, expected
    candidates per probe, bytes per entry, and a human ``description``."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return _core.plan(int(n), int(k), int(memory), str(purpose), blocks or "")


_MATCH_DTYPE = np.dtype([("query", np.uint64), ("id", np.uint64), ("fingerprint", np.uint64),
                         ("time", np.int64), ("distance", np.uint8)])


class Index:
    """The online Hamming index: add, query and remove ``(id, fingerprint, time)`` entries.

    ``k`` is the largest distance queries can ask for (0..32); ``window`` (seconds, or the
    unit of your ``times``) expires entries older than it (``None``: never); ``path``: a file
    written by :meth:`save` is loaded from it when it exists (its layout, and so its k, wins
    over ``k``), and :meth:`save` writes there.
    Thread-safe like the C++ index: every call releases the GIL, queries may run while other
    threads add or remove.
    """

    def __init__(self, k: int = 3, window: Optional[int] = None, path: Optional[str] = None,
                 expected_size: int = 10_000_000, memory: int = 0,
                 blocks: Optional[str] = None) -> None:
        self._path = os.fspath(path) if path is not None else None
        self._window = int(window or 0)
        if self._path is not None and os.path.exists(self._path):
            self._core = _core.Index.load(self._path, self._window)
        else:
            self._core = _core.Index(int(k), self._window, int(expected_size), int(memory),
                                     blocks or "")

    @classmethod
    def load(cls, path: str, window: Optional[int] = None) -> "Index":
        """Opens a file written by :meth:`save` (``FileNotFoundError``, or ``ValueError`` for
        a damaged file)."""
        self = cls.__new__(cls)
        self._path = os.fspath(path)
        self._window = int(window or 0)
        self._core = _core.Index.load(self._path, self._window)
        return self

    @property
    def k(self) -> int:
        return self._core.k

    @property
    def layout(self) -> str:
        """The block layout (the CLI's ``--blocks`` syntax)."""
        return self._core.layout

    def add(self, ids: Any, fingerprints: Any, times: Any = None) -> None:
        """Adds entries; ``ids`` are unsigned 64-bit integers (repeats allowed: :meth:`remove`
        removes them all). ``times`` default to now (Unix seconds)."""
        id_arr = _u64(ids, "ids")
        fps = _u64(fingerprints, "fingerprints")
        t = None if times is None else np.ascontiguousarray(np.asarray(times, dtype=np.int64)).reshape(-1)
        self._core.add(id_arr, fps, t, int(_time.time()))

    def query(self, fingerprints: Any, k: Optional[int] = None, now: Optional[int] = None) -> np.ndarray:
        """Live entries within ``k`` (default: the index's k) of each fingerprint: a
        structured array with fields ``query`` (position of the query), ``id``,
        ``fingerprint``, ``time`` and ``distance``, sorted by query, then distance, time, id."""
        fps = _u64(fingerprints, "fingerprints")
        pos, ids, fp, t, d = self._core.query(fps, -1 if k is None else int(k), now)
        out = np.empty(len(ids), dtype=_MATCH_DTYPE)
        out["query"], out["id"], out["fingerprint"], out["time"], out["distance"] = pos, ids, fp, t, d
        return out

    def remove(self, ids: Any) -> int:
        """Removes every entry of each id; returns how many entries went."""
        return self._core.remove(_u64(ids, "ids"))

    def save(self, path: Optional[str] = None) -> None:
        """Writes a snapshot (atomically: a temporary file, then a rename) to ``path`` or the
        path given at creation."""
        target = os.fspath(path) if path is not None else self._path
        if target is None:
            raise ValueError("save: no path (give one here or to Index(path=...))")
        self._core.save(target)

    def expire(self, now: Optional[int] = None) -> int:
        """Drops entries older than the window at ``now`` (default: the clock)."""
        return self._core.expire(now)

    def compact(self) -> None:
        """Merges segments into as few as possible (faster queries after bulk adds)."""
        self._core.compact()

    def stats(self) -> dict:
        """size, segments, sealed_segments, expired, removed, memory_bytes, largest_segment."""
        return self._core.stats()

    @property
    def memory(self) -> int:
        """Approximate bytes held by the index."""
        return self._core.stats()["memory_bytes"]

    def __len__(self) -> int:
        return self._core.size()

    def __repr__(self) -> str:
        return f"simdup.Index(k={self.k}, size={len(self)}, layout={self.layout!r})"


_LAYERS = tuple(_core.LAYER_NAMES)  # ("kept", "url", "title", "exact", "near")


def _records_jsonl(records: Iterable[Any]) -> bytes:
    """Records (dicts, namedtuples, dataclass-like objects) as JSONL, the format the CLI reads."""
    lines = []
    for i, r in enumerate(records):
        if isinstance(r, Mapping):
            obj = r
        elif hasattr(r, "_asdict"):
            obj = r._asdict()
        elif hasattr(r, "__dict__"):
            obj = vars(r)
        else:
            raise TypeError(f"records[{i}] must be a dict (or a namedtuple), not {type(r).__name__}")
        # default=str: datetimes become ISO-8601 text, which the reader accepts as a time.
        lines.append(json.dumps(obj, ensure_ascii=False, default=str))
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass") if lines else b""


def _against_paths(against) -> list:
    """against= as simdup.dedup and simdup.dask.dedup take it: None, a path, or a list of
    paths."""
    if against is None:
        return []
    if isinstance(against, (str, os.PathLike)):
        return [os.fspath(against)]
    return [os.fspath(a) for a in against]


def dedup(source: Any, **options: Any):
    """Deduplicates a corpus; the same decisions as ``simdup dedup`` with the same options.

    ``source``: a path or a list of paths/globs (JSONL, TSV, CSV, text, WARC; .gz/.zst), or an
    iterable of records (dicts with ``id``, ``text`` and optional ``url``, ``title``, ``time``),
    or a pandas DataFrame of such columns.

    Options (the CLI's, defaults as there): ``mode`` ("batch"; "stream"), ``k`` (8),
    ``layers`` ("url,exact,near"), ``keep`` ("first", "longest", "newest", "field:NAME"),
    ``clusters`` ("anchored"; "centers", "star", "components"), ``anchor_floor`` (0.8),
    ``minhash`` ("10x6"; "off"), ``verify`` ("jaccard:0.8"; None or "off"),
    ``verify_shingle_width`` (5), ``verify_max_hashes`` (0), ``tmp_dir``, ``on_error``
    ("fail"; "skip"), ``threads`` (0: every usable core), the input options ``input_format``,
    ``id_field``, ``text_field``, ``url_field``, ``title_field``, ``time_field``,
    ``features_field``, ``max_record_mb``, and every :class:`Fingerprinter` option
    (``min_features`` defaults to 10, as in the CLI).

    ``against``: earlier runs' output directories or indexes (a path or a list), as
    ``simdup dedup --against`` (docs/incremental.md): a record that duplicates one of their
    documents is dropped for it, ``duplicate_of`` is that document's id and the frame's
    ``against`` column names the index; ``against_only=True`` drops only those
    (decontamination). Batch mode; the detection options must be the index's.

    Returns ``(frame, summary)``: a pandas DataFrame with one row per record in input order
    (``id``, ``keep``, ``cluster`` = the representative's position among the rows, as in the
    CLI, so ``frame.iloc[cluster]`` is the representative; ``duplicate_of`` = its id or None,
    ``distance`` (nullable int), ``layer`` ("kept", "url", "title", "exact", "near"),
    ``jaccard`` (NaN unless verified)) and the summary dict (summary.json's content). For
    records or a DataFrame the frame's index is where each row's record stands in the input
    (the DataFrame's own index labels), so the records skipped with ``on_error="skip"`` leave
    gaps and ``source.loc[frame.index[frame.keep]]`` are the kept records.

    ``annotate=True`` (records or a DataFrame; for files ``simdup dedup --annotate``) returns
    the input instead of the frame, every record with a ``"simdup"`` dict added (``keep``,
    ``cluster``, ``duplicate_of``, ``distance``, ``layer``, ``jaccard``; None where there is
    none, as in ``annotated.jsonl``): a list of new dicts, or a copy of the DataFrame with a
    ``simdup`` column.
    """
    import pandas as pd

    opts = dict(options)
    annotate = bool(opts.pop("annotate", False))
    against = _against_paths(opts.pop("against", None))
    against_only = bool(opts.pop("against_only", False))
    if "verify" in opts and opts["verify"] in (None, False):
        opts["verify"] = "off"
    if isinstance(source, (str, os.PathLike)):
        inputs, data = [os.fspath(source)], None
    elif isinstance(source, Mapping):
        raise TypeError("dedup: source must be a path, a list of paths, or an iterable of "
                        "records (dicts); wrap a single record in a list")
    elif isinstance(source, pd.DataFrame):
        inputs, data = [], _records_jsonl(source.to_dict("records"))
    else:
        items = list(source)
        if items and all(isinstance(s, (str, os.PathLike)) for s in items):
            inputs, data = [os.fspath(s) for s in items], None
        else:
            inputs, data = [], _records_jsonl(items)
    if data is not None and not data:
        raise ValueError("dedup: no records")
    if annotate and data is None:
        raise ValueError("dedup: annotate=True annotates records or a DataFrame; for files "
                         "use simdup dedup --annotate")
    out = _core.dedup(inputs, data, opts, against, against_only)
    ids = out["ids"]
    rep = out["representative"]
    earlier = out["against"]
    n = len(ids)
    positions = np.arange(n, dtype=np.uint32)
    keep = (rep == positions) & (earlier == 0)
    id_col = pd.Series(ids, dtype=object)
    earlier_ids = out["against_ids"]
    dup_of = pd.Series([None if keep[i] else earlier_ids[i] if earlier[i] else ids[rep[i]]
                        for i in range(n)], dtype=object)
    names = out["against_names"]
    # A document dropped against an earlier run is its own cluster here (its cluster is there).
    cluster = np.where(earlier == 0, rep, positions).astype(np.int64)
    dist = pd.array(out["distance"].astype(np.int64), dtype="Int64")
    dist[out["distance"] < 0] = pd.NA
    frame = pd.DataFrame({
        "id": id_col,
        "keep": keep,
        "cluster": cluster,
        "duplicate_of": dup_of,
        "distance": dist,
        "layer": pd.Categorical.from_codes(out["layer"].astype(np.int8), categories=list(_LAYERS))
        if n else pd.Categorical([], categories=list(_LAYERS)),
        "jaccard": out["jaccard"].astype(np.float64),
    })
    if against:
        frame["against"] = pd.Series([names[e - 1] if e else None for e in earlier], dtype=object)
    if data is not None:
        # One record a line (_records_jsonl): line - 1 is the record's input position.
        where = out["lines"].astype(np.int64) - 1
        if isinstance(source, pd.DataFrame):
            frame.index = source.index if len(where) == len(source) else source.index[where]
        elif len(where) != len(items):
            frame.index = pd.Index(where)
    summary = json.loads(out["summary"])
    if not annotate:
        return frame, summary
    if len(frame) != (len(source) if isinstance(source, pd.DataFrame) else len(items)):
        raise ValueError("dedup: annotate=True needs every record to be valid (some were skipped)")
    notes = [_annotation(row) for row in frame.itertuples(index=False)]
    if isinstance(source, pd.DataFrame):
        return source.assign(simdup=notes), summary
    return [dict(record, simdup=note) for record, note in zip(items, notes)], summary


def _annotation(row: Any) -> dict:
    """The "simdup" object of annotated.jsonl for one row of dedup's frame."""
    import pandas as pd

    kept = bool(row.keep)
    return {"keep": kept, "cluster": int(row.cluster),
            "duplicate_of": None if kept else row.duplicate_of,
            "distance": None if kept or pd.isna(row.distance) else int(row.distance),
            "layer": str(row.layer),
            "jaccard": None if kept or pd.isna(row.jaccard) else round(float(row.jaccard), 4)}


@functools.lru_cache(maxsize=8)
def _segmenter(jieba_dict: str, user_dict: Tuple[str, ...], hmm: bool) -> Any:
    return _core.Segmenter(jieba_dict, list(user_dict), hmm)


def _path_list(value: Any) -> Tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, os.PathLike)):
        return (os.fspath(value),)
    return tuple(os.fspath(v) for v in value)


def segment(text: Union[str, bytes], hmm: bool = True, jieba_dict: Optional[str] = None,
            user_dict: Any = None) -> list:
    """The words of ``text`` exactly as ``jieba.cut(text, HMM=hmm)`` gives them (jieba 0.42's
    default mode; whitespace and punctuation are words too)."""
    seg = _segmenter(os.fspath(jieba_dict) if jieba_dict else "", _path_list(user_dict), bool(hmm))
    return seg.segment(text)


def keywords(text: Union[str, bytes], k: int = 20, jieba_dict: Optional[str] = None,
             user_dict: Any = None, idf: Optional[str] = None,
             stopwords: Optional[str] = None) -> list:
    """The top ``k`` TF-IDF keywords with weights, as
    ``jieba.analyse.extract_tags(text, topK=k, withWeight=True)`` gives them."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    opts: dict = {"compat": "jieba-tfidf", "top_k": int(k)}
    if jieba_dict:
        opts["jieba_dict"] = os.fspath(jieba_dict)
    if user_dict is not None:
        opts["user_dict"] = list(_path_list(user_dict))
    if idf:
        opts["idf"] = os.fspath(idf)
    if stopwords:
        opts["stopwords"] = os.fspath(stopwords)
    return _fingerprinter_for(opts).features(text)


def explain(a: Union[str, bytes], b: Union[str, bytes], top: int = 10, **options: Any) -> dict:
    """Why :func:`dedup` does (or does not) link two texts, like ``simdup explain --json``:
    the same detection profile and options as :func:`dedup` (``k``, ``verify``, ``minhash``,
    ``clusters``, ``anchor_floor``, ``mode``, ``layers``, the fingerprint options with
    ``min_features`` 10), the same signer (HTML detection, normalisation).
    ``{"a": {"id", "fingerprint", "status", "html", "features"}, "b": ..., "distance",
    "jaccard", "minhash_candidate", "duplicate", "layer", "reason", "differing_bits",
    "shared": [(feature, weight_a, weight_b)], "only_a": [(feature, weight)], "only_b": ...}``.
    ``distance`` and ``jaccard`` are None when a text has no fingerprint, ``layer`` when the
    pair is not linked; features are heaviest first (ties by text) and cut to ``top``."""
    opts = dict(options)
    if "verify" in opts and opts["verify"] in (None, False):
        opts["verify"] = "off"
    text = [t.decode("utf-8", "replace") if isinstance(t, bytes) else t for t in (a, b)]
    out = _core.explain(text[0], text[1], opts)
    weights = []
    for name in ("a", "b"):
        w: dict = {}
        for f, x in out[name]["features"]:
            w[f] = w.get(f, 0.0) + x
        weights.append(w)
        out[name]["features"] = len(out[name]["features"])
    wa, wb = weights
    fa, fb = out.pop("fingerprints")
    diff = fa ^ fb if out["distance"] is not None else 0
    shared = sorted(((f, wa[f], wb[f]) for f in wa if f in wb), key=lambda t: (-(t[1] + t[2]), t[0]))
    only_a = sorted(((f, x) for f, x in wa.items() if f not in wb), key=lambda t: (-t[1], t[0]))
    only_b = sorted(((f, x) for f, x in wb.items() if f not in wa), key=lambda t: (-t[1], t[0]))
    out["differing_bits"] = [i for i in range(64) if diff >> i & 1]
    out["shared"], out["only_a"], out["only_b"] = shared[:top], only_a[:top], only_b[:top]
    return out


def to_hex(fingerprint: int) -> str:
    """16 lowercase hex digits, zero padded (the CLI's form)."""
    return _core.to_hex(int(fingerprint))
