"""Corporate actions in a portfolio's value history: ledger quantities x unadjusted closes.

The analytics value history (:mod:`service.analytics.history`) knows buys, sells and
dividends. :func:`history_rows` turns each corporate action of a portfolio's ledger
into those, with :func:`quantcore.portfolio.corporate_action_flows`: the shares a split,
stock dividend, spin-off or merger adds or removes become a buy or sell at price 0 (no
money moves), and the cash it pays (cash in lieu, a merger's cash, a return of capital)
a cash-out like a dividend's. Closes are never back-adjusted: on a 4-for-1 split's date
the close falls to a quarter while the quantity held quadruples, so the value does not
show a 75 % crash.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from quantcore.portfolio import corporate_action_flows
from service.db.models import Asset, Transaction
from service.ledger.checks import CORPORATE_ACTIONS, ledger_key

__all__ = ["LedgerRow", "history_rows"]


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One ledger entry as the history needs it (amounts as floats).

    ``symbol`` is empty on a cash row. ``currency`` is the currency the row's cash moves
    in; empty means the asset's (a security row) or the base currency (a cash row).
    """

    symbol: str
    kind: str  # buy | sell | dividend | deposit | withdrawal | interest | fee
    quantity: float
    price: float
    fees: float
    date: dt.date
    currency: str = ""


async def history_rows(
    session: AsyncSession, portfolio_id: int, rows: Sequence[LedgerRow]
) -> list[LedgerRow]:
    """``rows`` (a portfolio's ledger for the value history) with its corporate actions
    replaced by the share changes and cash they bring; ``rows`` as is when it has none."""
    if not any(r.kind in CORPORATE_ACTIONS for r in rows):
        return list(rows)
    target = aliased(Asset)
    query = (
        select(
            Transaction.id, Asset.symbol, Transaction.transaction_date, Transaction.transaction_type,
            Transaction.quantity, Transaction.price, Transaction.fees, Transaction.ratio,
            Transaction.cash, target.symbol,
        )
        .join(Asset, Asset.id == Transaction.asset_id)
        .outerjoin(target, target.id == Transaction.target_asset_id)
        .where(Transaction.portfolio_id == portfolio_id)
    )  # fmt: skip
    ledger = sorted(
        (await session.execute(query)).tuples(),
        key=lambda r: ledger_key(r[2], r[3], r[5], r[4], r[6], r[0]),
    )
    table = pd.DataFrame.from_records(
        [r[1:] for r in ledger],
        columns=["symbol", "date", "type", "quantity", "price", "fees", "ratio", "cash", "target_symbol"],
    )
    out = [r for r in rows if r.kind not in CORPORATE_ACTIONS]
    for sym, day, qty, cash in corporate_action_flows(table).itertuples(index=False):
        d = day.date()
        if qty > 0:
            out.append(LedgerRow(sym, "buy", float(qty), 0.0, 0.0, d))
        elif qty < 0:
            out.append(LedgerRow(sym, "sell", float(-qty), 0.0, 0.0, d))
        if cash > 0:
            out.append(LedgerRow(sym, "dividend", 1.0, float(cash), 0.0, d))
    out.sort(key=lambda r: r.date)
    return out
