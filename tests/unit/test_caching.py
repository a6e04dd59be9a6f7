"""service.caching.TTLCache: LRU order, time-to-live on an injected clock, and the age of an entry."""

from __future__ import annotations

from service.caching import TTLCache


def test_lru_eviction_keeps_the_recently_used() -> None:
    cache: TTLCache[str, int] = TTLCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_ttl_and_age_on_a_fake_clock() -> None:
    now = [100.0]
    cache: TTLCache[str, str] = TTLCache(10, ttl=30.0, clock=lambda: now[0])
    cache.put("k", "v")
    now[0] = 110.0
    assert cache.entry("k") == ("v", 10.0)
    now[0] = 130.0  # an entry is served for less than ttl seconds
    assert cache.entry("k") is None and len(cache) == 0


def test_pop_clear_and_disabled() -> None:
    cache: TTLCache[int, int] = TTLCache(4)
    cache.put(1, 1)
    cache.put(2, 2)
    cache.pop(1)
    cache.pop(99)
    assert cache.get(1) is None and cache.get(2) == 2
    cache.clear()
    assert len(cache) == 0
    off: TTLCache[int, int] = TTLCache(4, ttl=0)
    off.put(1, 1)
    assert off.get(1) is None
