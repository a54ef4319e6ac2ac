"""The one cache mechanism (perception/bytecache.py): an LRU that evicts by bytes, not entries."""

from __future__ import annotations

import sys
import threading

import pytest
from PIL import Image

from artemis_cli.perception.bytecache import (
    ENTRY_OVERHEAD,
    ByteLRU,
    cache_stats,
    cost_of,
    memoize,
    picture_cost,
)
from artemis_cli.perception.screenshot import Screenshot


def test_evicts_by_bytes_not_entries() -> None:
    cache: ByteLRU[str, bytes] = ByteLRU("test.evicts", 10_000)
    for i in range(20):  # 20 entries of ~1.2 KB: only what fits in 10 KB stays
        cache.put(f"small{i}", bytes(1000))
    small = len(cache)
    assert 5 <= small < 10 and cache.nbytes <= 10_000
    cache.put("big", bytes(6000))  # one big entry pushes out several small ones
    assert "big" in cache and cache.nbytes <= 10_000
    assert len(cache) <= small - 4
    assert "small19" in cache and "small10" not in cache  # the least recently used went first


def test_cost_counts_key_value_and_overhead() -> None:
    cache: ByteLRU[bytes, str] = ByteLRU("test.cost", 1 << 20)
    key, value = bytes(5000), "x" * 3000
    cache.put(key, value)
    assert cache.nbytes == sys.getsizeof(key) + sys.getsizeof(value) + ENTRY_OVERHEAD
    cache.put(key, "y")  # replacing an entry gives its bytes back
    assert cache.nbytes == sys.getsizeof(key) + sys.getsizeof("y") + ENTRY_OVERHEAD


def test_lookups_refresh_and_oversized_entries_are_not_kept() -> None:
    cache: ByteLRU[str, bytes] = ByteLRU("test.lru", 3 * (1000 + 33 + ENTRY_OVERHEAD + 60))
    for name in "abc":
        cache.put(name, bytes(1000))
    assert cache.get("a") is not None  # a is now the most recent: b goes first
    cache.put("d", bytes(1000))
    assert "b" not in cache and {"a", "c", "d"} <= {k for k in "abcd" if k in cache}
    assert cache.put("huge", bytes(10_000)) == bytes(10_000)  # returned, never kept
    assert "huge" not in cache and len(cache) == 3


def test_get_or_make_makes_once() -> None:
    cache: ByteLRU[int, str] = ByteLRU("test.make", 1 << 16)
    made: list[int] = []
    for _ in range(3):
        assert cache.get_or_make(7, lambda: made.append(7) or "seven") == "seven"
    assert made == [7]


def test_memoize_is_bounded_in_bytes() -> None:
    calls: list[int] = []

    @memoize("test.memoize", 20_000)
    def blob(n: int) -> bytes:
        calls.append(n)
        return bytes(2000)

    for n in range(50):
        blob(n)
    assert blob.cache.nbytes <= 20_000 and len(blob.cache) < 10  # type: ignore[attr-defined]
    blob(49)
    assert calls.count(49) == 1  # the most recent is still kept
    blob(0)
    assert calls.count(0) == 2  # the oldest was evicted and made again


def test_pictures_cost_their_pixels() -> None:
    palette, rgb = Image.new("P", (300, 200)), Image.new("RGB", (300, 200))
    assert picture_cost(palette) >= 300 * 200 and picture_cost(rgb) >= 4 * 300 * 200
    assert cost_of(palette) == picture_cost(palette)
    shot = Screenshot(bytes(100), rgb)  # a screenshot carrying its decoded picture weighs both
    assert cost_of(shot) >= picture_cost(rgb) + 100
    assert cost_of((palette, 1)) > picture_cost(palette)


def test_registry_lists_live_caches() -> None:
    cache: ByteLRU[str, str] = ByteLRU("test.registry", 4096)
    cache.put("k", "v")
    stats = cache_stats()["test.registry"]
    assert stats == {"entries": 1, "bytes": cache.nbytes, "max_bytes": 4096}


def test_threads_keep_the_count_exact() -> None:
    cache: ByteLRU[tuple[int, int], bytes] = ByteLRU("test.threads", 50_000)

    def fill(t: int) -> None:
        for i in range(500):
            cache.put((t, i), bytes(100 + i % 7))
            cache.get((t, i - 3))

    threads = [threading.Thread(target=fill, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.nbytes <= 50_000
    assert cache.nbytes == sum(cost_of(k, v) + ENTRY_OVERHEAD for k, v in
                               ((k, cache.get(k)) for k in [(t, i) for t in range(4) for i in range(500)])
                               if v is not None)


def test_a_negative_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        ByteLRU("test.negative", -1)
