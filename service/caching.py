"""The one in-process cache of the service: a thread-safe LRU map with an optional time-to-live.

Every cache is an attribute of the object whose data it keeps (the market, the asset
directory, the identity resolver), never a module global, and each use says beside
it what invalidates an entry: its TTL, an explicit :meth:`TTLCache.pop` /
:meth:`TTLCache.clear` where this process changes the data, or a version stored in
the value and compared on read. Values are shared between callers: store immutable
objects (frozen structs, read-only arrays).

The hot paths read it without a trip through the event loop: it is plain
synchronous code under a :class:`threading.Lock` (the analytics also read it from
worker threads).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["TTLCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TTLCache(Generic[K, V]):
    """At most ``maxsize`` entries, least recently used evicted first, each served ``ttl`` seconds.

    Args:
        maxsize: entries kept.
        ttl: seconds an entry is served after it was stored (``inf``: until evicted).
        clock: seconds, monotonic (tests inject their own).
    """

    def __init__(
        self,
        maxsize: int,
        ttl: float = math.inf,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.maxsize = maxsize
        self.ttl = ttl
        self.clock = clock
        self._items: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def entry(self, key: K) -> tuple[V, float] | None:
        """The value of ``key`` and its age in seconds, while it is fresh (else ``None``)."""
        now = self.clock()
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            age = now - item[0]
            if age >= self.ttl:
                del self._items[key]
                return None
            self._items.move_to_end(key)
            return item[1], age

    def get(self, key: K) -> V | None:
        """The fresh value of ``key`` (``None``: absent or expired)."""
        found = self.entry(key)
        return None if found is None else found[0]

    def put(self, key: K, value: V) -> None:
        """Store ``value`` (nothing is kept when ``maxsize`` or ``ttl`` is 0)."""
        if self.maxsize <= 0 or self.ttl <= 0:
            return
        stamp = self.clock()
        with self._lock:
            self._items[key] = (stamp, value)
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def pop(self, key: K) -> None:
        """Forget ``key``."""
        with self._lock:
            self._items.pop(key, None)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
