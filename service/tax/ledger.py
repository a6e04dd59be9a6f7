"""The user's ledger as ``quantcore.tax`` lot ledgers.

Lots belong to a portfolio (an account): each portfolio's symbols are namespaced
``"<portfolio id>:<symbol>"`` before :func:`quantcore.tax.match_lots`, with a
``substantially_identical`` map back to the bare symbol, so that a sale relieves
only that portfolio's lots while the wash-sale rule sees purchases in every
portfolio of the user. Portfolios are matched together per lot method; when the
user's portfolios use different methods the per-method ledgers are merged (the
wash-sale rule then sees purchases within each method's group only).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.tax import LotLedger, match_lots
from service.db.models import Asset, Portfolio, Transaction
from service.errors import ValidationError

__all__ = ["display", "load_ledger", "merge", "split_symbol"]


def split_symbol(name: str) -> tuple[int, str]:
    """``"12:AAPL"`` -> ``(12, "AAPL")``."""
    pid, _, symbol = name.partition(":")
    return int(pid), symbol


def merge(ledgers: Sequence[LotLedger]) -> LotLedger:
    """One ledger holding the records of several (symbol, lot and group codes offset)."""
    if len(ledgers) == 1:
        return ledgers[0]
    sym_off = lot_off = grp_off = 0
    parts: dict[str, list[np.ndarray]] = {
        k: [] for k in ("open_lots", "realized", "dividends", "buys", "groups")
    }
    symbols: list[str] = []
    lot_names: list[str] = []
    for led in ledgers:
        o, r, d, b = (
            led.open_lots.copy(),
            led.realized.copy(),
            led.dividends.copy(),
            led.buys.copy(),
        )
        o["symbol"] += sym_off
        o["lot"] += lot_off
        r["symbol"] += sym_off
        r["lot"] += lot_off
        r["row"] += lot_off
        d["symbol"] += sym_off
        d["row"] += lot_off
        if b.size:
            b[:, 0] += sym_off
            b[:, 3] += lot_off
        parts["open_lots"].append(o)
        parts["realized"].append(r)
        parts["dividends"].append(d)
        parts["buys"].append(b.reshape(-1, 4))
        parts["groups"].append(led.groups + grp_off)
        symbols += led.symbols
        lot_names += led.lot_names
        sym_off += len(led.symbols)
        lot_off += len(led.lot_names)
        grp_off += int(led.groups.max()) + 1 if led.groups.size else 0
    return LotLedger(
        symbols=tuple(symbols),
        method="+".join(sorted({led.method for led in ledgers})),
        open_lots=np.concatenate(parts["open_lots"]),
        realized=np.concatenate(parts["realized"]),
        dividends=np.concatenate(parts["dividends"]),
        buys=np.concatenate(parts["buys"]),
        groups=np.concatenate(parts["groups"]).astype(np.int64),
        lot_names=tuple(lot_names),
    )


def display(ledger: LotLedger) -> LotLedger:
    """The ledger with bare symbols (for reports: ``"100 sh. AAPL"``)."""
    return dataclasses.replace(ledger, symbols=tuple(split_symbol(s)[1] for s in ledger.symbols))


async def load_ledger(
    session: AsyncSession, user_id: int, portfolio_id: int | None
) -> LotLedger | None:
    """The lot ledger of one of the user's portfolios, or of all of them (``None``: no portfolio).

    Raises:
        ValidationError: ``lot_method`` when ``quantcore`` cannot relieve the lots
            (e.g. ``specific`` without lot ids).
    """
    query = select(Portfolio).where(Portfolio.user_id == user_id)
    if portfolio_id is not None:
        query = query.where(Portfolio.id == portfolio_id)
    portfolios = list((await session.execute(query.order_by(Portfolio.id))).scalars())
    if not portfolios:
        return None
    methods = {p.id: p.lot_method for p in portfolios}
    rows = (
        await session.execute(
            select(Transaction, Asset.symbol)
            .join(Asset, Asset.id == Transaction.asset_id)
            .where(Transaction.portfolio_id.in_(list(methods)))
            .order_by(Transaction.transaction_date, Transaction.id)
        )
    ).tuples()
    table = pd.DataFrame.from_records(
        [
            (
                f"{t.portfolio_id}:{sym}",
                sym,
                methods[t.portfolio_id],
                t.transaction_date,
                t.transaction_type,
                t.quantity,
                t.price,
                t.fees,
            )
            for t, sym in rows
        ],
        columns=["symbol", "bare", "method", "date", "type", "quantity", "price", "fees"],
    )
    ledgers = []
    for method in sorted(set(methods.values())):
        part = table[table["method"] == method].reset_index(drop=True)
        same = dict(zip(part["symbol"], part["bare"], strict=True))
        try:
            ledgers.append(match_lots(part, method=method, substantially_identical=same))  # type: ignore[arg-type]
        except ValueError as exc:
            raise ValidationError(
                "lot_method", "invalid", f"Lot method {method!r}: {exc}"
            ) from None
    return merge(ledgers)
