"""CSV downloads of the lists (``format=csv`` or ``Accept: text/csv``): request check and streaming.

Shared by the features that export a list (transactions, positions); each writes its
own columns.
"""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any, Literal

from litestar import Request
from litestar.params import QueryParameter
from litestar.response import Stream

__all__ = ["CSV_MEDIA_TYPE", "CsvStream", "ExportFormat", "csv_line", "csv_requested", "csv_stream"]

#: ``format=csv``: every matching row as a streamed CSV file (not paginated).
ExportFormat = Annotated[
    Literal["json", "csv"] | None,
    QueryParameter(
        description=(
            "json (default: a page) or csv (every matching row, streamed, in the generic "
            "CSV import layout); without it, Accept: text/csv asks for csv."
        ),
    ),
]
CSV_MEDIA_TYPE = "text/csv"


def csv_requested(request: Request[Any, Any, Any], fmt: str | None) -> bool:
    """``format=csv``, or (no ``format``) an ``Accept`` header that prefers ``text/csv``."""
    if fmt is not None:
        return fmt == "csv"
    return request.accept.best_match(["application/json", CSV_MEDIA_TYPE]) == CSV_MEDIA_TYPE


def csv_line(cells: Sequence[object]) -> str:
    """One CSV record (RFC 4180 line ending); ``None`` is an empty cell."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(["" if c is None else c for c in cells])
    return out.getvalue()


class CsvStream(Stream):
    """A :class:`~litestar.response.Stream` that keeps its own media type: Litestar's
    ``Stream.to_asgi_response`` prefers the route handler's (JSON here) over it."""

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["media_type"] = self.media_type
        return super().to_asgi_response(*args, **kwargs)


def csv_stream(lines: AsyncIterator[str], filename: str) -> Stream:
    """A streamed ``text/csv`` download."""
    return CsvStream(
        lines,
        media_type=CSV_MEDIA_TYPE,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
