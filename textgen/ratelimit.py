"""Per-project request limits over a sliding minute: the service's one limiter, configured.

The mechanism is :mod:`service.ratelimit` (the finance API's too), set here to a
sliding window and OpenAI's headers. With ``TEXTGEN_REDIS_URL`` set, every instance
counts in the same Redis sorted set per project (one atomic script, Redis's own
clock), so N instances allow the limit once, not N times. Each answer carries
``x-ratelimit-limit-requests``, ``x-ratelimit-remaining-requests`` and
``x-ratelimit-reset-requests`` (the time until the window is empty again); a refused
request gets ``Retry-After``: the seconds until the oldest counted request leaves
the window, the true wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from service.ratelimit import OPENAI_HEADERS, Hit, RateLimit, RateLimiter, Window, make_store

__all__ = ["WINDOW_SECONDS", "Limiter", "headers", "make_limiter"]

WINDOW_SECONDS = 60


class Limiter:
    """Counts a project's requests against ``per_minute`` over a sliding minute.

    Args:
        limiter: the shared mechanism (a sliding window over a memory or Redis store).
        per_minute: requests per project per minute.
    """

    def __init__(self, limiter: RateLimiter, per_minute: int) -> None:
        self.limiter = limiter
        self.rate = RateLimit(per_minute, WINDOW_SECONDS)

    async def hit(self, project: str) -> Hit:
        """Count one request of ``project`` if the limit allows it."""
        return await self.limiter.hit(project, self.rate)

    async def close(self) -> None:
        """Release the store's connections."""
        await self.limiter.close()


def make_limiter(
    per_minute: int, redis_url: str, *, clock: Callable[[], float] = time.time
) -> Limiter | None:
    """The limiter the settings ask for; ``None`` when the limit is off (0).

    ``clock`` is read by the in-memory store only (tests inject their own).
    """
    if not per_minute:
        return None
    store = make_store(redis_url, "textgen:ratelimit")
    return Limiter(RateLimiter(store, Window.SLIDING, clock=clock), per_minute)


def headers(decision: Hit) -> dict[str, str]:
    """The ``x-ratelimit-*`` headers of a decision (and ``Retry-After`` when refused)."""
    return OPENAI_HEADERS.headers(decision)
