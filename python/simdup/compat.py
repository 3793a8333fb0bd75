"""A drop-in for the Python ``simhash`` package (v2.x): ``Simhash`` and ``SimhashIndex`` with
its API and its values, bit for bit. Migrating is an import change::

    from simdup.compat import Simhash, SimhashIndex   # was: from simhash import ...

With the package's defaults (``f=64``, the default ``reg`` and ``hashfunc``) fingerprints are
computed in C++ (simdup's ``compat=python-simhash`` mode, docs/compat.md) and
``SimhashIndex`` is simdup's Hamming index; other settings (another ``f``, ``reg`` or
``hashfunc``, a subclass that overrides ``_tokenize``) run the same algorithm in Python with
numpy, so every value still matches. Corners that cannot match are listed in docs/python.md.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import numbers
import re
from collections.abc import Iterable

import numpy as np

from . import _core

__all__ = ["Simhash", "SimhashIndex"]

_DEFAULT_REG = r'[\w\u4e00-\u9fcc]+'
_LOG = logging.getLogger("simhash")
_CORE = None  # the compat fingerprinter, made on first use


def _core_fingerprinter():
    global _CORE
    if _CORE is None:
        _CORE = _core.Fingerprinter({"compat": "python-simhash"})
    return _CORE


def _hashfunc(x):
    """The package's default feature hash: MD5 of the UTF-8 bytes (the last f/8 bytes count)."""
    return hashlib.md5(x).digest()


_TWO53 = 1 << 53


