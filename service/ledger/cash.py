"""A portfolio's cash, derived from its ledger (:mod:`quantcore.cash`), and the strict policy.

Nothing about cash is stored: the balance per currency is the sum of what each ledger
row pays or receives (:func:`quantcore.cash.cash_flows`). Reads take it from the
ledger columns (:func:`service.ledger.read.balances`, once per ledger version); a typed
write checks the strict policy over those columns (:func:`service.ledger.writecheck.check_cash`),
an import and a policy change over the portfolio's rows read here (:func:`read_cash_rows`). A cash row's currency is its own (``transactions.currency``); a
security row's cash moves in its asset's currency.

Under ``cash_policy = "strict"`` a write is refused when, with the change applied,
some currency's cash would end a day below zero (:func:`quantcore.cash.first_overdraft`):
the check is on the whole history in date order, so a backdated buy before the
deposit that pays for it is refused too.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, NoReturn

import numpy as np
import pandas as pd
from sqlalchemy import Float, bindparam, cast, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from quantcore.cash import (
    ACTION_TYPES,
    Overdraft,
    corporate_action_cash,
    first_overdraft,
    row_amounts,
)
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
    "overdraft",
    "overdraft_message",
    "read_cash_rows",
    "refuse_overdraft",
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


def ledger_frame(rows: Sequence[CashRow], more: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Rows as the table :func:`quantcore.cash.cash_flows` reads; ``more``: rows after them
    given as arrays by column name (as a bulk import plans them: no tuple per row)."""
    if more is None:
        return pd.DataFrame(list(rows), columns=list(_COLUMNS))
    old = list(zip(*rows, strict=True)) if rows else [()] * len(_COLUMNS)
    return pd.DataFrame(
        {
            name: np.concatenate([np.asarray(column, dtype=more[name].dtype), more[name]])
            for name, column in zip(_COLUMNS, old, strict=True)
        }
    )


def _add(out: dict[int, dict[str, float]], owner: int, currency: str, amount: float) -> None:
    held = out.setdefault(owner, {})
    held[currency] = held.get(currency, 0.0) + amount


def _row_cash(
    out: dict[int, dict[str, float]], rows: Sequence[Any], base: dict[int, str]
) -> set[int]:
    """Add each row's own cash (``(portfolio, type, currency, quantity, price, fees)``,
    :func:`quantcore.cash.row_amounts` on plain arrays); the portfolios with corporate actions."""
    if not rows:
        return set()
    pid, kind, code, q, p, f = zip(*rows, strict=True)
    for owner, currency, amount in zip(pid, code, row_amounts(kind, q, p, f).tolist(), strict=True):
        _add(out, owner, currency or base.get(owner, "USD"), amount)
    return {owner for owner, k in zip(pid, kind, strict=True) if k in ACTION_TYPES}


def _action_cash(out: dict[int, dict[str, float]], rows: Sequence[CashRow]) -> None:
    """Add the cash corporate actions paid (:func:`quantcore.cash.corporate_action_cash`)."""
    paid = corporate_action_cash(ledger_frame(rows), by="portfolio")
    for owner, currency, amount in zip(
        paid["portfolio"], paid["currency"], paid["amount"], strict=True
    ):
        _add(out, int(owner), str(currency), float(amount))


def _sorted(out: dict[int, dict[str, float]]) -> dict[int, dict[str, float]]:
    return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}


def balances(rows: Sequence[CashRow], base: dict[int, str]) -> dict[int, dict[str, float]]:
    """Cash per currency of each portfolio of ``base`` (portfolio id -> its base currency,
    the currency of a cash row that names none), from :data:`CashRow` rows: each row's own
    amount plus what corporate actions paid (together :func:`quantcore.cash.cash_flows`)."""
    out: dict[int, dict[str, float]] = {pid: {} for pid in base}
    own = [(r[0], r[3], r[5], r[6], r[7], r[8]) for r in rows]
    with_actions = _row_cash(out, own, base)
    if with_actions:
        _action_cash(out, [r for r in rows if r[0] in with_actions])
    return _sorted(out)


def check_strict(rows: Sequence[CashRow], base_currency: str, field: str, action: str) -> None:
    """Refuse a change whose ledger ``rows`` (one portfolio's, the change applied) overdraw cash.

    Raises:
        ValidationError: ``field`` ``insufficient_cash``, naming the day and currency.
    """
    low = overdraft(rows, base_currency)
    if low is not None:
        refuse_overdraft(low, field, action)


def refuse_overdraft(low: Overdraft, field: str, action: str) -> NoReturn:
    """The 400 of a strict portfolio's overdraft: ``field`` ``insufficient_cash``."""
    raise ValidationError(
        field,
        "insufficient_cash",
        overdraft_message(action, low),
        currency=low.currency,
        date=low.date.date().isoformat(),
    )


def overdraft(
    rows: Sequence[CashRow], base_currency: str, more: Mapping[str, Any] | None = None
) -> Overdraft | None:
    """The first day some currency's cash of ``rows`` (one portfolio's; ``more``: more of
    its rows as columns, :func:`ledger_frame`) ends below zero."""
    return first_overdraft(ledger_frame(rows, more), default_currency=base_currency)


def overdraft_message(action: str, low: Overdraft) -> str:
    """What a strict portfolio's refusal says."""
    return (
        f"{action} would leave {fmt.money(low.balance)} {low.currency} of cash on "
        f"{low.date.date()}; the portfolio's cash_policy is strict (cash may not go negative)."
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
