"""Tax lots: validate a transaction table, relieve lots, and keep the result in a ledger."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Literal

import numpy as np
import pandas as pd

from quantcore._kernels import tax as _k
from quantcore._records import dividend_dt, lot_dt, realized_dt
from quantcore.tax.wash_sales import WASH_SALE_WINDOW_DAYS, group_codes

__all__ = ["CORPORATE_ACTIONS", "SCALE", "LedgerError", "LotLedger", "LotMethod", "as_ledger", "from_fixed", "match_lots", "to_cents"]

LotMethod = Literal["fifo", "lifo", "hifo", "specific", "average"]

#: Units per share and per dollar of the exact int64 fixed point used in records.
SCALE = _k.SCALE
_METHODS = {"fifo": _k.FIFO, "lifo": _k.LIFO, "hifo": _k.HIFO, "specific": _k.SPECIFIC, "average": _k.AVERAGE}
_KINDS = {
    "buy": _k.BUY,
    "sell": _k.SELL,
    "dividend": _k.DIVIDEND,
    "split": _k.SPLIT,
    "stock_dividend": _k.STOCK_DIVIDEND,
    "return_of_capital": _k.RETURN_OF_CAPITAL,
    "spin_off": _k.SPIN_OFF,
    "merger": _k.MERGER,
}
#: The ``type`` values of corporate actions (see :func:`match_lots`).
CORPORATE_ACTIONS = ("split", "stock_dividend", "return_of_capital", "spin_off", "merger")
_FIRST_CA = _k.SPLIT  # kinds >= this are corporate actions
_REQUIRED = ("symbol", "date", "type", "quantity", "price")
_MAX_FIXED = 9.2e10  # |value| limit so that value * 1e8 fits in int64
_MAX_DECIMAL = Decimal(int(_MAX_FIXED))
_MAX_UNITS = int(_MAX_FIXED) * SCALE  # the same limit in 1e-8 units
_ONE = Decimal(1)
_EPOCH = np.datetime64("1970-01-01", "D")


class LedgerError(ValueError):
    """A transaction table that cannot be relieved, naming the caller's ``row``.

    ``column`` names the offending column (``None`` when the row as a whole is the
    problem) and ``code`` says what is wrong: ``"invalid"`` (a malformed corporate
    action), ``"oversold"``, ``"lot_exceeded"``, ``"not_held"`` (a corporate action on
    shares not held), ``"no_fraction"`` (cash in lieu, but no fractional share) or
    ``"ratio"`` (a ratio that leaves a lot with no shares).
    """

    def __init__(self, message: str, row: int, column: str | None, code: str) -> None:
        super().__init__(message)
        self.row = row
        self.column = column
        self.code = code


def _caller_row(df: pd.DataFrame, i: int) -> int:
    rows = df.attrs.get(_ROWS)
    return int(rows[i]) if rows is not None else int(i)


def to_cents(x: int) -> Decimal:
    """Round an amount in 1e-8 dollars half-up (away from zero) to a cents ``Decimal``.

    Examples
    --------
    >>> to_cents(1_234_500_000), to_cents(-500_000), to_cents(499_999)
    (Decimal('12.35'), Decimal('-0.01'), Decimal('0.00'))
    """
    q, r = divmod(abs(int(x)), 1_000_000)
    if 2 * r >= 1_000_000:
        q += 1
    return Decimal(-q if x < 0 else q).scaleb(-2)


def from_fixed(x: int) -> Decimal:
    """The exact ``Decimal`` of a 1e-8 fixed-point integer.

    Examples
    --------
    >>> from_fixed(150_000_000)
    Decimal('1.50000000')
    """
    return Decimal(int(x)).scaleb(-8)


_ROWS = "quantcore_rows"  # attrs key of a date-sorted copy: the caller's row of each row


def _label(df: pd.DataFrame, i: int) -> str:
    """``row <i> (index <label>)``, ``i`` being the row's position in the caller's table."""
    rows = df.attrs.get(_ROWS)
    return f"row {int(rows[i]) if rows is not None else i} (index {df.index[i]!r})"


def _date_sorted(df: pd.DataFrame, day: np.ndarray) -> tuple[pd.DataFrame, np.ndarray, np.ndarray | None]:
    """The table stably sorted by date (rows of one day keep their order), its days and
    the caller's row of each sorted row (``None`` when the table was sorted already)."""
    if day.size < 2 or not (np.diff(day) < 0).any():
        return df, day, None
    order = np.argsort(day, kind="stable")
    out = df.iloc[order]
    out.attrs[_ROWS] = order
    return out, day[order], order


