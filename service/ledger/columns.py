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

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sqlalchemy import (
    BigInteger,
    Date,
    Select,
    String,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal,
    select,
    type_coerce,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from service.db.models import Asset, Portfolio, Transaction
from service.ledger.fixed import NULL_UNITS, WIDE_UNITS, Fixed, from_units, parse, sort_keys

__all__ = [
    "CASH_KIND_CODES",
    "KINDS",
    "KIND_CODE",
    "LedgerColumns",
    "PortfolioInfo",
    "RawRow",
    "appended",
    "build",
    "load_columns",
    "patched",
    "subset",
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


_AMOUNTS = ("quantity", "price", "fees", "ratio", "basis_allocation", "cash")
#: An amount below this comes as an integer count of 1e-8 units (int64), the rest as text.
_SMALL = 10**9


def _amount(column: Any, dialect: str) -> tuple[Any, Any]:
    """``(units, text)`` of an amount column: the integer count of 1e-8 units when the
    value is below :data:`_SMALL`, else :data:`~service.ledger.fixed.NULL_UNITS` (NULL) or
    :data:`~service.ledger.fixed.WIDE_UNITS` (read the text); the text only for a wide
    value. Every cell of ``units`` is an integer, so a column becomes an array in one pass."""
    if dialect == "sqlite":  # canonical text: eight decimals after the point
        raw = type_coerce(column, String)
        small = and_(func.length(raw) <= 18, func.substr(raw, -9, 1) == ".")
        units = case(
            (small, cast(func.replace(raw, ".", ""), BigInteger)),
            (column.is_(None), NULL_UNITS),
            else_=WIDE_UNITS,
        )
        return type_coerce(units, BigInteger), type_coerce(case((small, None), else_=raw), String)
    small = func.abs(column) < _SMALL
    units = case(
        (small, cast(column * 100_000_000, BigInteger)), (column.is_(None), NULL_UNITS), else_=WIDE_UNITS
    )
    text = case((small, None), else_=cast(column, String))
    return type_coerce(units, BigInteger), type_coerce(text, String)


def _day(column: Any, dialect: str) -> Any:
    """Days since 1970-01-01 of a date column, computed by the database."""
    if dialect == "sqlite":
        return cast(func.julianday(column) - 2440587.5, BigInteger)
    return type_coerce(column - cast(literal("1970-01-01"), Date), BigInteger)


_QUERIES: dict[str, Select[Any]] = {}


def _rows_query(dialect: str) -> Select[Any]:
    """The user's rows: ids and codes as integers (``-1``: none), the date as days since
    the epoch, each amount as ``(units, text)`` (:func:`_amount`), the row's own currency."""
    query = _QUERIES.get(dialect)
    if query is None:
        amounts = [part for name in _AMOUNTS for part in _amount(_T[name], dialect)]
        query = _QUERIES[dialect] = (
            select(
                _T.id,
                _T.portfolio_id,
                func.coalesce(_T.asset_id, -1),
                func.coalesce(_T.target_asset_id, -1),
                _day(_T.transaction_date, dialect),
                case(KIND_CODE, value=_T.transaction_type, else_=-1),
                func.coalesce(_T.lot_id, -1),
                func.coalesce(_T.currency, ""),
                *amounts,
            )
            .join_from(Transaction.__table__, Portfolio.__table__, _P.id == _T.portfolio_id)
            .where(_P.user_id == bindparam("user_id"))
        )
    return query


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


#: A row as :func:`build` takes it (amounts and dates as text, as entered):
#: ``(id, portfolio_id, asset_id, target_asset_id, date, type, quantity, price, fees,
#: lot_id, ratio, basis_allocation, cash, currency)``.
RawRow = tuple[Any, ...]


async def load_columns(conn: AsyncConnection, user_id: int, version: int) -> LedgerColumns:
    """Read the user's ledger as :class:`LedgerColumns` tagged with ``version`` (the
    caller read it first, in the same transaction: the rows are never older)."""
    params = {"user_id": user_id}
    portfolios = list((await conn.execute(_PORTFOLIOS, params)).all())
    # streamed in parts, each turned into arrays at once: a Python object per cell of a
    # whole ledger (about 1 kB a row) is never alive at one time
    result = await conn.stream(_rows_query(conn.dialect.name), params)
    try:
        parts = [_part(rows) async for rows in result.partitions(_PART_ROWS)] or [_part([])]
    finally:
        await result.close()
    ints = [np.concatenate([p[0][k] for p in parts]) for k in range(7)]
    own = np.concatenate([p[1] for p in parts])
    amounts = {name: _concat([p[2][name] for p in parts]) for name in _AMOUNTS}
    del parts
    tid, pid, asset, target, day, kind, lot = ints
    used = np.unique(np.concatenate([asset, target]))
    used = used[used >= 0].tolist()
    assets = list((await conn.execute(_ASSETS, {"ids": used})).all()) if used else []
    return _assemble(
        version, portfolios, assets, tid, pid, asset, target,
        day.astype("datetime64[D]"), kind.astype(np.int8), lot, own, amounts,
    )  # fmt: skip


#: Rows read and converted at a time by :func:`load_columns`.
_PART_ROWS = 50_000


def _part(
    rows: Sequence[Any],
) -> tuple[list[NDArray[np.int64]], NDArray[np.object_], dict[str, Fixed]]:
    """One part of the rows query as arrays: the integer columns, the own currency, the amounts.

    Each column is taken from the rows by one C-level pass (``map(itemgetter(k), rows)``):
    a transposition of the rows (``zip(*rows)``) built a tuple per column first, and that
    cost as much as the conversion. A wide amount's text is looked up at its rows only."""
    n = len(rows)

    def ints(k: int) -> NDArray[np.int64]:
        return np.fromiter(map(itemgetter(k), rows), np.int64, n)

    def texts(k: int) -> Callable[[list[int]], list[str]]:
        return lambda at: [rows[j][k] for j in at]

    own = np.empty(n, dtype=object)
    own[:] = list(map(itemgetter(7), rows))
    amounts = {
        name: from_units(ints(8 + 2 * i), texts(9 + 2 * i)) for i, name in enumerate(_AMOUNTS)
    }
    return [ints(k) for k in range(7)], own, amounts


def build(
    version: int,
    portfolios: Sequence[Any],
    assets: Sequence[Any],
    rows: Sequence[Any],
) -> LedgerColumns:
    """:class:`LedgerColumns` from the user's portfolios ``(id, lot_method, base_currency,
    cash_policy)``, the assets the rows name ``(id, symbol, currency)`` and the rows
    (:data:`RawRow`, any order)."""
    cols = list(zip(*rows, strict=True)) if rows else [()] * 14
    (tid, pid, asset, target, day, kind, qty, price, fees, lot, ratio, share, cash, own) = cols
    return _assemble(
        version, portfolios, assets, _ids(tid), _ids(pid), _ids(asset), _ids(target),
        np.array(day, dtype="datetime64[D]") if day else np.zeros(0, "datetime64[D]"),
        np.array([KIND_CODE[k] for k in kind], np.int8), _ids(lot),
        np.array([c or "" for c in own], dtype=object),
        {"quantity": parse(qty), "price": parse(price), "fees": parse(fees), "ratio": parse(ratio),
         "basis_allocation": parse(share), "cash": parse(cash)},
    )  # fmt: skip


def _assemble(
    version: int,
    portfolios: Sequence[Any],
    assets: Sequence[Any],
    ids: NDArray[np.int64],
    pid: NDArray[np.int64],
    asset_id: NDArray[np.int64],
    target_id: NDArray[np.int64],
    dates: NDArray[np.datetime64],
    kind_code: NDArray[np.int8],
    lot: NDArray[np.int64],
    own: NDArray[np.object_],
    amounts: dict[str, Fixed],
) -> LedgerColumns:
    info = PortfolioInfo(
        tuple(int(r[0]) for r in portfolios),
        tuple(str(r[1]) for r in portfolios),
        tuple(str(r[2] or "USD").upper() for r in portfolios),
        tuple(str(r[3]) for r in portfolios),
    )
    found = sorted(assets, key=lambda r: str(r[1]))
    asset_ids = np.array([r[0] for r in found], np.int64)
    by_id = np.argsort(asset_ids, kind="stable")

    def symbol_code(of: NDArray[np.int64]) -> NDArray[np.int64]:
        if not asset_ids.size:
            return np.full(of.shape, -1, np.int64)
        at = np.clip(np.searchsorted(asset_ids[by_id], of), 0, asset_ids.size - 1)
        return np.where(of >= 0, by_id[at], -1).astype(np.int64)

    symbol = symbol_code(asset_id)
    target_code = symbol_code(target_id)
    symbol_currency = tuple(str(r[2] or "USD").upper() for r in found)
    pindex = np.searchsorted(np.array(info.ids, np.int64), pid)
    bases = np.array([*info.base_currency, "USD"], dtype=object)
    sym_cur = np.array([*symbol_currency, ""], dtype=object)
    own_at, own_codes = pd.factorize(own, sort=True) if len(own) else (np.zeros(0, np.int64), np.zeros(0, object))
    own_cur = np.array([str(c).upper() for c in own_codes], dtype=object)[own_at] if len(own) else own
    row_cur = np.where(own_cur != "", own_cur, np.where(symbol >= 0, sym_cur[symbol], bases[pindex]))
    currency, codes = pd.factorize(row_cur, sort=True) if len(row_cur) else (np.zeros(0, np.int64), ())
    q, p, f = amounts["quantity"], amounts["price"], amounts["fees"]
    order = np.lexsort(
        (ids, *sort_keys(f), *sort_keys(q), *sort_keys(p), _RANK[kind_code], dates.astype(np.int64))
    )
    return LedgerColumns(
        version=version,
        portfolios=info,
        symbols=tuple(str(r[1]) for r in found),
        symbol_currency=symbol_currency,
        asset_ids=asset_ids,
        currencies=tuple(str(c) for c in codes),
        id=ids[order],
        portfolio=pindex.astype(np.int64)[order],
        symbol=symbol[order],
        target=target_code[order],
        date=dates[order],
        kind=kind_code[order],
        currency=np.asarray(currency, np.int64)[order],
        lot=lot[order],
        quantity=q.take(order),
        price=p.take(order),
        fees=f.take(order),
        ratio=amounts["ratio"].take(order),
        basis_allocation=amounts["basis_allocation"].take(order),
        cash=amounts["cash"].take(order),
    )


def _concat(parts: Sequence[Fixed]) -> Fixed:
    return Fixed(
        np.concatenate([p.hi for p in parts]),
        np.concatenate([p.lo for p in parts]),
        np.concatenate([p.null for p in parts]),
    )


def patched(
    cols: LedgerColumns,
    version: int,
    *,
    drop: int | None = None,
    add: RawRow | None = None,
    assets: Sequence[Any] = (),
) -> LedgerColumns:
    """``cols`` with row ``drop`` removed and ``add`` (a :data:`RawRow`) added, tagged
    ``version``: the ledger after one write, without reading it again. ``assets``:
    ``(id, symbol, currency)`` of the assets ``add`` names.

    When every code of ``add`` is known already (its portfolio, assets and currency) the
    row goes in at its place in ledger order (a vectorized comparison of the order's
    keys, then one insert per column); otherwise the columns are assembled again.
    """
    fast = _patched_in_place(cols, version, drop, add)
    if fast is not None:
        return fast
    keep = np.ones(len(cols), np.bool_) if drop is None else cols.id != drop
    raw, amounts = _parts(cols, np.flatnonzero(keep))
    if add is not None:
        tid, pid, asset, target, day, kind, qty, price, fees, lot, ratio, share, cash, own = add
        none = -1
        for key, value, dtype in (
            ("id", tid, np.int64), ("portfolio", pid, np.int64),
            ("asset", none if asset is None else asset, np.int64),
            ("target", none if target is None else target, np.int64),
            ("date", day, "datetime64[D]"), ("kind", KIND_CODE[kind], np.int8),
            ("lot", none if lot is None else lot, np.int64), ("own", own or "", object),
        ):  # fmt: skip
            raw[key].append(np.array([value], dtype=dtype))
        for name, text in zip(_AMOUNTS, (qty, price, fees, ratio, share, cash), strict=True):
            amounts[name].append(parse([text]))
    return _reassembled(cols, version, raw, amounts, assets)


def _parts(
    cols: LedgerColumns, at: NDArray[np.intp]
) -> tuple[dict[str, list[Any]], dict[str, list[Fixed]]]:
    """The rows ``at`` of ``cols`` as :func:`_assemble` takes them (ids, not codes), each
    column a list of parts that more rows can be appended to."""
    ids = np.array(cols.portfolios.ids, np.int64)
    known = np.append(cols.asset_ids, -1)
    raw: dict[str, list[Any]] = {
        "id": [cols.id[at]],
        "portfolio": [ids[cols.portfolio[at]] if ids.size else np.zeros(at.size, np.int64)],
        "asset": [known[cols.symbol[at]]],
        "target": [known[cols.target[at]]],
        "date": [cols.date[at]],
        "kind": [cols.kind[at]],
        "lot": [cols.lot[at]],
        "own": [np.array([*cols.currencies, ""], dtype=object)[cols.currency[at]]],
    }
    amounts = {name: [getattr(cols, name).take(at)] for name in _AMOUNTS}
    return raw, amounts


def _reassembled(
    cols: LedgerColumns,
    version: int,
    raw: dict[str, list[Any]],
    amounts: dict[str, list[Fixed]],
    assets: Sequence[Any],
) -> LedgerColumns:
    """:func:`_assemble` of the parts (:func:`_parts`), with ``cols``' portfolios and its
    assets and ``assets`` (``(id, symbol, currency)``)."""
    known_assets = {
        int(a): (int(a), s, c)
        for a, s, c in zip(cols.asset_ids.tolist(), cols.symbols, cols.symbol_currency, strict=True)
    }
    for a in assets:
        known_assets[int(a[0])] = (int(a[0]), str(a[1]), str(a[2] or "USD"))
    info = cols.portfolios
    return _assemble(
        version,
        list(zip(info.ids, info.lot_method, info.base_currency, info.cash_policy, strict=True)),
        list(known_assets.values()),
        np.concatenate(raw["id"]).astype(np.int64),
        np.concatenate(raw["portfolio"]).astype(np.int64),
        np.concatenate(raw["asset"]).astype(np.int64),
        np.concatenate(raw["target"]).astype(np.int64),
        np.concatenate(raw["date"]).astype("datetime64[D]"),
        np.concatenate(raw["kind"]).astype(np.int8),
        np.concatenate(raw["lot"]).astype(np.int64),
        np.concatenate(raw["own"]).astype(object),
        {name: _concat(parts) for name, parts in amounts.items()},
    )


def appended(
    cols: LedgerColumns,
    version: int,
    rows: dict[str, Any],
    amounts: dict[str, Fixed],
    assets: Sequence[Any] = (),
) -> LedgerColumns:
    """``cols`` with many rows added (a bulk insert), tagged ``version``: the ledger after
    the write, without reading it again. ``rows``: the columns ``id``, ``portfolio``,
    ``asset`` and ``target`` (ids, ``-1``: none), ``date`` (``datetime64[D]``), ``kind``
    (codes of :data:`KINDS`), ``lot`` (``-1``: none) and ``own`` (a cash row's currency,
    else ``""``); ``amounts``: each amount of the rows (null where none). ``assets``:
    ``(id, symbol, currency)`` of the assets the rows name. Equal to
    :func:`load_columns` after the insert (``tests/service/test_imports_columnar.py``)."""
    raw, parts = _parts(cols, np.arange(len(cols)))
    for key, values in rows.items():
        raw[key].append(np.asarray(values))
    for name in _AMOUNTS:
        parts[name].append(amounts[name])
    return _reassembled(cols, version, raw, parts, assets)


def _patched_in_place(
    cols: LedgerColumns, version: int, drop: int | None, add: RawRow | None
) -> LedgerColumns | None:
    """:func:`patched` without re-coding anything (``None`` when ``add`` needs a new code)."""
    arrays = {
        "id": cols.id, "portfolio": cols.portfolio, "symbol": cols.symbol, "target": cols.target,
        "date": cols.date, "kind": cols.kind, "currency": cols.currency, "lot": cols.lot,
    }  # fmt: skip
    amounts = {name: getattr(cols, name) for name in _AMOUNTS}
    if drop is not None:
        gone = np.flatnonzero(cols.id == drop)
        arrays = {k: np.delete(v, gone) for k, v in arrays.items()}
        amounts = {k: Fixed(np.delete(v.hi, gone), np.delete(v.lo, gone), np.delete(v.null, gone)) for k, v in amounts.items()}
    if add is not None:
        tid, pid, asset, target, day, kind, qty, price, fees, lot, ratio, share, cash, own = add
        known = {int(a): i for i, a in enumerate(cols.asset_ids.tolist())}
        pindex = cols.portfolios.index(int(pid))
        symbol = -1 if asset is None else known.get(int(asset), -2)
        target_code = -1 if target is None else known.get(int(target), -2)
        if pindex < 0 or symbol == -2 or target_code == -2:
            return None
        code = (own or "").upper() or (
            cols.symbol_currency[symbol] if symbol >= 0 else cols.portfolios.base_currency[pindex]
        )
        if code not in cols.currencies:
            return None
        day64 = np.datetime64(day, "D")
        row: dict[str, Any] = {
            "id": int(tid), "portfolio": pindex, "symbol": symbol, "target": target_code,
            "date": day64, "kind": KIND_CODE[kind],
            "currency": cols.currencies.index(code), "lot": -1 if lot is None else int(lot),
        }  # fmt: skip
        values = {
            name: parse([text])
            for name, text in zip(_AMOUNTS, (qty, price, fees, ratio, share, cash), strict=True)
        }
        new_keys = [
            int(day64.astype(np.int64)), int(_RANK[KIND_CODE[kind]]),
            *(int(x[0]) for name in ("price", "quantity", "fees") for x in (values[name].hi, values[name].lo)),
            row["id"],
        ]  # fmt: skip
        old_keys = [
            arrays["date"].astype(np.int64), _RANK[arrays["kind"]],
            *(x for name in ("price", "quantity", "fees") for x in (amounts[name].hi, amounts[name].lo)),
            arrays["id"],
        ]  # fmt: skip
        less = np.zeros(len(arrays["id"]), np.bool_)
        equal = np.ones(len(arrays["id"]), np.bool_)
        for column, value in zip(old_keys, new_keys, strict=True):
            less |= equal & (column < value)
            equal &= column == value
        at = int(less.sum())  # the rows before it in ledger order (the columns are sorted)
        arrays = {k: np.insert(v, at, np.array([row[k]], dtype=v.dtype)) for k, v in arrays.items()}
        amounts = {
            k: Fixed(np.insert(v.hi, at, values[k].hi), np.insert(v.lo, at, values[k].lo),
                     np.insert(v.null, at, values[k].null))
            for k, v in amounts.items()
        }  # fmt: skip
    return dataclasses.replace(
        cols,
        version=version,
        id=arrays["id"].astype(np.int64, copy=False),
        portfolio=arrays["portfolio"].astype(np.int64, copy=False),
        symbol=arrays["symbol"].astype(np.int64, copy=False),
        target=arrays["target"].astype(np.int64, copy=False),
        date=arrays["date"].astype("datetime64[D]", copy=False),
        kind=arrays["kind"].astype(np.int8, copy=False),
        currency=arrays["currency"].astype(np.int64, copy=False),
        lot=arrays["lot"].astype(np.int64, copy=False),
        **amounts,
    )


def subset(cols: LedgerColumns, at: NDArray[np.intp]) -> LedgerColumns:
    """The rows ``at`` (ascending: ledger order kept) of ``cols``, every code unchanged."""
    return dataclasses.replace(
        cols,
        id=cols.id[at], portfolio=cols.portfolio[at], symbol=cols.symbol[at],
        target=cols.target[at], date=cols.date[at], kind=cols.kind[at],
        currency=cols.currency[at], lot=cols.lot[at],
        **{name: getattr(cols, name).take(at) for name in _AMOUNTS},
    )  # fmt: skip
