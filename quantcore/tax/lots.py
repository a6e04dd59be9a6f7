"""Tax lots: relieve lots for a transaction table and keep the result in a ledger.

The table is validated and encoded by :mod:`quantcore.tax.encode`; the matcher is the
numba kernel :func:`quantcore._kernels.tax.match_lots_nb`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from quantcore._kernels import tax as _k
from quantcore._records import dividend_dt, lot_dt, realized_dt
from quantcore._validation import read_only
from quantcore.tax.encode import (
    CORPORATE_ACTIONS,
    FIRST_CA,
    METHODS,
    ROW_FIELDS,
    Encoded,
    LedgerError,
    LedgerSource,
    LotMethod,
    caller_row,
    check_method,
    encode,
    ledger_method,
    row_label,
)
from quantcore.tax.money import from_fixed, to_cents
from quantcore.tax.wash_sales import WASH_SALE_WINDOW_DAYS

__all__ = [
    "CORPORATE_ACTIONS",
    "SCALE",
    "LedgerError",
    "LotLedger",
    "LotMethod",
    "as_ledger",
    "from_fixed",
    "kernel_args",
    "match_grouped",
    "match_lots",
    "to_cents",
]

#: Units per share and per dollar of the exact int64 fixed point used in records.
SCALE = _k.SCALE
_EPOCH = np.datetime64("1970-01-01", "D")
_encode = encode  # the name the tests use



def _day_number(value: Any) -> int:
    try:
        ts = pd.Timestamp(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"day must be a date, got {value!r}") from None
    if pd.isna(ts):
        raise ValueError(f"day must be a date, got {value!r}")
    return int((np.datetime64(ts.date(), "D") - _EPOCH).astype(np.int64))


@dataclass(frozen=True)
class LotLedger:
    """Result of :func:`match_lots`: open lots, realized pieces and dividends, exact.

    Money and quantities in the record arrays are int64 counts of 1e-8 units
    (:data:`SCALE`); use the ``*_frame`` views for pandas with floats and dates.

    Attributes
    ----------
    symbols : tuple of str
        Symbol of each code used in the records.
    method : str
        The lot relief method; with a per-symbol mapping, the distinct methods
        of the ledger's symbols, sorted and joined by ``'+'`` (e.g. ``'fifo+hifo'``).
    open_lots : ndarray of :data:`~quantcore._records.lot_dt`
        Lots still held, in relief order per symbol.
    realized : ndarray of :data:`~quantcore._records.realized_dt`
        One row per (sell, lot) piece, in sell order.
    dividends : ndarray of :data:`~quantcore._records.dividend_dt`
        One row per dividend transaction with its qualified part.
    buys : ndarray of int64, shape (n_buys, 4)
        ``(symbol, day, quantity, row)`` of every buy (for wash-sale risk checks).
    groups : ndarray of int64
        Substantially-identical group code of each symbol.
    lot_names : tuple of str
        ``lot_id`` given on each transaction row ('' if none).
    symbol_methods : tuple of str
        Lot relief method of each symbol code (empty for a ledger assembled by
        hand, e.g. by merging ledgers).
    source : optional
        What :meth:`as_of` needs to relieve the lots again up to a date: the
        encoded transactions (kept by :func:`match_lots`; ``None`` for a ledger
        assembled by hand).
    """

    symbols: tuple[str, ...]
    method: str
    open_lots: np.ndarray
    realized: np.ndarray
    dividends: np.ndarray
    buys: np.ndarray
    groups: np.ndarray
    lot_names: tuple[str, ...]
    symbol_methods: tuple[str, ...] = ()
    source: LedgerSource | None = dataclasses.field(default=None, repr=False, compare=False)

    def lot_label(self, lot: int) -> str:
        """The user's ``lot_id`` of a lot, else ``'row <n>'``."""
        name = self.lot_names[int(lot)] if 0 <= lot < len(self.lot_names) else ""
        return name or f"row {int(lot)}"

    def lot_labels(self, lots: np.ndarray) -> np.ndarray:
        """:meth:`lot_label` of each lot number (an object array of str)."""
        lots = np.asarray(lots, dtype=np.int64)
        n = len(self.lot_names)
        if lots.size * 16 < n:  # a few lots of a large ledger: look them up, copy nothing
            return np.array(
                [(self.lot_names[k] if 0 <= k < n else "") or f"row {k}" for k in lots.tolist()] or [],
                dtype=object,
            )
        names = np.asarray(self.lot_names, dtype=object)
        inside = (lots >= 0) & (lots < names.size)
        out = np.full(lots.size, "", dtype=object)
        out[inside] = names[lots[inside]]
        unnamed = out == ""
        if unnamed.any():
            out[unnamed] = np.char.add("row ", lots[unnamed].astype(str)).astype(object)
        return out

    def symbol_names(self, codes: np.ndarray) -> np.ndarray:
        """The symbol of each code (an object array of str)."""
        return np.asarray(self.symbols, dtype=object)[np.asarray(codes, dtype=np.int64)] if len(codes) else np.empty(0, object)

    def _dates(self, days: np.ndarray) -> pd.DatetimeIndex:
        return pd.DatetimeIndex(_EPOCH + days.astype("timedelta64[D]"))

    def as_of(self, day: Any) -> LotLedger:
        """The ledger of the transactions dated on or before ``day``: the lots held at the
        end of that day, as they were then (bought on or before it, after the splits and
        other corporate actions up to it only), and what was realized up to it.

        ``day`` is a date-like or a day number (days since 1970-01-01). The rows up to
        that day are relieved again (the result of a later sale or split never leaks
        back); a wash sale waiting for replacement shares bought after ``day`` is not
        one yet. ``buys`` stays whole (harvesting's wash-sale risk sees recorded later
        purchases), and :meth:`only` applies as it did. A ledger without ``source``
        (assembled by hand) keeps the open lots bought on or before ``day``.

        Examples
        --------
        >>> t = pd.DataFrame({"symbol": ["A", "A", "A"], "date": ["2025-01-02", "2025-03-03", "2025-06-02"],
        ...                   "type": ["buy", "split", "buy"], "quantity": [10, None, 5], "price": [10, None, 3],
        ...                   "ratio": [None, 2, None]})
        >>> led = match_lots(t)
        >>> [int(led.as_of(d).open_lots["quantity"].sum()) // SCALE for d in ("2024-12-31", "2025-02-01", "2025-12-31")]
        [0, 10, 25]
        """
        d = day if isinstance(day, (int, np.integer)) and not isinstance(day, bool) else _day_number(day)
        src = self.source
        if src is None:
            return dataclasses.replace(self, open_lots=self.open_lots[self.open_lots["purchased"] <= d])
        enc = src.encoded
        k = int(np.searchsorted(enc.day, d, side="right"))
        if k == enc.day.size:
            return self
        cut = dataclasses.replace(
            enc,
            **{f: getattr(enc, f)[:k] for f in ROW_FIELDS},
            lot_names=enc.lot_names[:k],
            rows=None if enc.rows is None else enc.rows[:k],
        )
        realized, open_lots, divs, _ = _run(cut, src.wash_sales)
        out = _build_ledger(cut, self.method, realized, open_lots, divs, src)
        out = dataclasses.replace(out, buys=self.buys)
        return out if src.kept is None else out._keep(src.kept)

    def _keep(self, codes: np.ndarray) -> LotLedger:
        src = self.source
        wanted = np.zeros(len(self.symbols), np.bool_)
        wanted[codes] = True
        return dataclasses.replace(
            self,
            open_lots=_of_symbols(self.open_lots, wanted),
            realized=_of_symbols(self.realized, wanted),
            dividends=_of_symbols(self.dividends, wanted),
            source=None if src is None else dataclasses.replace(
                src, kept=codes if src.kept is None else np.intersect1d(src.kept, codes)
            ),
        )

    def only(self, symbols: Collection[str]) -> LotLedger:
        """The open lots, realized pieces and dividends of ``symbols`` only.

        For one account's figures out of a ledger matched over all of a taxpayer's
        accounts: the wash-sale adjustments stay those of the whole ledger (a loss
        washed by a purchase in another account stays washed), and ``buys`` and
        ``groups`` are kept whole, so wash-sale risk checks still see every purchase.
        Symbol and lot codes are unchanged. Unknown symbols are ignored.

        Examples
        --------
        >>> t = pd.DataFrame({"symbol": ["A", "B"], "date": ["2025-01-02"] * 2,
        ...                   "type": ["buy", "buy"], "quantity": [1, 2], "price": [10, 20]})
        >>> led = match_lots(t).only({"B"})
        >>> led.open_lots_frame()[["symbol", "quantity"]].to_dict("records")
        [{'symbol': 'B', 'quantity': 2.0}]
        """
        wanted = set(symbols)
        return self._keep(np.array([i for i, s in enumerate(self.symbols) if s in wanted], np.int64))

    def position_totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact ``(symbol, quantity, basis)`` per symbol with open lots (int64, 1e-8 units).

        A position is the sum of its open lots: the basis includes wash-sale
        adjustments, as a broker's statement shows it. Symbols in code order.

        Examples
        --------
        >>> t = pd.DataFrame({"symbol": ["A", "A", "A"], "date": ["2025-01-02", "2025-06-02", "2025-03-03"],
        ...                   "type": ["buy", "sell", "buy"], "quantity": [10, 5, 10], "price": [10, 12, 20]})
        >>> sym, qty, basis = match_lots(t).position_totals()
        >>> sym.tolist(), (qty // SCALE).tolist(), (basis // SCALE).tolist()
        ([0], [15], [250])
        """
        o = self.open_lots
        n = len(self.symbols)
        qty = np.zeros(n, np.int64)
        basis = np.zeros(n, np.int64)
        np.add.at(qty, o["symbol"], o["quantity"])
        np.add.at(basis, o["symbol"], o["basis"])
        held = np.flatnonzero(qty > 0)
        return held.astype(np.int64), qty[held], basis[held]

    def realized_frame(self) -> pd.DataFrame:
        """Realized pieces with float amounts: symbol, lot, dates, quantity, proceeds, basis,
        disallowed (wash-sale adjustment), gain (proceeds - basis + disallowed), long_term."""
        r = self.realized
        return pd.DataFrame(
            {
                "symbol": self.symbol_names(r["symbol"]),
                "lot": self.lot_labels(r["lot"]),
                "row": r["row"],
                "acquired": self._dates(r["acquired"]),
                "sold": self._dates(r["sold"]),
                "quantity": r["quantity"] / SCALE,
                "proceeds": r["proceeds"] / SCALE,
                "basis": r["basis"] / SCALE,
                "disallowed": r["disallowed"] / SCALE,
                "gain": (r["proceeds"] - r["basis"] + r["disallowed"]) / SCALE,
                "long_term": r["long_term"].astype(bool),
                "wash_sale": r["disallowed"] > 0,
            }
        )

    def open_lots_frame(self) -> pd.DataFrame:
        """Open lots with float amounts: symbol, lot, purchased, acquired (holding period),
        quantity, basis, adjustment (wash-sale loss carried in the basis), replacement."""
        o = self.open_lots
        return pd.DataFrame(
            {
                "symbol": self.symbol_names(o["symbol"]),
                "lot": self.lot_labels(o["lot"]),
                "purchased": self._dates(o["purchased"]),
                "acquired": self._dates(o["acquired"]),
                "quantity": o["quantity"] / SCALE,
                "basis": o["basis"] / SCALE,
                "adjustment": o["adjustment"] / SCALE,
                "replacement": o["replacement"].astype(bool),
            }
        )

    def dividends_frame(self) -> pd.DataFrame:
        """Dividends: symbol, date, ex_date, amount, qualified, ordinary (non-qualified)."""
        d = self.dividends
        return pd.DataFrame(
            {
                "symbol": self.symbol_names(d["symbol"]),
                "date": self._dates(d["date"]),
                "ex_date": self._dates(d["ex_date"]),
                "amount": d["amount"] / SCALE,
                "qualified": d["qualified"] / SCALE,
                "ordinary": (d["amount"] - d["qualified"]) / SCALE,
            }
        )


def _of_symbols(records: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The records of the ``wanted`` symbol codes: ``records`` itself when that is all of
    them (one account's ledger out of a few: nothing copied)."""
    mask = wanted[records["symbol"]]
    return records if mask.all() else records[mask]


def match_lots(
    transactions: pd.DataFrame,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
    lots_only: bool = False,
) -> LotLedger:
    """Relieve tax lots for every sell, apply the wash-sale rule, classify dividends.

    Parameters
    ----------
    transactions : DataFrame
        Columns ``symbol``, ``date``, ``type`` (``buy``, ``sell`` or
        ``dividend``), ``quantity`` (up to 8 decimals), ``price``, optional
        ``fees`` (0 if absent), ``lot_id`` (names a buy's lot; a sell of a
        ``'specific'`` symbol names the lot it sells) and ``ex_date`` (dividends).
        Corporate actions (``type`` in :data:`CORPORATE_ACTIONS`) act on every
        open lot of ``symbol`` and leave ``quantity`` unused: ``split`` and
        ``stock_dividend`` (``ratio``: shares after per share before; ``cash``:
        cash in lieu of the fraction, which sells it), ``return_of_capital``
        (``price`` per share off the basis; beyond zero a gain), ``spin_off``
        (``target_symbol``, ``ratio`` new per old, ``basis_allocation``) and
        ``merger`` (``target_symbol``, ``ratio``, ``cash`` per share, ``price``
        of a new share when both); IRS Publication 550 and the issuer's Form
        8937 conventions, documented in ``docs/tax.md``.
        Rows are applied in date order (a stable sort: rows of one day keep
        their table order); row numbers in the result and in errors are the
        table's.
        Numbers may be floats (read to 8 decimals) or ``Decimal``/``str``
        (read exactly).
    method : {'fifo', 'lifo', 'hifo', 'specific', 'average'} or mapping
        Lot relief: first in, last in, highest unit cost, the named lot, or
        average cost (shares still leave first in, first out for the holding
        period). A ``specific`` sell without a ``lot_id`` (missing or blank)
        relieves first in, first out: shares not adequately identified are
        deemed the earliest acquired (Treas. Reg. 1.1012-1(c)(1)). A mapping
        gives each symbol its own method (symbol -> method; unlisted symbols
        use ``'fifo'``), e.g. one per account; the wash-sale rule still sees
        every symbol of a ``substantially_identical`` group, whatever its
        method.
    wash_sales : bool
        Apply the wash-sale rule (IRC 1091).
    substantially_identical : mapping of str to str, optional
        Symbol -> group key; symbols with the same key are substantially
        identical for wash sales. Unlisted symbols form their own group.
    lots_only : bool
        Keep the open lots only (for positions): ``realized`` and ``dividends`` are
        empty, the open lots and the errors are those of the full match, and the
        realized pieces are never held (a row's live only while it is relieved), so
        the match takes memory for the lots, not the sales. :meth:`LotLedger.as_of`
        an earlier day relieves in full.

    Returns
    -------
    LotLedger

    Raises
    ------
    ValueError
        Naming the row: a missing column or value, an unknown type, a
        negative quantity, price or fee, a zero quantity, a sell of more shares than held, an unknown or
        exhausted ``lot_id``; or an unknown method (naming the symbol for a
        mapping). Nothing is partially applied.

    Notes
    -----
    A buy's basis is ``quantity x price + fees``; a dividend's amount is
    ``quantity x price - fees`` (the cash received; fees above the gross
    amount raise); a sell's proceeds are ``quantity x price - fees``, spread over the lots it relieves in
    proportion to quantity. A partial lot sale takes ``basis x sold / held``.
    All of it is exact int64 fixed point at 1e-8 with half-up rounding of each
    product and split (see :mod:`quantcore._kernels.tax`); a loss is a wash sale
    to the extent of substantially identical shares bought 30 days before or
    after (see :mod:`quantcore.tax.wash_sales`).

    Examples
    --------
    >>> import pandas as pd
    >>> tx = pd.DataFrame({
    ...     "symbol": ["X", "X", "X"],
    ...     "date": ["2025-01-02", "2025-03-03", "2025-03-20"],
    ...     "type": ["buy", "sell", "buy"],
    ...     "quantity": [100, 100, 100],
    ...     "price": [10.0, 7.5, 8.0],
    ... })
    >>> ledger = match_lots(tx)
    >>> ledger.realized_frame()[["proceeds", "basis", "disallowed", "gain"]]
       proceeds   basis  disallowed  gain
    0     750.0  1000.0       250.0   0.0
    >>> ledger.open_lots_frame()[["acquired", "quantity", "basis"]]
        acquired  quantity   basis
    0 2025-01-19     100.0  1050.0

    One method per symbol; ``Y`` is not listed, so it is first in, first out:

    >>> tx2 = pd.DataFrame({
    ...     "symbol": ["X", "Y", "X", "Y", "X", "Y"],
    ...     "date": ["2025-01-02", "2025-01-02", "2025-01-03", "2025-01-03", "2025-02-03", "2025-02-03"],
    ...     "type": ["buy", "buy", "buy", "buy", "sell", "sell"],
    ...     "quantity": [10, 10, 10, 10, 10, 10],
    ...     "price": [10.0, 10.0, 20.0, 20.0, 25.0, 25.0],
    ... })
    >>> ledger = match_lots(tx2, method={"X": "hifo"})
    >>> ledger.method, ledger.symbol_methods
    ('fifo+hifo', ('hifo', 'fifo'))
    >>> ledger.realized_frame()[["symbol", "basis", "gain"]]
      symbol  basis   gain
    0      X  200.0   50.0
    1      Y  100.0  150.0
    """
    ledger, _ = _match(transactions, method, wash_sales, substantially_identical, lots_only=lots_only)
    return ledger


def match_grouped(
    transactions: pd.DataFrame,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
) -> tuple[LotLedger, tuple[np.ndarray, ...]]:
    """For :func:`quantcore.tax.splice.grouped`: :func:`match_lots` of a date-sorted table
    without its realized pieces (``realized`` empty), and those pieces per processing
    group, in sell order, ``row`` and ``lot`` numbered among the group's rows: each group's
    pieces where the kernel wrote them (never copied nor reordered)."""
    return _match(transactions, method, wash_sales, substantially_identical, by_group=True)


def _match(
    transactions: pd.DataFrame,
    method: LotMethod | Mapping[str, LotMethod],
    wash_sales: bool,
    substantially_identical: Mapping[str, str] | None,
    *,
    lots_only: bool = False,
    by_group: bool = False,
) -> tuple[LotLedger, tuple[np.ndarray, ...]]:
    """:func:`match_lots`, and ``by_group`` (of a date-sorted table) its realized pieces per
    processing group instead of in the ledger's ``realized`` (then empty)."""
    check_method(method)
    enc = encode(transactions, method, substantially_identical)
    if by_group and enc.rows is not None:
        raise ValueError("a grouped ledger must come from a date-sorted table")
    realized, open_lots, divs, parts = _run(enc, wash_sales, pieces=not lots_only, by_group=by_group)
    source = LedgerSource(dataclasses.replace(enc, table=None), bool(wash_sales), len(enc.day), None)
    ledger = _build_ledger(
        enc, ledger_method(enc.methods, method), realized, open_lots, divs, source, dividends=not lots_only,
        parts=parts,
    )
    return ledger, tuple(_records(p, realized_dt) for p in parts)


def _run(
    enc: Encoded, wash_sales: bool, pieces: bool = True, by_group: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """The kernel over an encoded table: realized pieces in sell order (none without
    ``pieces``, or ``by_group``), open lots, dividend amounts and, ``by_group``, each
    group's pieces; a row it cannot relieve raises :class:`LedgerError` naming it."""
    args = kernel_args(enc, wash_sales, pieces, by_group)
    n_groups = args[_GROUP_START].shape[0] - 1
    # one group (e.g. one symbol) has nothing to spread over threads: skip waking the pool
    kernel = _k.match_lots_nb if n_groups > 1 else _k.match_lots_seq_nb
    realized, open_lots, divs, status, _, parts = kernel(*args)
    if status[0] == 0:
        return realized, open_lots, divs, parts
    i = int(status[1])
    sym = enc.symbols[enc.sym[i]]
    table = enc.table
    if table is None:  # a prefix of a table that was relieved whole: cannot happen
        raise RuntimeError(f"the ledger's rows up to a date cannot be relieved ({sym}, code {int(status[0])})")
    code = int(status[0])
    column: str | None = "quantity"
    if code == _k.ERR_LOT_EXCEEDED:
        what, name = f"lot_id {str(table['lot_id'].iloc[i])!r} holds fewer shares than sold", "lot_exceeded"
    elif code == _k.ERR_NOT_HELD:
        what, name = f"{table['type'].iloc[i]} of {sym}, but no {sym} shares are held on that date", "not_held"
        column = None
    elif code == _k.ERR_NO_FRACTION:
        what, name = "cash in lieu of a fractional share, but the split leaves no fractional share", "no_fraction"
        column = "cash"
    elif code == _k.ERR_RATIO:
        what, name, column = "ratio leaves a lot with no shares", "ratio", "ratio"
    else:
        what, name = f"sells more {sym} than held", "oversold"
    raise LedgerError(
        f"{row_label(table, i)}: {what} ({sym}, {table['date'].iloc[i]})", caller_row(table, i), column, name
    )


#: Where ``group_start`` is in :func:`kernel_args`.
_GROUP_START = 12


def kernel_args(
    enc: Encoded, wash_sales: bool = True, pieces: bool = True, by_group: bool = False
) -> tuple[Any, ...]:
    """The arguments of :func:`quantcore._kernels.tax.match_lots_nb` for an encoded table."""
    links = enc.links
    n_groups = int(links.max()) + 1 if links.size else 0
    order = np.argsort(links, kind="stable")
    group_start = np.searchsorted(links[order], np.arange(n_groups + 1)).astype(np.int64)
    actions = bool((enc.kind >= FIRST_CA).any())
    empty = np.empty(0, dtype=np.int64)  # no corporate action: fields never read, not gathered
    arrays = (
        enc.sym, enc.day, enc.kind, enc.qty, enc.price, enc.fee, enc.lot_ref,
        *((enc.ratio, enc.cash, enc.alloc, enc.target) if actions else (empty,) * 4),
        links, group_start, order.astype(np.int64), _method_codes(enc.methods), enc.groups,
    )
    # read-only whatever the caller's flags: one compiled kernel for fresh and shared tables
    return (
        *(read_only(a) for a in arrays), bool(wash_sales), WASH_SALE_WINDOW_DAYS, bool(by_group), bool(pieces)
    )


def _method_codes(methods: tuple[str, ...]) -> np.ndarray:
    """The kernel's method code of each symbol (int64, indexed by symbol code)."""
    return np.array([METHODS[m] for m in methods], dtype=np.int64)


def _records(block: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The kernel's rows of int64 columns as records of ``dtype`` (laid out alike): a view."""
    return np.ascontiguousarray(block).view(dtype)[:, 0]


def _qualified(dv: np.ndarray, pieces: list[np.ndarray], open_lots: np.ndarray, enc: Encoded) -> np.ndarray:
    """The qualified part of each dividend, from the holding intervals of ``pieces`` (one
    array of all the realized pieces, or one per processing group: a dividend's shares
    are its group's, so each group's dividends read its pieces and open lots alone)."""
    n_sym = len(enc.symbols)
    if len(pieces) == 1:
        return _k.qualified_dividends_nb(
            dv["symbol"].copy(), dv["ex_date"].copy(), dv["amount"].copy(), pieces[0], open_lots, n_sym, 60, 61
        )
    out = np.zeros(dv.size, np.int64)
    div_at, div_start = _by_group(enc.links[dv["symbol"]], len(pieces))
    lot_at, lot_start = _by_group(enc.links[open_lots[:, 0]], len(pieces))
    for g in np.flatnonzero(np.diff(div_start)).tolist():  # the groups with dividends
        at = div_at[div_start[g] : div_start[g + 1]]
        d = dv[at]
        out[at] = _k.qualified_dividends_nb(
            d["symbol"].copy(), d["ex_date"].copy(), d["amount"].copy(), pieces[g],
            open_lots[lot_at[lot_start[g] : lot_start[g + 1]]], n_sym, 60, 61,
        )  # fmt: skip
    return out


def _by_group(group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices sorted by group (stably) and where each group's start among them."""
    order = np.argsort(group, kind="stable")
    return order, np.searchsorted(group[order], np.arange(n_groups + 1))


def _build_ledger(
    enc: Encoded, method: str, realized: np.ndarray, open_lots: np.ndarray, divs: np.ndarray, source: LedgerSource,
    *, dividends: bool = True, parts: list[np.ndarray] | None = None,
) -> LotLedger:
    """The ledger of the kernel's outputs; ``parts``: the pieces per group (``realized`` empty)."""
    rec = _records(realized, realized_dt)
    lots = _records(open_lots, lot_dt)
    # (without the pieces, the qualified part of a dividend is unknown: no dividends)
    rows = np.flatnonzero(enc.kind == _k.DIVIDEND) if dividends else np.empty(0, np.int64)
    dv = np.zeros(rows.size, dtype=dividend_dt)
    dv["symbol"] = enc.sym[rows]
    dv["row"] = rows
    dv["date"] = enc.day[rows]
    dv["ex_date"] = enc.ex_day[rows]
    dv["amount"] = divs[rows]
    if rows.size:
        dv["qualified"] = _qualified(dv, parts or [realized], open_lots, enc)
    is_buy = enc.kind == _k.BUY
    buys = np.stack([enc.sym[is_buy], enc.day[is_buy], enc.qty[is_buy], np.flatnonzero(is_buy)], axis=1)
    names = enc.lot_names
    if enc.rows is not None:  # row and lot numbers back to the caller's table
        rows = enc.rows
        for arr, fields in ((rec, ("row", "lot")), (lots, ("lot",)), (dv, ("row",))):
            for f in fields:
                arr[f] = rows[arr[f]]
        buys[:, 3] = rows[buys[:, 3]]
        caller = np.full(source.n_rows, "", dtype=object)
        caller[rows] = np.asarray(names, dtype=object)
        names = tuple(caller.tolist())
    return LotLedger(enc.symbols, method, lots, rec, dv, buys, enc.groups, names, enc.methods, source)


def as_ledger(
    data: pd.DataFrame | LotLedger,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
) -> LotLedger:
    """A :class:`LotLedger` as is, or :func:`match_lots` of a transaction table."""
    if isinstance(data, LotLedger):
        return data
    return match_lots(data, method=method, wash_sales=wash_sales, substantially_identical=substantially_identical)