def _fixed_column(
    df: pd.DataFrame, name: str, *, default: float | None = None, missing_ok: np.ndarray | None = None
) -> np.ndarray:
    """A column as exact int64 1e-8 units; NaN, infinities and |x| >= 9.2e10 raise.

    With ``default`` a missing column or value reads as 0; with ``missing_ok`` (a
    boolean mask) a missing value reads as 0 on those rows only."""
    if name not in df.columns:
        if default is None:
            raise ValueError(f"transactions is missing the column {name!r}")
        return np.zeros(len(df), dtype=np.int64)
    col = df[name]
    if col.dtype == object:  # Decimal or str: convert exactly
        out = np.empty(len(df), dtype=np.int64)
        for i, v in enumerate(col.to_numpy()):
            if type(v) is Decimal:  # the common case (the service's ledger): no rounding needed
                try:
                    units = v.scaleb(8)
                    iv = int(units)
                except (ValueError, OverflowError):  # NaN, infinities: the slow path names them
                    pass
                else:
                    if units != iv:
                        iv = int(units.quantize(_ONE, rounding=ROUND_HALF_UP))
                    if -_MAX_UNITS < iv < _MAX_UNITS:
                        out[i] = iv
                        continue
            if (default is not None or (missing_ok is not None and missing_ok[i])) and _missing(v):
                out[i] = 0
                continue
            try:
                d = v if type(v) is Decimal else Decimal(str(v))
                if not d.is_finite() or abs(d) >= _MAX_DECIMAL:
                    raise InvalidOperation
            except (InvalidOperation, ValueError):
                raise ValueError(f"{_label(df, i)}: {name} must be a finite number, got {v!r}") from None
            out[i] = int(d.scaleb(8).quantize(_ONE, rounding=ROUND_HALF_UP))
        return out
    try:
        values = col.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise ValueError(f"transactions column {name!r} must be numeric") from None
    if default is not None:
        values = np.where(np.isnan(values), default, values)
    if missing_ok is not None:
        values = np.where(np.isnan(values) & missing_ok, 0.0, values)
    bad = ~np.isfinite(values) | (np.abs(values) >= _MAX_FIXED)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{_label(df, i)}: {name} must be a finite number, got {values[i]!r}")
    return np.rint(values * SCALE).astype(np.int64)


def _missing(v: object) -> bool:
    """None, NaN or NA (a cell left empty)."""
    return v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v))


def _days(df: pd.DataFrame, name: str, fallback: np.ndarray | None = None) -> np.ndarray:
    try:
        dates = pd.to_datetime(df[name])
    except (ValueError, TypeError) as exc:
        raise ValueError(f"transactions column {name!r} must hold dates: {exc}") from None
    isna = dates.isna().to_numpy()
    if fallback is None and isna.any():
        raise ValueError(f"{_label(df, int(np.argmax(isna)))}: {name} is missing")
    days = np.asarray(dates.to_numpy(dtype="datetime64[ns]").astype("datetime64[D]") - _EPOCH, dtype=np.int64)
    if fallback is not None:
        days = np.where(isna, fallback, days)
    return days


