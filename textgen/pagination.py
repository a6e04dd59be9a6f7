"""One pagination for every list route: ``after`` / ``limit`` / ``order`` checked in one place, one page shape.

Handlers take a :class:`Page` (its checks are Litestar's query-parameter validation plus the
range checks here) and answer with :func:`page_body` or :func:`paginate`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from textgen.errors import bad_request
from textgen.schemas import ListPage

__all__ = ["Page", "page_body", "paginate"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page:
    """A request for one page: the cursor, the size and the order (``desc``: latest first)."""

    after: str | None
    limit: int
    order: Literal["asc", "desc"]

    @classmethod
    def of(cls, after: str | None, limit: int, order: str, *, most: int = 100) -> Page:
        """A checked page request: 400 naming ``limit`` (1 to ``most``) or ``order`` (``asc``/``desc``)."""
        if not 1 <= limit <= most:
            raise bad_request(f"'limit' must be between 1 and {most}.", param="limit", code="invalid_value")
        if order not in ("asc", "desc"):
            raise bad_request("'order' must be 'asc' or 'desc'.", param="order", code="invalid_value")
        return cls(after, limit, "asc" if order == "asc" else "desc")


def page_body(data: list[Any], *, has_more: bool, empty_id: str | None = None) -> ListPage:
    """OpenAI's list object. ``empty_id`` is ``first_id``/``last_id`` of an empty page (the SDK types
    conversation item pages' ids as strings, so those use ``""``)."""
    def ident(value: Any) -> str:
        return str(value["id"] if isinstance(value, dict) else value.id)

    return ListPage(data=data, has_more=has_more, first_id=ident(data[0]) if data else empty_id,
                    last_id=ident(data[-1]) if data else empty_id)


def paginate(rows: Sequence[T], page: Page, ident: Callable[[T], str], what: str,
             *, newest_first: bool = False) -> tuple[list[T], bool]:
    """One page of an in-memory list: ``rows`` in ``page.order`` (they come oldest first, or newest
    first with ``newest_first``), after the row whose id is ``page.after``, at most ``page.limit``.

    Raises:
        APIError: 400 on ``after`` when no row has that id (``what`` names the list in the message).
    """
    ordered = list(rows)
    if (page.order == "desc") != newest_first:
        ordered.reverse()
    if page.after is not None:
        ids = [ident(r) for r in ordered]
        if page.after not in ids:
            raise bad_request(f"Cursor 'after' {page.after!r} is not {what}.", param="after", code="invalid_value")
        ordered = ordered[ids.index(page.after) + 1:]
    return ordered[: page.limit], len(ordered) > page.limit
