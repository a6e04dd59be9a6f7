"""The import's common case as columns: plain rows checked and planned as arrays.

A statement whose rows are all buys, sells, dividends and cash rows (no corporate
action, no named lot) is planned here over columns: the amounts as integer counts of
``1e-8`` units, the dates as ``datetime64``. Each step answers only where the row-by-row
plan (:mod:`service.imports.plan`) would find no problem, and then answers what it
would; anywhere else it answers None and the row-by-row plan decides and words the
errors. ``tests/service/test_imports_columnar.py`` compares the two.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from service import formatting as fmt
from service.imports.plan import RANK, TEMP_ID, relieves_columns
from service.imports.rows import CASH_TYPES, ParsedColumns
from service.imports.schemas import ImportIgnoredRead, ImportRowRead
from service.ledger import linked
from service.ledger.columns import KIND_CODE, KINDS, LedgerColumns
from service.ledger.fixed import LO, SCALE, Fixed

__all__ = [
    "EntryTable",
    "Screened",
    "cash_columns",
    "entry_table",
    "ledger_rows",
    "screen",
    "shares_relieve",
]

I64 = NDArray[np.int64]
#: One unit of the ledger's amounts (``1e-8``) per ... : the units of 1.
ONE = 10**SCALE
_CASH = np.array(sorted(CASH_TYPES), dtype=object)
_EARLIEST = np.datetime64("1900-01-01", "D")
#: A ticker symbol as the import accepts it (``service.imports.services``).
SYMBOL = re.compile(r"\A[A-Z0-9][A-Z0-9.\-/^=_]{0,31}\Z")


def _decimal(u: int) -> Decimal:
    """``u`` units as the entry's quantized Decimal (``quantize`` gives the same digits)."""
    return Decimal(u).scaleb(-SCALE)


@dataclass(frozen=True, slots=True)
class EntryTable:
    """A plan's entries as columns, in file order: what the import writes.

    ``symbol`` is None on cash rows; ``currency`` is the one the row's cash moves in
    (a cash row's own, else its asset's); amounts are counts of ``1e-8`` units.
    """

    line: I64
    source: list[str]  # stored source ids
    kind: NDArray[np.object_]
    symbol: NDArray[np.object_]
    currency: NDArray[np.object_]
    cash: NDArray[np.bool_]
    date: NDArray[np.datetime64]
    quantity: I64
    price: I64
    fees: I64

    def __len__(self) -> int:
        return int(self.line.shape[0])

    def counts(self) -> dict[str, int]:
        """Entries per type, sorted by type."""
        kinds, count = np.unique(self.kind.astype(str), return_counts=True)
        return dict(zip(kinds.tolist(), count.tolist(), strict=True))

    def preview(self, limit: int) -> list[ImportRowRead]:
        """The first ``limit`` entries as a reply shows them."""
        return [
            ImportRowRead(
                line=int(self.line[i]),
                source_id=self.source[i],
                transaction_type=str(self.kind[i]),
                asset_symbol=self.symbol[i],
                currency=str(self.currency[i]),
                transaction_date=self.date[i].item(),
                quantity=fmt.quantity(_decimal(int(self.quantity[i]))),
                price=fmt.dec(_decimal(int(self.price[i]))),
                fees=fmt.dec(_decimal(int(self.fees[i]))),
            )
            for i in range(min(limit, len(self)))
        ]

    def text(self, name: str, rows: slice = slice(None)) -> list[str]:
        """An amount column (its ``rows``) as the ledger's canonical text (eight fractional
        digits), the form ``ExactDecimal`` binds on SQLite and ``NUMERIC`` reads on PostgreSQL.
        Each distinct value is formatted once (quantities and fees repeat)."""
        values, at = np.unique(getattr(self, name)[rows], return_inverse=True)
        whole, frac = np.divmod(values, ONE)
        texts = [f"{w}.{f:08d}" for w, f in zip(whole.tolist(), frac.tolist(), strict=True)]
        return list(map(texts.__getitem__, at.ravel().tolist()))

    def fixed(self, name: str) -> Fixed:
        """An amount column as :class:`~service.ledger.fixed.Fixed` (as the ledger reads it)."""
        hi, lo = np.divmod(getattr(self, name), LO)
        return Fixed(hi.astype(np.int64), lo.astype(np.int64), np.zeros(len(self), np.bool_))

    def floats(self, name: str) -> NDArray[np.float64]:
        """An amount column as float64, each value the nearest to the exact one (what
        ``float(Decimal)`` gives)."""
        u = getattr(self, name)
        out = u / float(ONE)  # exact operands below 2**53: one correct rounding
        for i in np.flatnonzero(np.abs(u) >= 1 << 53).tolist():
            out[i] = int(u[i]) / ONE  # Python's int division rounds correctly
        return out