def _factorize_stripped(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a column's values and their distinct stripped strings, plus a last ``''``.

    Factorizing first and stripping only the distinct values keeps the string work
    proportional to the number of distinct values. Missing values get code -1, which
    indexes the appended ``''``; values equal once stripped share the name (not the code).
    """
    raw_codes, raw_uniques = pd.factorize(col, use_na_sentinel=True)
    names = pd.Series(raw_uniques, dtype=object).astype("string").str.strip()
    out = names.fillna("").to_numpy(dtype=object)
    return raw_codes.astype(np.int64), np.append(out, "")


@dataclass(frozen=True)
class _Encoded:
    symbols: tuple[str, ...]
    sym: np.ndarray
    day: np.ndarray
    kind: np.ndarray
    qty: np.ndarray
    price: np.ndarray
    fee: np.ndarray
    ex_day: np.ndarray
    lot_ref: np.ndarray
    lot_names: tuple[str, ...]
    groups: np.ndarray
    methods: tuple[str, ...]  # lot method of each symbol
    ratio: np.ndarray
    cash: np.ndarray
    alloc: np.ndarray
    target: np.ndarray  # target symbol code of a spin-off or merger, else -1
    links: np.ndarray  # processing group of each symbol: wash-sale groups joined by spin-offs and mergers
    table: pd.DataFrame  # the rows in the order encoded (date-sorted)
    rows: np.ndarray | None  # the caller's row of each encoded row; None: same order


def _check_method(method: object) -> None:
    """Raise unless ``method`` is a known method or a mapping of symbols to known methods."""
    if isinstance(method, Mapping):
        for symbol, m in method.items():
            if not isinstance(m, str) or m not in _METHODS:
                raise ValueError(f"method for symbol {symbol!r} must be one of {sorted(_METHODS)}, got {m!r}")
    elif not isinstance(method, str) or method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)} or a mapping of symbol to one, got {method!r}")


def _symbol_methods(symbols: tuple[str, ...], method: LotMethod | Mapping[str, LotMethod]) -> tuple[str, ...]:
    """The method of each symbol: the one method, or the mapping's ("fifo" if unlisted)."""
    if isinstance(method, str):
        return (method,) * len(symbols)
    return tuple(str(method.get(s, "fifo")) for s in symbols)


def _ledger_method(methods: tuple[str, ...], method: LotMethod | Mapping[str, LotMethod]) -> str:
    """``LotLedger.method``: the one method, else the distinct methods used, sorted, joined by '+'."""
    if isinstance(method, str):
        return method
    used = set(methods) if methods else {str(m) for m in method.values()}
    return "+".join(sorted(used)) or "fifo"


def _lot_id(raw: object) -> str:
    """A ``lot_id`` cell as a string; '' when missing (None, NaN, NA) or blank."""
    if raw is None or raw is pd.NA or (isinstance(raw, float) and np.isnan(raw)):
        return ""
    lid = str(raw)
    return lid if lid.strip() else ""


def _encode(
    transactions: pd.DataFrame,
    method: LotMethod | Mapping[str, LotMethod],
    substantially_identical: Mapping[str, str] | None,
) -> _Encoded:
    if not isinstance(transactions, pd.DataFrame):
        raise ValueError(f"transactions must be a pandas DataFrame, got {type(transactions).__name__}")
    df = transactions
    missing = [c for c in _REQUIRED if c not in df.columns]
    if missing:
        raise ValueError(f"transactions is missing the column(s) {missing}")
    n = len(df)
    df, day, rows = _date_sorted(df, _days(df, "date"))
    sym_raw, sym_names = _factorize_stripped(df["symbol"])
    bad = (sym_raw < 0) | (sym_names == "")[sym_raw]  # missing (code -1) or blank
    if bad.any():
        raise ValueError(f"{_label(df, int(np.argmax(bad)))}: symbol is empty")
    type_codes, type_names = _factorize_stripped(df["type"])
    lookup = np.array([_KINDS.get(str(t).lower(), -1) for t in type_names[:-1]] + [-1], dtype=np.int64)
    kind_i = lookup[type_codes]  # a missing type has code -1: the appended -1
    if (kind_i < 0).any():
        i = int(np.argmax(kind_i < 0))
        raise ValueError(
            f"{_label(df, i)}: type must be one of {sorted(_KINDS)}, got {df['type'].iloc[i]!r}"
        )
    is_ca = kind_i >= _FIRST_CA
    linked = (kind_i == _k.SPIN_OFF) | (kind_i == _k.MERGER)
    if "target_symbol" in df.columns and linked.any():
        tgt_raw, tgt_names = _factorize_stripped(df["target_symbol"])
        tgt_of_row = np.where(linked, tgt_raw, -1)
    else:
        tgt_raw, tgt_names = np.full(n, -1, np.int64), np.array([""], dtype=object)
        tgt_of_row = tgt_raw
    used_targets = np.unique(tgt_of_row[tgt_of_row >= 0])
    all_names = np.append(sym_names[:-1], tgt_names[used_targets])
    all_names = all_names[all_names != ""]
    _, uniques = pd.factorize(all_names, sort=True)  # distinct stripped names, sorted
    symbols = tuple(str(u) for u in uniques)
    index = {name: c for c, name in enumerate(symbols)}
    codes = np.array([index.get(str(x), -1) for x in sym_names[:-1]] + [-1], dtype=np.int64)[sym_raw]
    methods = _symbol_methods(symbols, method)
    ex_day = _days(df, "ex_date", day) if "ex_date" in df.columns else day.copy()
    qty = _fixed_column(df, "quantity", missing_ok=is_ca)
    price = _fixed_column(df, "price", missing_ok=is_ca)
    fee = _fixed_column(df, "fees", default=0.0)
    ratio = _fixed_column(df, "ratio", default=0.0)
    cash = _fixed_column(df, "cash", default=0.0)
    alloc = _fixed_column(df, "basis_allocation", default=0.0)
    for name, arr, strict in (("quantity", qty, True), ("price", price, False), ("fees", fee, False)):
        bad_v = (arr <= 0 if strict else arr < 0) & ~is_ca
        if bad_v.any():
            i = int(np.argmax(bad_v))
            need = "> 0" if strict else ">= 0"
            raise ValueError(f"{_label(df, i)}: {name} must be {need}, got {df[name].iloc[i]!r}")
    target = np.full(n, -1, dtype=np.int64)
    if is_ca.any():
        tgt_codes = np.array([index.get(str(x), -1) for x in tgt_names[:-1]] + [-1], dtype=np.int64)
        target = np.where(linked, tgt_codes[tgt_raw], -1)
        _check_corporate_actions(df, kind_i, codes, target, price, fee, ratio, cash, alloc)
    net = (qty / SCALE) * (price / SCALE) - fee / SCALE
    bad_d = (kind_i == _k.DIVIDEND) & (net < -0.5 / SCALE)
    if bad_d.any():
        i = int(np.argmax(bad_d))
        raise ValueError(f"{_label(df, i)}: fees of a dividend must not exceed quantity x price")
    lot_ref = np.full(n, -1, dtype=np.int64)  # a sell without one relieves FIFO under "specific"
    lot_names = [""] * n
    if "lot_id" in df.columns:
        ids = df["lot_id"].to_numpy(dtype=object)
        seen: dict[tuple[int, str], int] = {}
        for i in range(n):
            lid = _lot_id(ids[i])
            if not lid:
                continue
            if kind_i[i] == _k.BUY:
                key = (int(codes[i]), lid)
                if key in seen:
                    raise ValueError(f"{_label(df, i)}: lot_id {lid!r} is used by an earlier buy of {symbols[codes[i]]}")
                seen[key] = i
                lot_names[i] = lid
            elif kind_i[i] == _k.SELL and methods[codes[i]] == "specific":
                j = seen.get((int(codes[i]), lid))
                if j is None:
                    raise ValueError(f"{_label(df, i)}: unknown lot_id {lid!r} for {symbols[codes[i]]}")
                lot_ref[i] = j
    groups = group_codes(symbols, substantially_identical)
    return _Encoded(
        symbols, codes.astype(np.int64), day, kind_i, qty, price, fee, ex_day, lot_ref,
        tuple(lot_names), groups, methods, ratio, cash, alloc, target.astype(np.int64),
        _linked_groups(groups, codes, target, linked), df, rows,
    )


def _check_corporate_actions(
    df: pd.DataFrame, kind: np.ndarray, sym: np.ndarray, target: np.ndarray,
    price: np.ndarray, fee: np.ndarray, ratio: np.ndarray, cash: np.ndarray, alloc: np.ndarray,
) -> None:
    """Raise, naming the row and the column, on the first malformed corporate action."""
    for i in np.flatnonzero(kind >= _FIRST_CA):
        k = int(kind[i])
        where = _label(df, int(i))

        def bad(column: str, need: str) -> ValueError:
            value = df[column].iloc[i] if column in df.columns else None  # noqa: B023 - used at once
            return LedgerError(f"{where}: {column} {need}, got {value!r}", _caller_row(df, int(i)), column, "invalid")  # noqa: B023

        if fee[i] != 0:
            raise bad("fees", "must be 0 on a corporate action")
        if k in (_k.SPLIT, _k.STOCK_DIVIDEND):
            if ratio[i] <= 0:
                raise bad("ratio", "must be > 0 (the number of shares after per share before)")
            if cash[i] < 0:
                raise bad("cash", "(cash in lieu) must be >= 0")
        elif k == _k.RETURN_OF_CAPITAL:
            if price[i] <= 0:
                raise bad("price", "(the distribution per share) must be > 0")
        else:
            if target[i] < 0:
                raise bad("target_symbol", "is required")
            if target[i] == sym[i]:
                raise bad("target_symbol", "must differ from the symbol")
            if k == _k.SPIN_OFF:
                if ratio[i] <= 0:
                    raise bad("ratio", "must be > 0 (new shares per old share)")
                if not 0 <= alloc[i] <= SCALE:
                    raise bad("basis_allocation", "must be between 0 and 1")
            else:
                if ratio[i] < 0 or cash[i] < 0 or (ratio[i] == 0 and cash[i] == 0):
                    raise bad("ratio", "must be >= 0, with ratio or cash (per share) > 0")
                if ratio[i] > 0 and cash[i] > 0 and price[i] <= 0:
                    raise bad("price", "(the value of a new share) must be > 0 when cash and shares are paid")


def _linked_groups(groups: np.ndarray, sym: np.ndarray, target: np.ndarray, linked: np.ndarray) -> np.ndarray:
    """Processing group of each symbol: its wash-sale group, joined with the groups of the
    symbols a spin-off or merger links it to (their lots cross from one to the other)."""
    n_g = int(groups.max()) + 1 if groups.size else 0
    parent = list(range(n_g))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i in np.flatnonzero(linked):
        a, b = find(int(groups[sym[i]])), find(int(groups[target[i]]))
        if a != b:
            parent[max(a, b)] = min(a, b)
    roots = np.array([find(int(g)) for g in groups], dtype=np.int64)
    _, out = np.unique(roots, return_inverse=True)
    return out.astype(np.int64)


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

    def lot_label(self, lot: int) -> str:
        """The user's ``lot_id`` of a lot, else ``'row <n>'``."""
        name = self.lot_names[int(lot)] if 0 <= lot < len(self.lot_names) else ""
        return name or f"row {int(lot)}"

    def _dates(self, days: np.ndarray) -> pd.DatetimeIndex:
        return pd.DatetimeIndex(_EPOCH + days.astype("timedelta64[D]"))

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
        codes = np.array([i for i, s in enumerate(self.symbols) if s in symbols], np.int64)
        return dataclasses.replace(
            self,
            open_lots=self.open_lots[np.isin(self.open_lots["symbol"], codes)],
            realized=self.realized[np.isin(self.realized["symbol"], codes)],
            dividends=self.dividends[np.isin(self.dividends["symbol"], codes)],
        )

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
                "symbol": [self.symbols[s] for s in r["symbol"]],
                "lot": [self.lot_label(x) for x in r["lot"]],
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
                "symbol": [self.symbols[s] for s in o["symbol"]],
                "lot": [self.lot_label(x) for x in o["lot"]],
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
                "symbol": [self.symbols[s] for s in d["symbol"]],
                "date": self._dates(d["date"]),
                "ex_date": self._dates(d["ex_date"]),
                "amount": d["amount"] / SCALE,
                "qualified": d["qualified"] / SCALE,
                "ordinary": (d["amount"] - d["qualified"]) / SCALE,
            }
        )


