"""The llama.cpp context pool: first come, first served; prefix-aware choice; cancelled waiters."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from textgen.backends.llama_cpp_pool import ContextPool, cached_ids, common_prefix


@dataclass
class FakeContext:
    """Stands in for ``llama_cpp.Llama``: the pool reads only ``input_ids`` and ``n_tokens``."""

    tokens: list[int] = field(default_factory=list)

    @property
    def input_ids(self) -> np.ndarray:
        return np.array(self.tokens + [0] * 4, dtype=np.intc)  # like llama: a buffer longer than n_tokens

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


def test_common_prefix_and_cached_ids() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix([1, 2], [1, 2, 3]) == 2 and common_prefix([], [1]) == 0
    assert list(cached_ids(FakeContext([5, 6]))) == [5, 6]


def test_free_context_with_the_longest_shared_prefix_is_chosen() -> None:
    a, b = FakeContext([1, 2, 3]), FakeContext([7, 8, 9, 10])

    async def main() -> None:
        pool = ContextPool([a, b])
        assert await pool.acquire([7, 8, 1]) is b
        assert await pool.acquire([7, 8, 1]) is a  # the only one left
        pool.release(a)
        pool.release(b)
        assert await pool.acquire([1, 2, 3, 4]) is a

    asyncio.run(main())


def test_waiters_are_served_in_arrival_order() -> None:
    async def main() -> list[str]:
        pool = ContextPool([FakeContext()])
        held = await pool.acquire([])
        order: list[str] = []

        async def request(name: str) -> None:
            context = await pool.acquire([])
            order.append(name)
            await asyncio.sleep(0)
            pool.release(context)

        tasks = [asyncio.create_task(request(n)) for n in "abcde"]
        await asyncio.sleep(0)
        assert pool.waiting == 5 and pool.free == 0
        pool.release(held)
        await asyncio.gather(*tasks)
        assert pool.free == 1 and pool.waiting == 0
        return order

    assert asyncio.run(main()) == list("abcde")


def test_a_cancelled_waiter_does_not_keep_a_context() -> None:
    async def main() -> None:
        pool = ContextPool([FakeContext()])
        held = await pool.acquire([])
        gone = asyncio.create_task(pool.acquire([]))
        later = asyncio.create_task(pool.acquire([]))
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.sleep(0)
        pool.release(held)
        assert await later is held  # skipped the cancelled waiter
        pool.release(held)
        assert pool.free == 1

    asyncio.run(main())
