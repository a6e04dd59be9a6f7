"""A fair pool of llama.cpp contexts: requests wait in arrival order for a free context.

A ``llama_cpp.Llama`` object holds one key/value cache and is not thread-safe, so
each generation owns one context from start to end. Waiting requests are served
first come, first served; among free contexts the one whose cached tokens share
the longest prefix with the new prompt is chosen, so a repeated prefix lands
where its state already lives. A context goes back to the pool the moment its
worker thread stops (a cancelled request stops it at the next token).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from typing import Any

__all__ = ["ContextPool", "common_prefix"]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def cached_ids(llama: Any) -> Sequence[int]:
    """The tokens whose key/value state a context holds (evaluated, in order)."""
    return llama.input_ids[: llama.n_tokens]


class ContextPool:
    """Contexts handed out first come, first served.

    Args:
        contexts: The ``llama_cpp.Llama`` objects (one key/value cache each).
    """

    def __init__(self, contexts: Sequence[Any]) -> None:
        self.contexts = list(contexts)
        self._free = list(self.contexts)
        self._waiters: deque[asyncio.Future[Any]] = deque()

    @property
    def free(self) -> int:
        """Contexts not in use right now."""
        return len(self._free)

    @property
    def waiting(self) -> int:
        """Requests queued for a context."""
        return sum(1 for f in self._waiters if not f.done())

    async def acquire(self, ids: Sequence[int]) -> Any:
        """A free context, the best prefix match for ``ids``; waits its turn when none is free."""
        if self._free and not self.waiting:
            best = max(self._free, key=lambda c: common_prefix(cached_ids(c), ids))
            self._free.remove(best)
            return best
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(future.result())  # handed over just as the waiter gave up
            raise

    def release(self, context: Any) -> None:
        """Give ``context`` to the longest-waiting request, or back to the pool.

        Must run on the event loop (worker threads use ``call_soon_threadsafe``).
        """
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(context)
                return
        self._free.append(context)