def match_lots(
    transactions: pd.DataFrame,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
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
    _check_method(method)
    enc = _encode(transactions, method, substantially_identical)
    args = kernel_args(enc, wash_sales)
    n_groups = args[-6].shape[0] - 1
    # one group (e.g. one symbol) has nothing to spread over threads: skip waking the pool
    kernel = _k.match_lots_nb if n_groups > 1 else _k.match_lots_seq_nb
    realized, open_lots, divs, status = kernel(*args)
    if status[0] != 0:
        i = int(status[1])
        sym = enc.symbols[enc.sym[i]]
        table = enc.table
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
            f"{_label(table, i)}: {what} ({sym}, {table['date'].iloc[i]})", _caller_row(table, i), column, name
        )
    return _build_ledger(enc, _ledger_method(enc.methods, method), realized, open_lots, divs)


def kernel_args(enc: _Encoded, wash_sales: bool = True) -> tuple[Any, ...]:
    """The arguments of :func:`quantcore._kernels.tax.match_lots_nb` for an encoded table."""
    links = enc.links
    n_groups = int(links.max()) + 1 if links.size else 0
    order = np.argsort(links, kind="stable")
    group_start = np.searchsorted(links[order], np.arange(n_groups + 1)).astype(np.int64)
    actions = bool((enc.kind >= _FIRST_CA).any())
    empty = np.empty(0, dtype=np.int64)  # no corporate action: fields never read, not gathered
    return (
        enc.sym, enc.day, enc.kind, enc.qty, enc.price, enc.fee, enc.lot_ref,
        *((enc.ratio, enc.cash, enc.alloc, enc.target) if actions else (empty,) * 4),
        links, group_start, order.astype(np.int64), _method_codes(enc.methods), enc.groups,
        bool(wash_sales), WASH_SALE_WINDOW_DAYS,
    )


