"""A user's whole ledger as columns: the one row type every feature reads.

:func:`load_columns` reads every transaction of the user's portfolios in one
SQLAlchemy Core statement on the request's own connection (no ORM object, no
``Decimal`` per row): dates and amounts come as text and are parsed column-wise
(:mod:`service.ledger.fixed`); strings (types, symbols, currencies) become small
integer codes into tuples. The rows are kept in *ledger order* (the order of
:func:`service.ledger.checks.ledger_key`: date, then dividends, corporate actions,
buys, sells, then price, quantity, fees and id), which every derivation relies on.

A :class:`LedgerColumns` is immutable and tagged with the ledger version it was
read at; :mod:`service.ledger.cache` keeps one per user and version, and the
derivations (:mod:`service.ledger.derived`) are cached beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import String, bindparam, func, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncConnection

from service.db.models import Asset, Portfolio, Transaction
from service.ledger.fixed import Fixed, parse, sort_keys

__all__ = [
    "CASH_KIND_CODES",
    "KINDS",
    "KIND_CODE",
    "LedgerColumns",
    "PortfolioInfo",
    "RawRow",
    "build",
    "load_columns",
]

#: Row types by code (``LedgerColumns.kind``).
KINDS = (
    "buy", "sell", "dividend", "split", "stock_dividend", "return_of_capital", "spin_off",
    "merger", "deposit", "withdrawal", "interest", "fee",
)  # fmt: skip
KIND_CODE = {k: i for i, k in enumerate(KINDS)}
#: Codes of the rows without an asset.
CASH_KIND_CODES = np.array([KIND_CODE[k] for k in ("deposit", "withdrawal", "interest", "fee")])
#: Within a day: dividends, corporate actions, buys, sells (cash rows rank with buys);
#: the rank of each code, as :func:`service.ledger.checks.ledger_key` has it.
_RANK = np.array([2, 3, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2], np.int8)

_T = Transaction.__table__.c
_P = Portfolio.__table__.c
_A = Asset.__table__.c


def _text(column: Any) -> Any:
    """A column read as its text (no per-row Python type processing)."""
    return type_coerce(func.cast(column, String), String)


_ROWS = (
    select(
        _T.id,
        _T.portfolio_id,
        _T.asset_id,
        _T.target_asset_id,
        _text(_T.transaction_date),
        _T.transaction_type,
        _text(_T.quantity),
        _text(_T.price),
        _text(_T.fees),
        _T.lot_id,
        _text(_T.ratio),
        _text(_T.basis_allocation),
        _text(_T.cash),
        _T.currency,
    )
    .join_from(Transaction.__table__, Portfolio.__table__, _P.id == _T.portfolio_id)
    .where(_P.user_id == bindparam("user_id"))
)
_PORTFOLIOS = (
    select(_P.id, _P.lot_method, _P.base_currency, _P.cash_policy)
    .where(_P.user_id == bindparam("user_id"))
    .order_by(_P.id)
)
_ASSETS = select(_A.id, _A.symbol, _A.currency).where(_A.id.in_(bindparam("ids", expanding=True)))


@dataclass(frozen=True, slots=True)
class PortfolioInfo:
    """What the derivations need of each portfolio (columns in id order)."""

    ids: tuple[int, ...]
    lot_method: tuple[str, ...]
    base_currency: tuple[str, ...]
    cash_policy: tuple[str, ...]

    def index(self, portfolio_id: int) -> int:
        """The position of ``portfolio_id`` in :attr:`ids` (``-1``: not the user's)."""
        try:
            return self.ids.index(portfolio_id)
        except ValueError:
            return -1


@dataclass(frozen=True, slots=True)
class LedgerColumns:
    """Every transaction of one user, one entry per row, in ledger order.

    Codes index the tuples: ``portfolio`` into :attr:`portfolios`, ``symbol`` and
    ``target`` into :attr:`symbols` (``-1``: a cash row, no target), ``currency``
    into :attr:`currencies` (the currency the row's cash moves in: its own for a
    cash row, else its asset's), ``kind`` into :data:`KINDS`. ``lot`` is a sell's
    named buy (``-1``: none).
    """

    version: int
    portfolios: PortfolioInfo
    symbols: tuple[str, ...]
    symbol_currency: tuple[str, ...]  # per symbol
    asset_ids: NDArray[np.int64]  # per symbol
    currencies: tuple[str, ...]
    id: NDArray[np.int64]
    portfolio: NDArray[np.int64]
    symbol: NDArray[np.int64]
    target: NDArray[np.int64]
    date: NDArray[np.datetime64]
    kind: NDArray[np.int8]
    currency: NDArray[np.int64]
    lot: NDArray[np.int64]
    quantity: Fixed
    price: Fixed
    fees: Fixed
    ratio: Fixed
    basis_allocation: Fixed
    cash: Fixed

    def __len__(self) -> int:
        return int(self.id.shape[0])

    def rows_of(self, portfolio_id: int) -> NDArray[np.intp]:
        """Indices of one portfolio's rows (ledger order)."""
        return np.flatnonzero(self.portfolio == self.portfolios.index(portfolio_id))

    def kind_names(self, at: NDArray[np.intp] | None = None) -> NDArray[np.str_]:
        """The type names of the rows (of ``at``)."""
        codes = self.kind if at is None else self.kind[at]
        return np.array(KINDS)[codes]

    def symbol_names(self, codes: NDArray[np.int64]) -> NDArray[np.object_]:
        """Symbols of ``codes`` (``None`` for ``-1``)."""
        names = np.array([*self.symbols, None], dtype=object)
        return names[np.where(codes < 0, len(self.symbols), codes)]


def _codes(values: list[Any]) -> tuple[tuple[Any, ...], NDArray[np.int64]]:
    """Distinct sorted values and each entry's index among them."""
    uniq, inverse = np.unique(np.array(values, dtype=object), return_inverse=True)
    return tuple(uniq.tolist()), inverse.astype(np.int64).reshape(-1)


def _ids(values: tuple[Any, ...], missing: int = -1) -> NDArray[np.int64]:
    return np.array([missing if v is None else v for v in values], np.int64)


#: A row as :func:`build` takes it (the columns of the query, amounts and dates as text):
#: ``(id, portfolio_id, asset_id, target_asset_id, date, type, quantity, price, fees,
#: lot_id, ratio, basis_allocation, cash, currency)``.
RawRow = tuple[Any, ...]


async def load_columns(conn: AsyncConnection, user_id: int, version: int) -> LedgerColumns:
    """Read the user's ledger as :class:`LedgerColumns` tagged with ``version`` (the
    caller read it first, in the same transaction: the rows are never older)."""
    params = {"user_id": user_id}
    portfolios = list((await conn.execute(_PORTFOLIOS, params)).all())
    rows = list((await conn.execute(_ROWS, params)).all())
    ids = {r[2] for r in rows if r[2] is not None} | {r[3] for r in rows if r[3] is not None}
    assets = list((await conn.execute(_ASSETS, {"ids": sorted(ids)})).all()) if ids else []
    return build(version, portfolios, assets, rows)


def build(
    version: int,
    portfolios: Sequence[Any],
    assets: Sequence[Any],
    rows: Sequence[Any],
) -> LedgerColumns:
    """:class:`LedgerColumns` from the user's portfolios ``(id, lot_method, base_currency,
    cash_policy)``, the assets the rows name ``(id, symbol, currency)`` and the rows
    (:data:`RawRow`, any order)."""
    info = PortfolioInfo(
        tuple(int(r[0]) for r in portfolios),
        tuple(str(r[1]) for r in portfolios),
        tuple(str(r[2] or "USD").upper() for r in portfolios),
        tuple(str(r[3]) for r in portfolios),
    )
    cols = list(zip(*rows, strict=True)) if rows else [()] * 14
    (tid, pid, asset, target, day, kind, qty, price, fees, lot, ratio, share, cash, own) = cols
    asset_id = _ids(asset)
    target_id = _ids(target)
    found = sorted(assets, key=lambda r: str(r[1]))
    asset_ids = np.array([r[0] for r in found], np.int64)
    by_id = np.argsort(asset_ids, kind="stable")

    def symbol_code(ids: NDArray[np.int64]) -> NDArray[np.int64]:
        if not asset_ids.size:
            return np.full(ids.shape, -1, np.int64)
        at = np.clip(np.searchsorted(asset_ids[by_id], ids), 0, asset_ids.size - 1)
        return np.where(ids >= 0, by_id[at], -1).astype(np.int64)

    symbol = symbol_code(asset_id)
    target_code = symbol_code(target_id)
    symbol_currency = tuple(str(r[2] or "USD").upper() for r in found)
    pindex = np.searchsorted(np.array(info.ids, np.int64), _ids(pid))
    bases = np.array([*info.base_currency, "USD"], dtype=object)
    sym_cur = np.array([*symbol_currency, ""], dtype=object)
    own_cur = np.array([str(c).upper() if c else "" for c in own], dtype=object)
    row_cur = np.where(own_cur != "", own_cur, np.where(symbol >= 0, sym_cur[symbol], bases[pindex]))
    currencies, currency = _codes(row_cur.tolist()) if len(row_cur) else ((), np.zeros(0, np.int64))
    kind_code = np.array([KIND_CODE[k] for k in kind], np.int8) if kind else np.zeros(0, np.int8)
    dates = np.array(day, dtype="datetime64[D]") if day else np.zeros(0, "datetime64[D]")
    q, p, f = parse(qty), parse(price), parse(fees)
    ids = _ids(tid)
    order = np.lexsort(
        (ids, *sort_keys(f), *sort_keys(q), *sort_keys(p), _RANK[kind_code], dates.astype(np.int64))
    )
    return LedgerColumns(
        version=version,
        portfolios=info,
        symbols=tuple(str(r[1]) for r in found),
        symbol_currency=symbol_currency,
        asset_ids=asset_ids,
        currencies=tuple(str(c) for c in currencies),
        id=ids[order],
        portfolio=pindex.astype(np.int64)[order],
        symbol=symbol[order],
        target=target_code[order],
        date=dates[order],
        kind=kind_code[order],
        currency=currency[order],
        lot=_ids(lot)[order],
        quantity=q.take(order),
        price=p.take(order),
        fees=f.take(order),
        ratio=parse(ratio).take(order),
        basis_allocation=parse(share).take(order),
        cash=parse(cash).take(order),
    )
