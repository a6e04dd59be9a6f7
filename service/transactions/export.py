"""``format=csv`` on the transaction and position lists: every matching row as CSV, streamed.

The transactions file is in the generic CSV import layout (``docs/service.md``, "Import"):
``id``, ``date``, ``type``, ``symbol``, ``quantity``, ``price``, ``fees``, ``currency``,
then the columns of corporate actions (``split_ratio``, ``cash_in_lieu``, ``ratio``,
``target_symbol``, ``basis_allocation``, ``cash_per_share``) and ``lot_id`` (the ``id``
of the buy a specific-lot sale relieves). Decimal cells are the stored values' own
digits (no rounding). A cash row has no ``symbol`` and no ``quantity``: its ``price`` is
the amount, in ``currency``. Rows come in the list's order (newest first), read page by
page in one database session, so a ledger of any size streams in constant memory.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Annotated, Any, Literal

from litestar import Request
from litestar.params import QueryParameter
from litestar.response import Stream

from service.db import Database
from service.pagination import PageParams
from service.portfolios.schemas import PositionRead
from service.transactions import services
from service.transactions.schemas import CASH_TYPES, TransactionRead

__all__ = [
    "POSITION_COLUMNS",
    "TRANSACTION_COLUMNS",
    "CsvStream",
    "ExportFormat",
    "csv_requested",
    "csv_stream",
    "position_csv",
    "position_rows",
    "transaction_csv",
    "transaction_rows",
]

TRANSACTION_COLUMNS = (
    "id", "date", "type", "symbol", "quantity", "price", "fees", "currency",
    "split_ratio", "cash_in_lieu", "ratio", "target_symbol", "basis_allocation",
    "cash_per_share", "lot_id",
)  # fmt: skip
POSITION_COLUMNS = (
    "symbol", "name", "quantity", "average_cost", "cost_basis", "currency", "current_price",
    "fx_rate", "current_value", "unrealized_gain_loss", "unrealized_gain_loss_percent",
)  # fmt: skip
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
#: Rows read per page while streaming.
CHUNK = 1000
CSV_MEDIA_TYPE = "text/csv"


def csv_requested(request: Request[Any, Any, Any], fmt: str | None) -> bool:
    """``format=csv``, or (no ``format``) an ``Accept`` header that prefers ``text/csv``."""
    if fmt is not None:
        return fmt == "csv"
    return request.accept.best_match(["application/json", CSV_MEDIA_TYPE]) == CSV_MEDIA_TYPE


def _line(cells: Sequence[object]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(["" if c is None else c for c in cells])
    return out.getvalue()


def transaction_rows(items: Iterable[TransactionRead]) -> Iterable[list[object]]:
    """The CSV cells of each transaction, in :data:`TRANSACTION_COLUMNS` order."""
    for t in items:
        cash = t.transaction_type in CASH_TYPES
        yield [
            t.id, t.transaction_date.isoformat(), t.transaction_type, t.asset_symbol,
            None if cash else t.quantity, t.price, t.fees, t.currency, t.split_ratio,
            t.cash_in_lieu, t.ratio, t.target_symbol, t.basis_allocation, t.cash_per_share,
            t.lot_id,
        ]  # fmt: skip


def position_rows(items: Iterable[PositionRead]) -> Iterable[list[object]]:
    """The CSV cells of each position, in :data:`POSITION_COLUMNS` order."""
    for p in items:
        yield [
            p.asset.symbol, p.asset.name, p.quantity, p.average_cost, p.cost_basis, p.currency,
            p.asset.current_price, p.fx_rate, p.current_value, p.unrealized_gain_loss,
            p.unrealized_gain_loss_percent,
        ]  # fmt: skip


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


def transaction_csv(
    db: Database,
    user_id: int,
    *,
    portfolio_id: int | None,
    asset_symbol: str | None,
    transaction_type: str | None,
    date_from: dt.date | None,
    date_to: dt.date | None,
) -> Stream:
    """Every transaction matching the filters, as a streamed CSV download.

    Raises:
        ValidationError: ``date_from`` after ``date_to`` (before anything is sent).
    """
    services.check_date_range(date_from, date_to)

    async def lines() -> AsyncIterator[str]:
        yield _line(TRANSACTION_COLUMNS)
        async with db.read() as s:
            offset = 0
            while True:
                items, count = await services.list_transactions(
                    s, user_id, PageParams(limit=CHUNK, offset=offset),
                    portfolio_id=portfolio_id, asset_symbol=asset_symbol,
                    transaction_type=transaction_type, date_from=date_from, date_to=date_to,
                )  # fmt: skip
                for cells in transaction_rows(items):
                    yield _line(cells)
                offset += CHUNK
                if offset >= count or not items:
                    break

    name = f"transactions-{portfolio_id}.csv" if portfolio_id is not None else "transactions.csv"
    return csv_stream(lines(), name)


def position_csv(items: Sequence[PositionRead], portfolio_id: int) -> Stream:
    """A portfolio's positions table (every position, as the list shows them) as CSV."""

    async def lines() -> AsyncIterator[str]:
        yield _line(POSITION_COLUMNS)
        for cells in position_rows(items):
            yield _line(cells)

    return csv_stream(lines(), f"positions-{portfolio_id}.csv")
