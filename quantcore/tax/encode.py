"""Validate and encode a transaction table for the lot matcher: columns to exact int64.

Every column becomes an int64 array in one vectorized pass: dates to day numbers,
symbols and types to codes (only their distinct values are read in Python), numbers
to 1e-8 units (floats by NumPy; ``Decimal`` objects and Arrow decimals exactly, by
Arrow's decimal128), ``lot_id`` to the row of the buy it names. An invalid value raises
a ``ValueError`` naming the caller's row and the column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from quantcore._kernels import tax as _k
from quantcore.tax.wash_sales import group_codes

__all__ = [
    "CORPORATE_ACTIONS",
    "FIRST_CA",
    "METHODS",
    "ROW_FIELDS",
    "Encoded",
    "LedgerError",
    "LedgerSource",
    "LotMethod",
    "caller_row",
    "check_method",
    "encode",
    "ledger_method",
    "row_label",
]

LotMethod = Literal["fifo", "lifo", "hifo", "specific", "average"]

SCALE = _k.SCALE
METHODS = {"fifo": _k.FIFO, "lifo": _k.LIFO, "hifo": _k.HIFO, "specific": _k.SPECIFIC, "average": _k.AVERAGE}
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
#: The ``type`` values of corporate actions (see :func:`quantcore.tax.match_lots`).
CORPORATE_ACTIONS = ("split", "stock_dividend", "return_of_capital", "spin_off", "merger")
FIRST_CA = _k.SPLIT  # kinds >= this are corporate actions
_REQUIRED = ("symbol", "date", "type", "quantity", "price")
_MAX_FIXED = 9.2e10  # |value| limit so that value * 1e8 fits in int64
_MAX_DECIMAL = Decimal(int(_MAX_FIXED))
_MAX_UNITS = int(_MAX_FIXED) * SCALE  # the same limit in 1e-8 units
_ONE = Decimal(1)
_EPOCH = np.datetime64("1970-01-01", "D")
_DECIMAL = pa.decimal128(38, 8)  # the ledger's NUMERIC(38, 8)


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


def caller_row(df: pd.DataFrame, i: int) -> int:
    rows = df.attrs.get(_ROWS)
    return int(rows[i]) if rows is not None else int(i)



_ROWS = "quantcore_rows"  # attrs key of a date-sorted copy: the caller's row of each row


def row_label(df: pd.DataFrame, i: int) -> str:
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
    arrow = _arrow_units(col)
    if arrow is not None:  # Decimal objects or Arrow decimals, every value exact at 1e-8
        units, missing = arrow
        if not missing.any():
            return units
        allowed = missing if default is not None else missing & missing_ok if missing_ok is not None else None
        if allowed is not None and (allowed == missing).all():
            return np.where(missing, 0, units)
    if col.dtype == object or (isinstance(col.dtype, pd.ArrowDtype) and pa.types.is_decimal(col.dtype.pyarrow_dtype)):
        # other objects, or decimals beyond the fast path: one by one
        return _fixed_objects(df, name, col, default, missing_ok)
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
        raise ValueError(f"{row_label(df, i)}: {name} must be a finite number, got {values[i]!r}")
    scaled: np.ndarray = np.rint(values * SCALE).astype(np.int64)
    return scaled


def _arrow_units(col: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """``(units, missing)`` of a column of ``Decimal`` objects or Arrow decimals, converted
    by Arrow's decimal128 in one pass; ``None`` when that cannot be exact (another type,
    more than 8 decimals, a NaN or infinity, |x| >= 9.2e10): the caller then goes value by
    value and names the row."""
    dtype = col.dtype
    try:
        if isinstance(dtype, pd.ArrowDtype) and pa.types.is_decimal(dtype.pyarrow_dtype):
            arr = pa.array(col.array).cast(_DECIMAL)  # a safe cast: fails if digits are lost
        elif pd.api.types.is_object_dtype(dtype) and len(col) and pd.api.types.infer_dtype(col, skipna=True) == "decimal":
            # Decimal objects: their text, parsed by Arrow (faster than Arrow's own
            # Decimal conversion, and no Python code per value)
            text = list(map(str, col.to_numpy()))
            empty = col.isna().to_numpy()
            for i in np.flatnonzero(empty).tolist():  # the few missing cells (corporate actions)
                text[i] = "0"
            arr = pa.array(text, type=pa.string(), mask=empty).cast(_DECIMAL)
        else:
            return None
    except (pa.ArrowException, TypeError, ValueError, ArithmeticError):
        return None
    n = len(arr)
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=2 * (arr.offset + n))
    words = words[2 * arr.offset :].reshape(n, 2)  # little-endian 128-bit integers
    lo, hi = words[:, 0], words[:, 1]
    missing = arr.is_null().to_numpy(zero_copy_only=False)
    fits = (hi == (lo >> 63)) & (lo > -_MAX_UNITS) & (lo < _MAX_UNITS)
    if not (fits | missing).all():
        return None
    return np.where(missing, 0, lo), missing


def _fixed_objects(
    df: pd.DataFrame, name: str, col: pd.Series, default: float | None, missing_ok: np.ndarray | None
) -> np.ndarray:
    """Objects (``Decimal``, ``str``, numbers, missing values) one by one, exactly: rounded
    half-up at 1e-8; a value that is not a finite number below 9.2e10 raises naming its row."""
    out = np.empty(len(df), dtype=np.int64)
    for i, v in enumerate(col.to_numpy(dtype=object)):
        if (default is not None or (missing_ok is not None and missing_ok[i])) and _missing(v):
            out[i] = 0
            continue
        try:
            d = v if type(v) is Decimal else Decimal(str(v))
            if not d.is_finite() or abs(d) >= _MAX_DECIMAL:
                raise InvalidOperation
        except (InvalidOperation, ValueError):
            raise ValueError(f"{row_label(df, i)}: {name} must be a finite number, got {v!r}") from None
        out[i] = int(d.scaleb(8).quantize(_ONE, rounding=ROUND_HALF_UP))
    return out


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
        raise ValueError(f"{row_label(df, int(np.argmax(isna)))}: {name} is missing")
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
class Encoded:
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
    table: pd.DataFrame | None  # the rows in the order encoded (date-sorted); None: not kept
    rows: np.ndarray | None  # the caller's row of each encoded row; None: same order


#: The per-row fields of an :class:`Encoded` table (cut together by ``LotLedger.as_of``
#: and by a splice).
ROW_FIELDS = ("sym", "day", "kind", "qty", "price", "fee", "ex_day", "lot_ref", "ratio", "cash", "alloc", "target")


@dataclass(frozen=True)
class LedgerSource:
    """What a lot ledger was matched from, kept for ``LotLedger.as_of`` to relieve again: the
    encoded rows (date-sorted, without the caller's table), the wash-sale switch, the caller's
    row count, and the symbol codes ``LotLedger.only`` kept (``None``: all)."""

    encoded: Encoded
    wash_sales: bool
    n_rows: int
    kept: np.ndarray | None


def check_method(method: object) -> None:
    """Raise unless ``method`` is a known method or a mapping of symbols to known methods."""
    if isinstance(method, Mapping):
        for symbol, m in method.items():
            if not isinstance(m, str) or m not in METHODS:
                raise ValueError(f"method for symbol {symbol!r} must be one of {sorted(METHODS)}, got {m!r}")
    elif not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)} or a mapping of symbol to one, got {method!r}")


def _symbol_methods(symbols: tuple[str, ...], method: LotMethod | Mapping[str, LotMethod]) -> tuple[str, ...]:
    """The method of each symbol: the one method, or the mapping's ("fifo" if unlisted)."""
    if isinstance(method, str):
        return (method,) * len(symbols)
    return tuple(str(method.get(s, "fifo")) for s in symbols)


def ledger_method(methods: tuple[str, ...], method: LotMethod | Mapping[str, LotMethod]) -> str:
    """``LotLedger.method``: the one method, else the distinct methods used, sorted, joined by '+'."""
    if isinstance(method, str):
        return method
    used = set(methods) if methods else {str(m) for m in method.values()}
    return "+".join(sorted(used)) or "fifo"


def encode(
    transactions: pd.DataFrame,
    method: LotMethod | Mapping[str, LotMethod],
    substantially_identical: Mapping[str, str] | None,
) -> Encoded:
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
        raise ValueError(f"{row_label(df, int(np.argmax(bad)))}: symbol is empty")
    type_codes, type_names = _factorize_stripped(df["type"])
    lookup = np.array([_KINDS.get(str(t).lower(), -1) for t in type_names[:-1]] + [-1], dtype=np.int64)
    kind_i = lookup[type_codes]  # a missing type has code -1: the appended -1
    if (kind_i < 0).any():
        i = int(np.argmax(kind_i < 0))
        raise ValueError(
            f"{row_label(df, i)}: type must be one of {sorted(_KINDS)}, got {df['type'].iloc[i]!r}"
        )
    is_ca = kind_i >= FIRST_CA
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
            raise ValueError(f"{row_label(df, i)}: {name} must be {need}, got {df[name].iloc[i]!r}")
    target = np.full(n, -1, dtype=np.int64)
    if is_ca.any():
        tgt_codes = np.array([index.get(str(x), -1) for x in tgt_names[:-1]] + [-1], dtype=np.int64)
        target = np.where(linked, tgt_codes[tgt_raw], -1)
        _check_corporate_actions(df, kind_i, codes, target, price, fee, ratio, cash, alloc)
    net = (qty / SCALE) * (price / SCALE) - fee / SCALE
    bad_d = (kind_i == _k.DIVIDEND) & (net < -0.5 / SCALE)
    if bad_d.any():
        i = int(np.argmax(bad_d))
        raise ValueError(f"{row_label(df, i)}: fees of a dividend must not exceed quantity x price")
    lot_ref = np.full(n, -1, dtype=np.int64)  # a sell without one relieves FIFO under "specific"
    lot_names = np.full(n, "", dtype=object)
    if "lot_id" in df.columns:
        specific = np.array([m == "specific" for m in methods], dtype=bool)
        _lot_refs(df, kind_i, codes, specific, symbols, lot_ref, lot_names)
    groups = group_codes(symbols, substantially_identical)
    return Encoded(
        symbols, codes.astype(np.int64), day, kind_i, qty, price, fee, ex_day, lot_ref,
        tuple(lot_names.tolist()), groups, methods, ratio, cash, alloc, target.astype(np.int64),
        _linked_groups(groups, codes, target, linked), df, rows,
    )


def _lot_refs(
    df: pd.DataFrame, kind: np.ndarray, codes: np.ndarray, specific: np.ndarray, symbols: tuple[str, ...],
    lot_ref: np.ndarray, lot_names: np.ndarray,
) -> None:
    """Fill ``lot_names`` (a buy's ``lot_id``) and ``lot_ref`` (the row of the buy a
    ``specific`` sell names) from the ``lot_id`` column, all rows at once.

    A missing or blank ``lot_id`` names nothing. A buy's ``lot_id`` must be new for its
    symbol; a sell's must name an earlier buy of its symbol. The first offending row
    (in date order) raises."""
    is_buy = kind == _k.BUY
    used = np.flatnonzero(is_buy | ((kind == _k.SELL) & specific[codes]))
    if used.size == 0:
        return
    named, lid_code, text = _lot_ids(df["lot_id"], used, len(symbols))
    used = used[named]
    key = codes[used] * (int(lid_code.max(initial=0)) + 1) + lid_code
    buy = is_buy[used]
    b_rows, b_key = used[buy], key[buy]
    dup = pd.Series(b_key).duplicated().to_numpy()
    s_rows, s_key = used[~buy], key[~buy]
    first = pd.Index(b_key[~dup])
    at = first.get_indexer(s_key)
    n_max = len(df)
    firsts = np.append(b_rows[~dup], n_max)  # at == -1 (no such buy) reads the appended n_max
    j = firsts[at]
    unknown = j >= s_rows  # no buy of that lot, or only later ones
    bad_dup = int(b_rows[dup][0]) if dup.any() else n_max
    bad_ref = int(s_rows[unknown][0]) if unknown.any() else n_max
    if bad_dup < bad_ref:
        lid = text[int(np.flatnonzero(used == bad_dup)[0])].as_py()
        raise ValueError(f"{row_label(df, bad_dup)}: lot_id {lid!r} is used by an earlier buy of {symbols[codes[bad_dup]]}")
    if bad_ref < n_max:
        lid = text[int(np.flatnonzero(used == bad_ref)[0])].as_py()
        raise ValueError(f"{row_label(df, bad_ref)}: unknown lot_id {lid!r} for {symbols[codes[bad_ref]]}")
    lot_names[b_rows] = text.filter(pa.array(buy)).to_numpy(zero_copy_only=False)
    lot_ref[s_rows] = j


def _lot_ids(col: pd.Series, used: np.ndarray, n_symbols: int) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """Of the rows ``used``: which name a lot (not missing, not blank once stripped), then,
    of those, an injective code of each name (``>= 0``, below ``2**62 / n_symbols``) and
    the names (Arrow strings). Integers are read as numbers (a name is the integer's text,
    as ``str`` writes it) and text in Arrow (an Arrow string column as it is, any other
    value by its ``str``): no Python object per value, nor a hash of text for integers."""
    dtype = col.dtype
    if pd.api.types.is_signed_integer_dtype(dtype):
        ints = pa.array(col.array).take(pa.array(used))
        named = ints.is_valid().to_numpy(zero_copy_only=False)
        values = ints.filter(pa.array(named)).cast(pa.int64())
        lid = values.to_numpy()
        low, high = (int(lid.min()), int(lid.max())) if lid.size else (0, 0)
        fits = high - low < (1 << 62) // max(n_symbols, 1)
        codes = lid - low if fits else pd.factorize(lid)[0].astype(np.int64)
        return named, codes, values.cast(pa.string())
    if (
        isinstance(dtype, pd.ArrowDtype)
        and (pa.types.is_string(dtype.pyarrow_dtype) or pa.types.is_large_string(dtype.pyarrow_dtype))
    ) or (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        text = pa.array(col.array).take(pa.array(used))
    else:
        text = pa.array(pd.Series(col.to_numpy(dtype=object)[used], dtype=object).astype("string").array)
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    named = _named(text)
    text = text.filter(pa.array(named))
    # any injective code of the names will do: Arrow's hash, no Python object per name
    return named, pc.dictionary_encode(text).indices.to_numpy(zero_copy_only=False).astype(np.int64), text


def _named(text: pa.Array) -> np.ndarray:
    """Which names are given: not missing, not blank once stripped (Python's ``str.strip``:
    a name with a letter or a digit is not blank; only the others are read in Python)."""
    valid = np.asarray(text.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)
    sure = pc.fill_null(pc.match_substring_regex(text, "[0-9A-Za-z]"), False).to_numpy(zero_copy_only=False)
    named: np.ndarray = valid & sure
    for i in np.flatnonzero(valid & ~sure).tolist():
        named[i] = bool(text[i].as_py().strip())
    return named


def _check_corporate_actions(
    df: pd.DataFrame, kind: np.ndarray, sym: np.ndarray, target: np.ndarray,
    price: np.ndarray, fee: np.ndarray, ratio: np.ndarray, cash: np.ndarray, alloc: np.ndarray,
) -> None:
    """Raise, naming the row and the column, on the first malformed corporate action."""
    for i in np.flatnonzero(kind >= FIRST_CA):
        k = int(kind[i])
        where = row_label(df, int(i))

        def bad(column: str, need: str) -> ValueError:
            value = df[column].iloc[i] if column in df.columns else None  # noqa: B023 - used at once
            return LedgerError(f"{where}: {column} {need}, got {value!r}", caller_row(df, int(i)), column, "invalid")  # noqa: B023

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
