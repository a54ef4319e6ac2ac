"""One mechanism for every in-memory cache: a thread-safe LRU bounded in bytes.

A cache bounded by its number of entries holds whatever those entries weigh: 1,024 screenshots
are 30 MB on the sim and 1 GB of a tablet's 1 MB PNGs. Each :class:`ByteLRU` is given the bytes it may hold
and an approximate but honest cost per entry (:func:`cost_of`: the ``sys.getsizeof`` of bytes
and strings, a tree's node count times a measured size per node, a picture's width × height ×
channels), and evicts the least recently used entries until it fits. An entry that alone weighs
more than the bound is not kept. Every cache registers by name: :func:`cache_stats` lists them
(``benchmarks/rss.py`` prints it at the end of a run), and the bound of each is documented where
the cache is made.
"""

from __future__ import annotations

import functools
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, ParamSpec, TypeVar, cast

__all__ = ["ENTRY_OVERHEAD", "FONT_BYTES", "MB", "ByteLRU", "cache_stats", "cost_of", "memoize", "picture_cost"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
R = TypeVar("R")
P = ParamSpec("P")

MB = 1 << 20
#: What one entry costs besides its key and value: the OrderedDict slot and its link node, and
#: the (cost, value) pair this class keeps (measured with tracemalloc on CPython 3.11: ~154 B).
ENTRY_OVERHEAD = 160
#: What Pillow's bundled FreeType font loaded at one size holds (``ImageFont.load_default``):
#: ~64 KB of resident memory each, measured over 50 sizes.
FONT_BYTES = 64 * 1024

_REGISTRY: weakref.WeakValueDictionary[str, ByteLRU[Any, Any]] = weakref.WeakValueDictionary()
_REGISTRY_LOCK = threading.Lock()


#: Pillow keeps these modes at one byte a pixel, "I;16*" at two, every other mode at four
#: ("RGB" too: it is stored as RGBX).
_ONE_BYTE_MODES = frozenset({"1", "L", "P"})
#: A Pillow image's own objects besides its pixel buffer (Image, ImagingCore, info dict).
PICTURE_OVERHEAD = 1024


def picture_cost(image: Any) -> int:
    """Bytes a decoded Pillow image holds: width × height × bytes per pixel, plus its objects."""
    width, height = image.size
    mode = str(image.mode)
    per_pixel = 1 if mode in _ONE_BYTE_MODES else 2 if mode.startswith("I;16") else 4
    return PICTURE_OVERHEAD + width * height * per_pixel


def _is_picture(value: object) -> bool:
    return type(value).__module__.startswith("PIL.") and hasattr(value, "size") and hasattr(value, "mode")


def cost_of(*values: object) -> int:
    """Approximate bytes held by ``values``: ``sys.getsizeof`` of each, looking into tuples,
    lists, frozensets and dicts (containers inside containers too); a Pillow image by
    :func:`picture_cost`, and a screenshot carrying its decoded picture
    (``perception.screenshot.Screenshot``) with that picture. For bytes and str — what most
    caches hold — this is exact; other objects count their shallow size, so a cache of richer
    objects passes its own cost function."""
    total = 0
    for value in values:
        if _is_picture(value):
            total += picture_cost(value)
            continue
        total += sys.getsizeof(value)
        if isinstance(value, (tuple, list, frozenset, set)):
            total += cost_of(*value)
        elif isinstance(value, dict):
            total += cost_of(*value.keys(), *value.values())
        elif isinstance(value, bytes) and (pixels := getattr(value, "pixels", None)) is not None:
            total += cost_of(pixels)
    return total


class ByteLRU(Generic[K, V]):
    """A thread-safe least-recently-used map holding at most ``max_bytes`` (keys, values and
    :data:`ENTRY_OVERHEAD` per entry). ``cost(key, value)`` weighs an entry (default
    :func:`cost_of` of both). ``name`` lists it in :func:`cache_stats` (one cache per name: a
    new cache of the same name replaces the old in the listing)."""

    def __init__(self, name: str, max_bytes: int, cost: Callable[[K, V], int] | None = None) -> None:
        if max_bytes < 0:
            raise ValueError(f"cache {name!r}: max_bytes must be >= 0, not {max_bytes}")
        self.name = name
        self.max_bytes = max_bytes
        self._cost: Callable[[K, V], int] = cost or cost_of
        self._data: OrderedDict[K, tuple[int, V]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        with _REGISTRY_LOCK:
            _REGISTRY[name] = self

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return None
            self._data.move_to_end(key)
            return entry[1]

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` (replacing what was kept), evicting the least recently used
        entries until the cache fits its bound; returns ``value``. Not kept when it alone weighs
        more than the bound."""
        size = self._cost(key, value) + ENTRY_OVERHEAD
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old[0]
            if size > self.max_bytes:
                return value
            self._data[key] = (size, value)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (dropped, _) = self._data.popitem(last=False)
                self._bytes -= dropped
        return value

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for ``key``, else ``make()`` kept and returned (made outside the lock:
        two threads may both make a missing value; the later one is kept)."""
        hit = self.get(key)
        return hit if hit is not None else self.put(key, make())

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0

    @property
    def nbytes(self) -> int:
        """Bytes held now (the sum of the entries' costs)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"entries": len(self._data), "bytes": self._bytes, "max_bytes": self.max_bytes}


def cache_stats() -> dict[str, dict[str, int]]:
    """Every live cache by name: entries, bytes held and its bound (``max_bytes``)."""
    with _REGISTRY_LOCK:
        caches = sorted(_REGISTRY.items())
    return {name: cache.stats() for name, cache in caches}


def memoize(
    name: str, max_bytes: int, cost: Callable[[Any, Any], int] | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``functools.lru_cache`` bounded in bytes: results kept in a :class:`ByteLRU` by the
    positional arguments (``cost(args, result)``; default :func:`cost_of` of both). Keyword
    arguments bypass the cache, and a None result is made again each time. The cache is the
    wrapper's ``cache`` attribute."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        store: ByteLRU[tuple[Any, ...], Any] = ByteLRU(name, max_bytes, cost)

        @functools.wraps(fn)
        def cached(*args: P.args, **kwargs: P.kwargs) -> R:
            if kwargs:
                return fn(*args, **kwargs)
            hit = store.get(args)
            if hit is not None:
                return cast(R, hit)
            return store.put(args, fn(*args, **kwargs))

        cached.cache = store  # type: ignore[attr-defined]
        return cached

    return wrap