class Simhash(object):
    """``Simhash(value, f=64, reg=r'[\\w\\u4e00-\\u9fcc]+', hashfunc=md5, log=None)``.

    ``value`` is a text (lowercased, ``reg`` matches joined, width-4 shingles counted), an
    iterable of features (tokens of weight 1, ``(token, weight)`` pairs) or a token -> weight
    dict, an int (taken as the fingerprint), or another Simhash. ``.value`` is the
    fingerprint.
    """

    # The package's tuning constants (they bound its numpy batches; values do not depend on
    # them, here or there).
    large_weight_cutoff = 50
    batch_size = 200

    # The package's instance attributes at their defaults, as class attributes: Simhash(text)
    # with the defaults stores only `value` (storing all seven cost a tenth of a paragraph's
    # fingerprint); any other argument is stored on the instance, as the package does.
    f = 64
    f_bytes = 8
    reg = _DEFAULT_REG
    hashfunc = staticmethod(_hashfunc)
    hashfunc_returns_int = False
    log = _LOG

    def __init__(self, value, f=64, reg=_DEFAULT_REG, hashfunc=_hashfunc, log=None):
        if type(value) is str and f == 64 and reg is _DEFAULT_REG and hashfunc is _hashfunc \
                and log is None and type(self) is Simhash:
            # The common case, straight to C++ (build_by_text's checks cost a third as much).
            self.value = _core.compat_simhash_value(value)
            return
        if f % 8:
            raise ValueError('f must be a multiple of 8')
        self.f = f
        self.f_bytes = f // 8
        self.reg = reg
        self.value = None
        self.hashfunc = hashfunc
        self.hashfunc_returns_int = (False if hashfunc is _hashfunc
                                     else isinstance(hashfunc(b"test"), numbers.Integral))
        self.log = _LOG if log is None else log

        if isinstance(value, Simhash):
            self.value = value.value
        elif isinstance(value, str):
            self.build_by_text(value)
        elif isinstance(value, Iterable):
            self.build_by_features(value)
        elif isinstance(value, numbers.Integral):
            self.value = value
        else:
            # The package raises a bare Exception with this message; TypeError is one.
            raise TypeError('Bad parameter with type {}'.format(type(value)))

    def __eq__(self, other):
        """Simhashes are equal when their values are."""
        return self.value == other.value

    __hash__ = None  # like the package: __eq__ without __hash__

    def __repr__(self):
        return 'Simhash({!r})'.format(self.value)

    def _native(self):
        """Whether the C++ path computes exactly this configuration."""
        return self.f == 64 and self.hashfunc is _hashfunc

    def _slide(self, content, width=4):
        return [content[i:i + width] for i in range(max(len(content) - width + 1, 1))]

    def _tokenize(self, content):
        content = content.lower()
        content = ''.join(re.findall(self.reg, content))
        return self._slide(content)

    def build_by_text(self, content):
        cls = type(self)
        if (self._native() and (self.reg is _DEFAULT_REG or self.reg == _DEFAULT_REG)
                and cls._tokenize is Simhash._tokenize and cls._slide is Simhash._slide):
            self.value = _core.compat_simhash_value(content)
            return self.value
        features = self._tokenize(content)
        counts = collections.Counter(features)
        return self.build_by_features({k: counts[k] for k in sorted(counts)})

    def build_by_features(self, features):
        """``features``: tokens (weight 1), ``(token, weight)`` tuples, or a token -> weight
        dict."""
        if isinstance(features, dict):
            features = features.items()
        pairs = []
        native = self._native()
        w = 1
        for f in features:
            if not isinstance(f, str):
                f, w = f
            elif not isinstance(w, int):
                # The package multiplies the digest bytes by w here.
                raise TypeError("can't multiply sequence by non-int of type '{}'".format(
                    type(w).__name__))
            if native:
                if isinstance(w, int):
                    # Sums beyond 2^53 need Python's exact ints.
                    native = -_TWO53 < w < _TWO53
                else:
                    # A negative non-int weight subtracts in the package (an int <= 0 adds
                    # nothing), which the C++ vote cannot tell apart from an int.
                    native = w >= 0
            pairs.append((f, w))
        if native:
            for f, _ in pairs:
                if not isinstance(f, str):
                    raise AttributeError("'{}' object has no attribute 'encode'".format(
                        type(f).__name__))
            self.value = _core_fingerprinter().fingerprint_features(
                [(f, float(x)) for f, x in pairs])[0]
        else:
            self.value = self._vote(pairs)
        return self.value

    def _digest(self, feature):
        h = self.hashfunc(feature.encode('utf-8'))
        if self.hashfunc_returns_int:
            return (h & ((1 << self.f) - 1)).to_bytes(self.f_bytes, 'big')
        return h[-self.f_bytes:]

    def _vote(self, pairs):
        """The package's vote for any f and hashfunc: bit set iff the weight of features with
        the bit set exceeds half the total weight. Positive ints add exactly; ints <= 0 add
        nothing (the package repeats the digest w times); other numbers add w as floats."""
        count = 0
        int_sums = np.zeros(self.f, dtype=object)
        float_sums = np.zeros(self.f, dtype=np.float64)
        any_float = False
        for f, w in pairs:
            count += w
            bits = self._bitarray_from_bytes(self._digest(f))
            if isinstance(w, int):
                if w > 0:
                    int_sums = int_sums + bits.astype(object) * w
            else:
                any_float = True
                float_sums += bits * w
        combined = float_sums + int_sums.astype(np.float64) if any_float else int_sums
        mask = np.array([c > count / 2 for c in combined], dtype=bool)
        return int.from_bytes(np.packbits(mask).tobytes(), 'big')

    @staticmethod
    def _bitarray_from_bytes(b):
        return np.unpackbits(np.frombuffer(b, dtype='>B'))

    def _sum_hashes(self, digests):
        bitarray = self._bitarray_from_bytes(b''.join(digests))
        rows = np.reshape(bitarray, (-1, self.f))
        return np.sum(rows, 0)

    def distance(self, another):
        """Differing bits among the low f bits."""
        assert self.f == another.f
        x = (self.value ^ another.value) & ((1 << self.f) - 1)
        return bin(x).count('1')


