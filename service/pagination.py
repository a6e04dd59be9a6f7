"""Offset pagination shared by every list endpoint: ``{results, count, next, previous}``.

``limit`` (default 20, at most 100), ``offset`` (default 0) or ``page`` (1-based, an
alternative to ``offset``). ``next``/``previous`` are absolute URLs that keep the
request's other query parameters and use ``limit``/``offset``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar
from urllib.parse import urlencode

import msgspec
from litestar import Request
from litestar.di import NamedDependency
from litestar.params import QueryParameter

from service.errors import ValidationError

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "Limit",
    "Offset",
    "Page",
    "PageNumber",
    "PageParams",
    "Windowed",
    "page_params",
    "provide_page_params",
    "windowed",
]

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
T = TypeVar("T")


class PageParams(msgspec.Struct, frozen=True):
    """The resolved window: ``limit`` rows starting at ``offset``."""

    limit: int
    offset: int


class Page(msgspec.Struct, Generic[T], kw_only=True):
    """One page of a list."""

    results: list[T]
    count: int
    next: str | None
    previous: str | None

    @classmethod
    def build(
        cls, request: Request[Any, Any, Any], items: Sequence[T], count: int, params: PageParams
    ) -> Page[T]:
        """Wrap ``items`` (already sliced) with the total ``count`` and navigation URLs."""
        nxt = params.offset + params.limit
        prev = max(params.offset - params.limit, 0)
        return cls(
            results=list(items),
            count=count,
            next=_url(request, params.limit, nxt) if nxt < count else None,
            previous=_url(request, params.limit, prev) if params.offset > 0 else None,
        )


def _url(request: Request[Any, Any, Any], limit: int, offset: int) -> str:
    query = [
        (k, v)
        for k, v in request.query_params.multi_items()
        if k not in ("limit", "offset", "page")
    ]
    query += [("limit", str(limit)), ("offset", str(offset))]
    base = str(request.base_url).rstrip("/")
    raw = request.scope.get("raw_path")  # the path as sent (Litestar strips a trailing slash)
    path = raw.decode("latin-1").split("?", 1)[0] if isinstance(raw, bytes) else request.url.path
    return f"{base}{path}?{urlencode(query)}"


Limit = Annotated[
    int, QueryParameter(name="limit", ge=1, le=MAX_LIMIT, description="Page size (max 100).")
]
Offset = Annotated[int | None, QueryParameter(name="offset", ge=0, description="Rows to skip.")]
PageNumber = Annotated[
    int | None,
    QueryParameter(name="page", ge=1, description="1-based page; alternative to offset."),
]


def page_params(
    limit: int = DEFAULT_LIMIT, offset: int | None = None, page: int | None = None
) -> PageParams:
    """The window of validated ``limit``, ``offset`` and ``page`` query parameters.

    The ``paging`` dependency is this function (:func:`provide_page_params`).

    Raises:
        ValidationError: both ``page`` and ``offset``.
    """
    if offset is not None and page is not None:
        raise ValidationError("page", "invalid", "Give either `page` or `offset`, not both.")
    if page is not None:
        offset = (page - 1) * limit
    return PageParams(limit=limit, offset=offset or 0)


def provide_page_params(
    limit: Limit = DEFAULT_LIMIT, offset: Offset = None, page: PageNumber = None
) -> PageParams:
    """The ``paging`` dependency (every list endpoint's; :func:`page_params`).

    Registered once for the whole app (:func:`service.state.app_dependencies`), as a
    plain function resolved on the event loop.
    """
    return page_params(limit, offset, page)


@dataclass(frozen=True, slots=True)
class Windowed(Generic[T]):
    """A read service that lives as long as the app, with the request's ``paging``."""

    reads: T
    paging: PageParams


def windowed(reads: T) -> Callable[[PageParams], Windowed[T]]:
    """A dependency provider that hands ``reads`` over together with ``paging``.

    For a hot list handler: Litestar resolves the dependencies a handler names that
    do not depend on each other concurrently, in a task group, and naming ``paging``
    beside a read service costs that task group (the portfolio list measured in
    process, medians of 7 interleaved rounds: 0.58 ms of CPU per request against 0.33
    with the window computed in the handler). This provider depends on ``paging``, so
    the handler names one dependency and the two resolve one after the other (0.32).
    """

    def provide(paging: NamedDependency[PageParams]) -> Windowed[T]:
        return Windowed(reads, paging)

    return provide
