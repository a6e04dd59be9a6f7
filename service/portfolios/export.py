"""``format=csv`` on a portfolio's positions: the positions table as the list shows it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence

from litestar.response import Stream

from service.csvexport import csv_line, csv_stream
from service.portfolios.schemas import PositionRead

__all__ = ["POSITION_COLUMNS", "position_csv", "position_rows"]

POSITION_COLUMNS = (
    "symbol", "name", "quantity", "average_cost", "cost_basis", "currency", "current_price",
    "fx_rate", "current_value", "unrealized_gain_loss", "unrealized_gain_loss_percent",
)  # fmt: skip


def position_rows(items: Iterable[PositionRead]) -> Iterable[list[object]]:
    """The CSV cells of each position, in :data:`POSITION_COLUMNS` order."""
    for p in items:
        yield [
            p.asset.symbol, p.asset.name, p.quantity, p.average_cost, p.cost_basis, p.currency,
            p.asset.current_price, p.fx_rate, p.current_value, p.unrealized_gain_loss,
            p.unrealized_gain_loss_percent,
        ]  # fmt: skip


def position_csv(items: Sequence[PositionRead], portfolio_id: int) -> Stream:
    """A portfolio's positions table (every position, as the list shows them) as CSV."""

    async def lines() -> AsyncIterator[str]:
        yield csv_line(POSITION_COLUMNS)
        for cells in position_rows(items):
            yield csv_line(cells)

    return csv_stream(lines(), f"positions-{portfolio_id}.csv")