@dataclass(frozen=True, slots=True)
class Screened:
    """The rows an import would consider (not skipped, not ignored), as columns."""

    skipped: int
    ignored: list[ImportIgnoredRead]
    rows: ParsedColumns
    source: list[str]


def screen(
    rows: ParsedColumns,
    stored: Sequence[str],
    held: Collection[str | None],
    supported: Collection[str],
) -> Screened | None:
    """Skip the rows whose stored id (``stored``) the portfolio holds (``held``), leave out
    the cash rows of 0; None unless every currency is supported."""
    keep = np.array([i for i, s in enumerate(stored) if s not in held], np.intp)
    mine = rows.take(keep)
    if not {c for c in mine.currency.tolist() if c is not None} <= set(supported):
        return None
    zero = np.isin(mine.kind, _CASH) & (mine.price == 0) & (mine.fees == 0)
    ignored = [
        ImportIgnoredRead(line=int(mine.line[i]), type=mine.kind[i], reason="moves no cash (amount 0)")
        for i in np.flatnonzero(zero).tolist()
    ]
    at = np.flatnonzero(~zero)
    return Screened(
        skipped=len(rows) - len(keep), ignored=ignored, rows=mine.take(at),
        source=[stored[keep[i]] for i in at.tolist()],
    )  # fmt: skip


def entry_table(
    screened: Screened,
    assets: Mapping[str, tuple[int, str]],
    create_assets: bool,
    base_currency: str,
    latest: dt.date,
) -> tuple[EntryTable, dict[str, str], dict[str, str]] | None:
    """The entries of the screened rows (``LedgerEntry.plain`` over columns) with the new
    assets and each symbol's currency, or None when any row would be an error (an
    unknown asset, a currency other than its asset's, an amount or date a typed
    transaction refuses)."""
    rows = screened.rows
    n = len(rows)
    kind, symbol, date = rows.kind, rows.symbol, rows.date
    stated = rows.currency.tolist()
    cash = np.isin(kind, _CASH)
    q, p, f = rows.quantity, rows.price, rows.fees
    if not ((date >= _EARLIEST) & (date <= np.datetime64(latest, "D"))).all():
        return None
    if (q < 0).any() or (p < 0).any() or (f < 0).any():
        return None
    # cash rows: no asset, an amount above 0; a fee row has no fees, a deposit's or
    # interest's fees are at most its amount
    if any(s is not None for s in symbol[cash].tolist()) or (p[cash] == 0).any():
        return None
    if (f[kind == "fee"] != 0).any():
        return None
    inflow = (kind == "deposit") | (kind == "interest")
    if (f[inflow] > p[inflow]).any():
        return None
    # buys, sells, dividends: a symbol, a quantity above 0, a price above 0 (a dividend's
    # may be 0), a sale's or dividend's fees at most quantity x price
    sec = ~cash
    names = set(symbol[sec].tolist())
    if None in names or not all(SYMBOL.match(s) for s in names):
        return None
    if (q[sec] == 0).any() or ((p == 0) & sec & (kind != "dividend")).any():
        return None
    if not _fees_covered(kind, q, p, f, sec):
        return None
    # each symbol's asset and currency, in file order (a new asset takes its first row's)
    new_assets: dict[str, str] = {}
    currency_of: dict[str, str] = {}
    currency = np.empty(n, dtype=object)
    symbols = symbol.tolist()
    for i in np.flatnonzero(sec).tolist():
        sym = symbols[i]
        if sym not in currency_of:
            if sym in assets:
                currency_of[sym] = assets[sym][1]
            elif create_assets:
                currency_of[sym] = new_assets[sym] = stated[i] or base_currency
            else:
                return None
        own = currency_of[sym]
        if stated[i] is not None and stated[i] != own:
            return None
        currency[i] = own
    for i in np.flatnonzero(cash).tolist():
        currency[i] = stated[i] or base_currency
    quantity = np.where(cash, ONE, q)
    table = EntryTable(
        line=rows.line, source=screened.source, kind=kind,
        symbol=np.where(cash, np.array(None), symbol), currency=currency, cash=cash, date=date,
        quantity=quantity.astype(np.int64), price=p, fees=f,
    )  # fmt: skip
    return table, new_assets, currency_of