def _method_codes(methods: tuple[str, ...]) -> np.ndarray:
    """The kernel's method code of each symbol (int64, indexed by symbol code)."""
    return np.array([_METHODS[m] for m in methods], dtype=np.int64)


def _build_ledger(enc: _Encoded, method: str, realized: np.ndarray, open_lots: np.ndarray, divs: np.ndarray) -> LotLedger:
    # the kernel's int64 columns are laid out as the record dtypes: views, no copies
    rec = np.ascontiguousarray(realized).view(realized_dt)[:, 0]
    lots = np.ascontiguousarray(open_lots).view(lot_dt)[:, 0]
    is_div = enc.kind == _k.DIVIDEND
    rows = np.flatnonzero(is_div)
    dv = np.zeros(rows.size, dtype=dividend_dt)
    dv["symbol"] = enc.sym[rows]
    dv["row"] = rows
    dv["date"] = enc.day[rows]
    dv["ex_date"] = enc.ex_day[rows]
    dv["amount"] = divs[rows]
    if rows.size:
        dv["qualified"] = _k.qualified_dividends_nb(
            dv["symbol"].copy(), dv["ex_date"].copy(), dv["amount"].copy(),
            realized, open_lots, len(enc.symbols), 60, 61,
        )
    is_buy = enc.kind == _k.BUY
    buys = np.stack([enc.sym[is_buy], enc.day[is_buy], enc.qty[is_buy], np.flatnonzero(is_buy)], axis=1)
    names = enc.lot_names
    if enc.rows is not None:  # row and lot numbers back to the caller's table
        rows = enc.rows
        for arr, fields in ((rec, ("row", "lot")), (lots, ("lot",)), (dv, ("row",))):
            for f in fields:
                arr[f] = rows[arr[f]]
        buys[:, 3] = rows[buys[:, 3]]
        caller = [""] * len(names)
        for k, name in enumerate(names):
            caller[int(rows[k])] = name
        names = tuple(caller)
    return LotLedger(enc.symbols, method, lots, rec, dv, buys, enc.groups, names, enc.methods)


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