class SimhashIndex(object):
    """``SimhashIndex(objs, f=64, k=2, log=None)``: objs is a list of ``(obj_id, Simhash)``;
    ``get_near_dups(simhash)`` returns the ids (as str, like the package) of the entries
    within ``k`` bits. With f=64 and k <= 32 the entries live in simdup's Hamming index."""

    def __init__(self, objs, f=64, k=2, log=None):
        self.k = k
        self.f = f
        count = len(objs)
        self.log = _LOG if log is None else log
        self.log.info('Initializing %s data.', count)
        self._native = f == 64 and 0 <= k <= 32
        if self._native:
            self._index = _core.Index(k, 0, max(count, 1 << 16), 0, "")
            self._entries = {}  # '%x,%s' % (value, obj_id) -> entry number
            self._owners = {}   # entry number -> obj_id as str
            self._next = 0
        else:
            self.bucket = collections.defaultdict(set)
        if self._native and count:
            self._add_many(objs, count)
        else:
            for i, q in enumerate(objs):
                if i % 10000 == 0 or i == count - 1:
                    self.log.info('%s/%s', i + 1, count)
                self.add(*q)

    def _add_many(self, objs, count):
        ids, values = [], []
        for i, (obj_id, simhash) in enumerate(objs):
            if i % 10000 == 0 or i == count - 1:
                self.log.info('%s/%s', i + 1, count)
            entry = self._new_entry(obj_id, simhash)
            if entry is not None:
                ids.append(entry)
                values.append(simhash.value & 0xFFFFFFFFFFFFFFFF)
        if ids:
            self._index.add(np.array(ids, dtype=np.uint64), np.array(values, dtype=np.uint64),
                            None, 0)

    def _new_entry(self, obj_id, simhash):
        assert simhash.f == self.f
        key = '%x,%s' % (simhash.value, obj_id)
        if key in self._entries:
            return None
        entry = self._next
        self._next += 1
        self._entries[key] = entry
        self._owners[entry] = key.split(',', 1)[1]
        return entry

    def get_near_dups(self, simhash):
        """The ids (str) of entries within k bits of ``simhash``, in no particular order."""
        assert simhash.f == self.f
        if self._native:
            q = np.array([simhash.value & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
            ids = self._index.query(q, -1, None)[1]
            owners = self._owners
            return list({owners[i] for i in ids.tolist()})
        ans = set()
        for key in self.get_keys(simhash):
            for dup in self.bucket[key]:
                sim2, obj_id = dup.split(',', 1)
                if simhash.distance(Simhash(int(sim2, 16), self.f)) <= self.k:
                    ans.add(obj_id)
        return list(ans)

    def add(self, obj_id, simhash):
        """Adds ``(obj_id, simhash)``; adding the same pair again changes nothing."""
        assert simhash.f == self.f
        if self._native:
            entry = self._new_entry(obj_id, simhash)
            if entry is not None:
                self._index.add(np.array([entry], dtype=np.uint64),
                                np.array([simhash.value & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64),
                                None, 0)
            return
        for key in self.get_keys(simhash):
            self.bucket[key].add('%x,%s' % (simhash.value, obj_id))

    def delete(self, obj_id, simhash):
        """Removes ``(obj_id, simhash)`` if present (the same simhash it was added with)."""
        assert simhash.f == self.f
        if self._native:
            entry = self._entries.pop('%x,%s' % (simhash.value, obj_id), None)
            if entry is not None:
                del self._owners[entry]
                self._index.remove(np.array([entry], dtype=np.uint64))
            return
        for key in self.get_keys(simhash):
            v = '%x,%s' % (simhash.value, obj_id)
            if v in self.bucket[key]:
                self.bucket[key].remove(v)

    @property
    def offsets(self):
        """Start bits of the k + 1 key blocks."""
        return [self.f // (self.k + 1) * i for i in range(self.k + 1)]

    def get_keys(self, simhash):
        """The package's bucket keys of a simhash: 'block value:block number' in hex."""
        offsets = self.offsets
        for i, offset in enumerate(offsets):
            if i == len(offsets) - 1:
                m = 2 ** (self.f - offset) - 1
            else:
                m = 2 ** (offsets[i + 1] - offset) - 1
            c = simhash.value >> offset & m
            yield '%x:%x' % (c, i)

    def bucket_size(self):
        """Distinct bucket keys. Native: those of the live entries (the package also counts
        buckets that deletes and queries left empty)."""
        if not self._native:
            return len(self.bucket)
        keys = set()
        for key in self._entries:
            value = int(key.split(',', 1)[0], 16)
            keys.update(self.get_keys(Simhash(value, self.f)))
        return len(keys)