def _fees_covered(
    kind: NDArray[np.object_], q: I64, p: I64, f: I64, sec: NDArray[np.bool_]
) -> bool:
    """Whether no sale's or dividend's fees exceed quantity x price (exactly: units of
    ``q x p`` are ``1e-16``, so ``f x 1e8 <= q x p``); a float screen, then Python
    integers for the rows near the bound."""
    check = np.flatnonzero(sec & (kind != "buy") & (f > 0))
    if not check.size:
        return True
    gross = q[check].astype(np.float64) * p[check].astype(np.float64)
    near = f[check].astype(np.float64) * ONE >= gross * (1 - 1e-9)
    for i in check[near].tolist():
        if int(f[i]) * ONE > int(q[i]) * int(p[i]):
            return False
    return True


def ledger_rows(
    cols: LedgerColumns, portfolio_id: int, symbols: Collection[str]
) -> NDArray[np.intp] | None:
    """Indices of the portfolio's rows of ``symbols`` in ``cols``, or None when they are
    not all buys, sells and dividends naming no lot, or a spin-off or merger links their
    assets to others (the row-by-row plan checks those)."""
    pindex = cols.portfolios.index(portfolio_id)
    if pindex < 0:
        return None
    code = {s: i for i, s in enumerate(cols.symbols)}
    codes = [code[s] for s in symbols if s in code]
    ids = cols.asset_ids[codes].tolist()
    if linked.linked_assets(cols, ids) != frozenset(ids):
        return None
    at = np.flatnonzero((cols.portfolio == pindex) & np.isin(cols.symbol, codes))
    trades = np.array([KIND_CODE[k] for k in ("buy", "sell", "dividend")], np.int8)
    if not np.isin(cols.kind[at], trades).all() or (cols.lot[at] >= 0).any():
        return None
    return at


def shares_relieve(table: EntryTable, cols: LedgerColumns, at: NDArray[np.intp]) -> bool:
    """Whether every symbol's ledger (the rows ``at`` of ``cols`` and the table's) relieves,
    decided over columns (:func:`service.ledger.checks.first_shortfall` on no row), and no
    dividend of the table needs fitting to fewer than one share held (every share count
    whole); False: the row-by-row plan decides."""
    sec = ~table.cash
    old_q = cols.quantity.take(at)
    if (np.abs(old_q.hi) > 920).any():  # beyond int64 units
        return False
    old_units = old_q.hi * LO + old_q.lo
    old_kind = np.array(KINDS, dtype=object)[cols.kind[at]]
    kind = np.concatenate([old_kind, table.kind[sec]])
    quantity = np.concatenate([old_units, table.quantity[sec]])
    total = kind.size
    if not total:
        return True
    if ((table.kind == "dividend") & (table.quantity == ONE)).any():
        moves = kind != "dividend"  # buys and sells: whole shares, else fitting may apply
        if (quantity[moves] % ONE != 0).any():
            return False
    symbols = np.concatenate(
        [np.array(cols.symbols, dtype=object)[cols.symbol[at]], table.symbol[sec]]
    )
    code = pd.factorize(symbols)[0].astype(np.int64)
    day = np.concatenate([cols.date[at], table.date[sec]]).astype(np.int64)
    buy, sell, dividend = kind == "buy", kind == "sell", kind == "dividend"
    rank = np.where(dividend, RANK["dividend"], np.where(buy, RANK["buy"], RANK["sell"]))
    if int(np.abs(quantity).max()) * total >= 1 << 62:  # beyond int64 sums: the walk decides
        return False
    signed = np.where(buy, quantity, np.where(sell, -quantity, 0))
    need = np.where(dividend, quantity, 0)
    return relieves_columns(code, day, rank.astype(np.int64), signed, need)


def cash_columns(table: EntryTable, portfolio_id: int) -> dict[str, NDArray[Any]]:
    """The table's rows as arrays by the names of :data:`service.ledger.cash.CashRow`'s
    fields (ids ``TEMP_ID`` on): the strict cash check's input without a tuple per row."""
    n = len(table)
    none = np.full(n, np.nan)
    return {
        "portfolio": np.full(n, portfolio_id, np.int64),
        "id": np.arange(TEMP_ID, TEMP_ID + n, dtype=np.int64),
        "date": table.date,
        "type": table.kind,
        "symbol": table.symbol,
        "currency": table.currency,
        "quantity": table.floats("quantity"),
        "price": table.floats("price"),
        "fees": table.floats("fees"),
        "ratio": none,
        "cash": none,
        "target_symbol": np.full(n, None, dtype=object),
    }
