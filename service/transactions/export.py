"""``format=csv`` on the transaction list: every matching row as CSV, streamed.

The transactions file is in the generic CSV import layout (``docs/service.md``, "Import"):
``id``, ``date``, ``type``, ``symbol``, ``quantity``, ``price``, ``fees``, ``currency``,
then the columns of corporate actions (``split_ratio``, ``cash_in_lieu``, ``ratio``,
``target_symbol``, ``basis_allocation``, ``cash_per_share``) and ``lot_id`` (the ``id``
of the buy a specific-lot sale relieves). Decimal cells are the stored values' own
digits (no rounding). A cash row has no ``symbol`` and no ``quantity``: its ``price`` is
the amount, in ``currency``. Rows come in the list's order (newest first), read page by
page in one database session, each page from where the last one ended (not by an
offset, whose scan grows with the page's place), so a ledger of any size streams in
constant memory and linear time; the
pages are read from one snapshot (on PostgreSQL a ``REPEATABLE READ`` transaction: under
``READ COMMITTED`` a row written between two pages would shift the offsets, repeating or
dropping a row of the file).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Iterable

from litestar.response import Stream

from service.csvexport import csv_line, csv_stream
from service.db import Database
from service.ledger import pages
from service.transactions import services
from service.transactions.schemas import CASH_TYPES, TransactionRead

__all__ = ["TRANSACTION_COLUMNS", "transaction_csv", "transaction_rows"]

TRANSACTION_COLUMNS = (
    "id", "date", "type", "symbol", "quantity", "price", "fees", "currency",
    "split_ratio", "cash_in_lieu", "ratio", "target_symbol", "basis_allocation",
    "cash_per_share", "lot_id",
)  # fmt: skip
#: Rows read per page while streaming.
CHUNK = 1000


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
    pages.check_date_range(date_from, date_to)

    async def lines() -> AsyncIterator[str]:
        yield csv_line(TRANSACTION_COLUMNS)
        async with db.read() as s:
            if not db.is_sqlite:  # one snapshot for every page (SQLite's read transaction is one)
                await s.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            last = None
            while True:
                items = await services.transactions_after(
                    s, user_id, CHUNK, last,
                    portfolio_id=portfolio_id, asset_symbol=asset_symbol,
                    transaction_type=transaction_type, date_from=date_from, date_to=date_to,
                )  # fmt: skip
                for cells in transaction_rows(items):
                    yield csv_line(cells)
                if len(items) < CHUNK:
                    break
                last = items[-1]

    name = f"transactions-{portfolio_id}.csv" if portfolio_id is not None else "transactions.csv"
    return csv_stream(lines(), name)
