"""A portfolio's cash, derived from its ledger (:mod:`quantcore.cash`), and the strict policy.

Nothing about cash is stored: the balance per currency is the sum of what each ledger
row pays or receives (:func:`quantcore.cash.cash_flows`), read here in one query of
the portfolios' rows. A cash row's currency is its own (``transactions.currency``); a
security row's cash moves in its asset's currency.

Under ``cash_policy = "strict"`` a write is refused when, with the change applied,
some currency's cash would end a day below zero (:func:`quantcore.cash.first_overdraft`):
the check is on the whole history in date order, so a backdated buy before the
deposit that pays for it is refused too.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import pandas as pd
from sqlalchemy import Float, bindparam, cast, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from quantcore.cash import cash_flows, first_overdraft
from service import formatting as fmt
from service.assets.market import MarketData
from service.db.models import Asset, Portfolio, Transaction
from service.errors import ValidationError

__all__ = [
    "CashRow",
    "balances",
    "check_currency",
    "check_strict",
    "ledger_frame",
    "read_cash_rows",
]

_T = Transaction.__table__.c
_A = Asset.__table__
_TARGET = aliased(Asset)

#: ``(portfolio_id, transaction_id, date, type, symbol, currency, quantity, price, fees,
#: ratio, cash, target_symbol)``: a ledger row as its cash needs it.
CashRow = tuple[Any, ...]

_ROWS = (
    select(
        _T.portfolio_id,
        _T.id,
        _T.transaction_date,
        _T.transaction_type,
        _A.c.symbol,
        func.coalesce(_T.currency, _A.c.currency),
        cast(_T.quantity, Float),
        cast(_T.price, Float),
        cast(_T.fees, Float),
        cast(_T.ratio, Float),
        cast(_T.cash, Float),
        _TARGET.symbol,
    )
    .select_from(Transaction.__table__)
    .outerjoin(_A, _A.c.id == _T.asset_id)
    .outerjoin(_TARGET, _TARGET.id == _T.target_asset_id)
    .order_by(_T.portfolio_id, _T.transaction_date, _T.id)
)
_OF_PORTFOLIOS = _ROWS.where(_T.portfolio_id.in_(bindparam("ids", expanding=True)))
_OF_USER = _ROWS.join(Portfolio.__table__, Portfolio.__table__.c.id == _T.portfolio_id).where(
    Portfolio.__table__.c.user_id == bindparam("user_id")
)
_COLUMNS = (
    "portfolio", "id", "date", "type", "symbol", "currency", "quantity", "price", "fees",
    "ratio", "cash", "target_symbol",
)  # fmt: skip


async def read_cash_rows(
    conn: AsyncConnection, *, user_id: int | None = None, portfolio_ids: Collection[int] = ()
) -> list[CashRow]:
    """The ledger rows of the user's portfolios (or of ``portfolio_ids``), as :data:`CashRow`."""
    if user_id is not None:
        return [tuple(r) for r in await conn.execute(_OF_USER, {"user_id": user_id})]
    if not portfolio_ids:
        return []
    return [tuple(r) for r in await conn.execute(_OF_PORTFOLIOS, {"ids": list(portfolio_ids)})]


def ledger_frame(rows: Sequence[CashRow]) -> pd.DataFrame:
    """Rows as the table :func:`quantcore.cash.cash_flows` reads."""
    return pd.DataFrame(list(rows), columns=list(_COLUMNS))


def balances(rows: Sequence[CashRow], base: dict[int, str]) -> dict[int, dict[str, float]]:
    """Cash per currency of each portfolio of ``base`` (portfolio id -> its base currency,
    the currency of a cash row that names none): one pass over all the rows."""
    out: dict[int, dict[str, float]] = {pid: {} for pid in base}
    if not rows:
        return out
    frame = ledger_frame(rows)
    missing = frame["currency"].isna()
    if missing.any():
        frame.loc[missing, "currency"] = frame.loc[missing, "portfolio"].map(base).fillna("USD")
    flows = cash_flows(frame, by="portfolio")
    sums = flows.groupby(["portfolio", "currency"], sort=True)["amount"].sum()
    for key, amount in sums.items():
        pid, code = _group_key(key)
        out.setdefault(pid, {})[code] = float(amount)
    return out


def _group_key(key: Any) -> tuple[int, str]:
    """A ``(portfolio, currency)`` group key with its types."""
    return int(key[0]), str(key[1])


def check_strict(rows: Sequence[CashRow], base_currency: str, field: str, action: str) -> None:
    """Refuse a change whose ledger ``rows`` (one portfolio's, the change applied) overdraw cash.

    Raises:
        ValidationError: ``field`` ``insufficient_cash``, naming the day and currency.
    """
    low = first_overdraft(ledger_frame(rows), default_currency=base_currency)
    if low is None:
        return
    raise ValidationError(
        field,
        "insufficient_cash",
        f"{action} would leave {fmt.money(low.balance)} {low.currency} of cash on "
        f"{low.date.date()}; the portfolio's cash_policy is strict (cash may not go negative).",
        currency=low.currency,
        date=low.date.date().isoformat(),
    )


def check_currency(market: MarketData, code: str, field: str) -> str:
    """``code`` when the market has exchange rates for it.

    Raises:
        ValidationError: ``field`` ``unsupported``, listing the supported codes.
    """
    supported = market.currencies()
    if code not in supported:
        raise ValidationError(
            field, "unsupported",
            f"{field} {code!r} has no exchange rates here; supported: {', '.join(supported)}.",
        )  # fmt: skip
    return code
