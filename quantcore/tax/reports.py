"""US tax reports: Form 8949 rows, Schedule D totals, 1099-DIV summary; CSV and JSON export.

Every amount is rounded half-up to cents once, per row, and every total is the
sum of the rounded rows, so a report always adds up.

A report holds its figures as columns (int64 cents, day numbers, symbol codes),
computed by kernels over the ledger's records; its formats (rows as objects, a
DataFrame, CSV, JSON) are rendered only when asked for, each in one vectorized pass.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from quantcore._kernels.tax_reports import (
    form_8949_nb,
    form_columns_nb,
    place_form_nb,
    sum_by_code_nb,
)
from quantcore._records import realized_dt
from quantcore._validation import read_only
from quantcore.tax.dividends import year_bounds
from quantcore.tax.export import export_csv, export_json, jsonable, money, write_json
from quantcore.tax.form_1099 import Form1099Div, form_1099_div
from quantcore.tax.lots import LotLedger, LotMethod, as_ledger
from quantcore.tax.money import cents_arrow, quantity_arrow
from quantcore.tax.rates import TaxRates, YearlyGains, netting_for, scan_realized, yearly_gains
from quantcore.tax.splice import GroupedLedger, placement

__all__ = [
    "Form1099Div",
    "Form8949",
    "Form8949Row",
    "ScheduleD",
    "form_1099_div",
    "form_8949",
    "schedule_d",
]

_EPOCH = np.datetime64("1970-01-01", "D")
_ZERO = Decimal("0.00")
_AMOUNTS = ("proceeds", "cost_basis", "adjustment", "gain_or_loss")


def _iso_arrow(days: np.ndarray) -> pa.Array:
    return pa.array(np.asarray(days, dtype=np.int64).astype(np.int32)).view(pa.date32()).cast(pa.string())


@dataclass(frozen=True)
class Form8949Row:
    """One Form 8949 line: columns (a) to (h). ``code`` is ``'W'`` for a wash sale."""

    description: str
    date_acquired: date
    date_sold: date
    proceeds: Decimal
    cost_basis: Decimal
    code: str
    adjustment: Decimal
    gain_or_loss: Decimal
    long_term: bool


_ROW_FIELDS = tuple(f.name for f in fields(Form8949Row))


@dataclass(frozen=True, eq=False)
class Form8949:
    """Form 8949 of one year as columns: Part I (short-term) rows, then Part II (long-term).

    Attributes
    ----------
    tax_year : int
    symbols : tuple of str
        The symbols ``symbol`` codes index.
    symbol, quantity, acquired, sold : ndarray of int64
        Per row: symbol code, shares (1e-8 units; 0 for a return of capital beyond
        the basis), holding-period day and sale day (days since 1970-01-01).
    proceeds, cost_basis, adjustment : ndarray of int64
        Per row, in cents (each rounded half-up once); the gain is
        ``proceeds - cost_basis + adjustment``.
    long_term : ndarray of bool
        Part II rows (all after the Part I rows, each part in sale order).
    wash_sale : ndarray of bool
        Rows with a disallowed loss (code ``W``; its adjustment may round to 0.00).
    yearly_gains : dict or None
        The ledger's ``quantcore.tax.rates.yearly_gains``, found in the same pass
        over its pieces as the rows (Schedule D's carryovers need every year's); ``None``
        for a form restored by :meth:`from_columns`.

    ``part_i`` and ``part_ii`` give the rows as :class:`Form8949Row` objects;
    ``to_frame``, ``to_csv``, ``to_dict`` and ``to_json`` render them when asked.
    """

    tax_year: int
    symbols: tuple[str, ...]
    symbol: np.ndarray
    quantity: np.ndarray
    acquired: np.ndarray
    sold: np.ndarray
    proceeds: np.ndarray
    cost_basis: np.ndarray
    adjustment: np.ndarray
    long_term: np.ndarray
    wash_sale: np.ndarray
    yearly_gains: YearlyGains | None = field(default=None, repr=False, compare=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def gain_or_loss(self) -> np.ndarray:
        """Per row, in cents: proceeds - cost basis + adjustment."""
        out: np.ndarray = self.proceeds - self.cost_basis + self.adjustment
        return out

    @property
    def n_short_term(self) -> int:
        """The number of Part I rows (they come first)."""
        return int(self.long_term.size - np.count_nonzero(self.long_term))

    def _arrow_text(self) -> dict[str, pa.Array]:
        """Every column of a row as Arrow text (descriptions, ISO dates, decimal amounts),
        made once per form in vectorized passes."""
        if "arrow" not in self._cache:
            codes = pa.array(self.symbol, type=pa.int64())
            names = pa.array(list(self.symbols), type=pa.string()).take(codes) if self.symbol.size else pa.array([], pa.string())
            desc = pc.binary_join_element_wise(quantity_arrow(self.quantity), names, " sh. ")
            roc = self.quantity == 0  # a return of capital beyond the basis (IRS Pub. 550)
            if roc.any():
                other = pc.binary_join_element_wise(names, " nondividend distribution in excess of basis", "")
                desc = pc.if_else(pa.array(roc), other, desc)
            self._cache["arrow"] = {
                "description": desc,
                "date_acquired": _iso_arrow(self.acquired),
                "date_sold": _iso_arrow(self.sold),
                "proceeds": cents_arrow(self.proceeds),
                "cost_basis": cents_arrow(self.cost_basis),
                "code": pc.if_else(pa.array(self.wash_sale, type=pa.bool_()), "W", ""),
                "adjustment": cents_arrow(self.adjustment),
                "gain_or_loss": cents_arrow(self.gain_or_loss),
            }
        out: dict[str, pa.Array] = self._cache["arrow"]
        return out

    def _text_columns(self) -> dict[str, np.ndarray]:
        """:meth:`_arrow_text` as object arrays of str."""
        return {k: v.to_numpy(zero_copy_only=False) for k, v in self._arrow_text().items()}

    def _rows(self, lo: int, hi: int) -> tuple[Form8949Row, ...]:
        t = self._text_columns()
        acquired = (_EPOCH + self.acquired[lo:hi].astype("timedelta64[D]")).astype(object)
        sold = (_EPOCH + self.sold[lo:hi].astype("timedelta64[D]")).astype(object)
        money = {k: list(map(Decimal, t[k][lo:hi])) for k in _AMOUNTS}
        return tuple(
            map(
                Form8949Row,
                t["description"][lo:hi].tolist(), acquired.tolist(), sold.tolist(), money["proceeds"],
                money["cost_basis"], t["code"][lo:hi].tolist(), money["adjustment"], money["gain_or_loss"],
                self.long_term[lo:hi].tolist(),
            )
        )

    @property
    def part_i(self) -> tuple[Form8949Row, ...]:
        """Part I rows (short-term), in sale order."""
        return self._rows(0, self.n_short_term)

    @property
    def part_ii(self) -> tuple[Form8949Row, ...]:
        """Part II rows (long-term), in sale order."""
        return self._rows(self.n_short_term, self.long_term.size)

    def _totals(self, lo: int, hi: int) -> dict[str, Decimal]:
        sums = {k: sum_by_code_nb(np.zeros(hi - lo, np.int64), getattr(self, k)[lo:hi].copy(), 1)[0] for k in _AMOUNTS[:3]}
        sums["gain_or_loss"] = sums["proceeds"] - sums["cost_basis"] + sums["adjustment"]
        return {k: money(v) for k, v in sums.items()}

    @property
    def part_i_totals(self) -> dict[str, Decimal]:
        """Column totals of Part I (line 2), sums of the rounded rows."""
        return self._totals(0, self.n_short_term)

    @property
    def part_ii_totals(self) -> dict[str, Decimal]:
        """Column totals of Part II (line 2), sums of the rounded rows."""
        return self._totals(self.n_short_term, self.long_term.size)

    def _text_frame(self) -> pd.DataFrame:
        t = self._text_columns()
        part = np.where(self.long_term, "II", "I").astype(object)
        return pd.DataFrame({"part": part, **t, "long_term": self.long_term.astype(bool)})

    def to_frame(self) -> pd.DataFrame:
        """All rows with a ``part`` column (``'I'`` or ``'II'``); amounts stay ``Decimal``."""
        frame = self._text_frame()
        for k in _AMOUNTS:
            frame[k] = pd.Series(list(map(Decimal, frame[k])), index=frame.index, dtype=object)
        for k, days in (("date_acquired", self.acquired), ("date_sold", self.sold)):
            frame[k] = (_EPOCH + days.astype("timedelta64[D]")).astype(object)
        return frame[["part", *_ROW_FIELDS]]

    def to_csv(self, path: str | Path | None = None) -> str:
        """CSV text of :meth:`to_frame` (written to ``path`` when given), the text pandas
        writes for it, joined by Arrow: one pass per column, none per row."""
        t = self._arrow_text()
        desc = t["description"]
        special = pc.match_substring_regex(desc, '[",\r\n]')  # what the csv module quotes
        if pc.any(special).as_py():
            quoted = pc.binary_join_element_wise('"', pc.replace_substring(desc, '"', '""'), '"', "")
            desc = pc.if_else(special, quoted, desc)
        lt = pa.array(self.long_term, type=pa.bool_())
        columns = [pc.if_else(lt, "II", "I"), desc, *(t[k] for k in _ROW_FIELDS[1:-1]), pc.if_else(lt, "True", "False")]
        lines = pc.binary_join_element_wise(*columns, ",")
        body = "\n".join(lines.to_pylist())
        text = ",".join(["part", *_ROW_FIELDS]) + "\n" + (body + "\n" if body else "")
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def to_dict(self) -> dict[str, Any]:
        """Rows and totals per part."""
        return {
            "tax_year": self.tax_year,
            "part_i": {"rows": [asdict(r) for r in self.part_i], "totals": self.part_i_totals},
            "part_ii": {"rows": [asdict(r) for r in self.part_ii], "totals": self.part_ii_totals},
        }

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text of :meth:`to_dict`, amounts as decimal strings, dates ISO 8601."""
        return write_json(self.json_text(indent=2), path)

    def json_text(self, *, indent: int | None = None) -> str:
        """The JSON of :meth:`to_dict`, its rows rendered in one vectorized pass."""
        k = self.n_short_term
        objects = self._json_objects()
        rows = ["[" + ",".join(objects[:k]) + "]", "[" + ",".join(objects[k:]) + "]"]
        doc = {
            "tax_year": self.tax_year,
            "part_i": {"rows": "\x00part_i\x00", "totals": self.part_i_totals},
            "part_ii": {"rows": "\x00part_ii\x00", "totals": self.part_ii_totals},
        }
        text = json.dumps(jsonable(doc), indent=indent)
        text = text.replace(json.dumps("\x00part_i\x00"), rows[0], 1)
        return text.replace(json.dumps("\x00part_ii\x00"), rows[1], 1)

    def _json_objects(self) -> list[str]:
        """Each row as a JSON object's text, joined by Arrow (strings that JSON must
        escape, rare in descriptions, go through ``json.dumps``)."""
        t = self._arrow_text()
        desc = t["description"]
        plain = pc.match_substring_regex(desc, '^[ -!#-\\[\\]-~]*$')  # printable ASCII but " and \\
        quoted = pc.binary_join_element_wise('"', desc, '"', "")
        if not pc.all(plain).as_py():
            escaped = pa.array([json.dumps(x) for x in desc.to_pylist()], type=pa.string())
            quoted = pc.if_else(plain, quoted, escaped)
        parts: list[Any] = ['{"description":', quoted]
        for name in _ROW_FIELDS[1:-1]:
            parts += [f',"{name}":"', t[name], '"']
        parts += [',"long_term":', pc.if_else(pa.array(self.long_term, type=pa.bool_()), "true", "false"), "}"]
        out: list[str] = pc.binary_join_element_wise(*parts, "").to_pylist()
        return out

    def columns(self) -> dict[str, Any]:
        """The figures, exact and compact, JSON-ready: :meth:`from_columns` restores them.

        Each column is little-endian integers of the narrowest width that holds it (the
        flags one bit per row), all in one base64 text: a few bytes per row, and one
        string for a JSON encoder, not a number per cell.
        """
        n = int(self.symbol.size)
        dtypes = {k: "bits" if k in _FLAGS else _narrowest(getattr(self, k)) for k in _COLUMNS}
        sizes = [(n + 7) // 8 if code == "bits" else n * np.dtype(code).itemsize for code in dtypes.values()]
        packed = np.empty(sum(sizes), np.uint8)  # each column cast into its place: one copy
        at = 0
        for (k, code), size in zip(dtypes.items(), sizes, strict=True):
            a, place = getattr(self, k), packed[at : at + size]
            if code == "bits":
                place[:] = np.packbits(a, bitorder="little")
            else:
                place.view(code)[:] = a
            at += size
        return {
            "tax_year": self.tax_year,
            "symbols": list(self.symbols),
            "rows": n,
            "dtypes": dtypes,
            "data": base64.b64encode(packed.data).decode("ascii"),
        }

    @classmethod
    def from_columns(cls, data: Mapping[str, Any]) -> Form8949:
        """The form of :meth:`columns` (or of its earlier form, a list of numbers per column)."""
        if "data" not in data:  # stored before the columns were packed
            arrays: dict[str, Any] = {k: np.asarray(data[k], dtype=bool if k in _FLAGS else np.int64) for k in _COLUMNS}
            return cls(int(data["tax_year"]), tuple(data["symbols"]), **arrays)
        n, raw, at = int(data["rows"]), base64.b64decode(data["data"]), 0
        columns: dict[str, Any] = {}
        for k in _COLUMNS:
            code = data["dtypes"][k]
            if code == "bits":
                size = (n + 7) // 8
                bits = np.unpackbits(np.frombuffer(raw, np.uint8, size, at), count=n, bitorder="little")
                columns[k] = bits.astype(bool)
            else:
                size = n * np.dtype(code).itemsize
                columns[k] = np.frombuffer(raw, code, n, at).astype(np.int64)
            at += size
        return cls(int(data["tax_year"]), tuple(data["symbols"]), **columns)


def _narrowest(a: np.ndarray) -> str:
    """The narrowest little-endian integer type that holds every value of ``a``."""
    if a.size == 0:
        return "<i1"
    lo, hi = int(a.min()), int(a.max())
    for code in ("<i1", "<i2", "<i4"):
        info = np.iinfo(code)
        if info.min <= lo and hi <= info.max:
            return code
    return "<i8"


_COLUMNS = ("symbol", "quantity", "acquired", "sold", "proceeds", "cost_basis", "adjustment", "long_term", "wash_sale")
_FLAGS = ("long_term", "wash_sale")


_PIECE_FIELDS = realized_dt.names or ()
# where a piece's symbol, quantity, acquired, sold, proceeds, basis, disallowed, long_term are
_FORM_FIELDS = read_only(np.array([_PIECE_FIELDS.index(f) for f in (
    "symbol", "quantity", "acquired", "sold", "proceeds", "basis", "disallowed", "long_term"
)], np.int64))  # fmt: skip


def _form_rows(chosen: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, ...]:
    """Form 8949 columns (:func:`form_8949_nb`'s) of the pieces of
    ``GroupedLedger.slices``: Part I rows, then Part II rows, each in sell order."""
    base, at = placement(chosen, _PIECE_FIELDS.index("long_term"))
    out = form_columns_nb(int(at[1, -1]))
    for pieces, rows in chosen:
        place_form_nb(pieces, rows, _FORM_FIELDS, _PIECE_FIELDS.index("row"), base, at, out)
    return out


def _form_of_parts(ledger: GroupedLedger, year: int) -> Form8949:
    """:func:`form_8949` of a ledger kept per processing group: each part's slice of the
    year's days placed straight into the form's rows (no record copy of the year's pieces);
    the yearly gains are the parts'."""
    first, last = year_bounds(year)
    sym, qty, acquired, sold, proceeds, basis, adjustment, long_term, wash = _form_rows(ledger.slices(first, last))
    return Form8949(
        tax_year=year, symbols=ledger.ledger.symbols, symbol=sym, quantity=qty, acquired=acquired, sold=sold,
        proceeds=proceeds, cost_basis=basis, adjustment=adjustment, long_term=long_term, wash_sale=wash,
        yearly_gains=ledger.yearly_gains(),
    )  # fmt: skip


def form_8949(
    transactions: pd.DataFrame | LotLedger | GroupedLedger,
    year: int,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
) -> Form8949:
    """Form 8949 rows of the sales in ``year``: one row per lot piece sold.

    Parameters
    ----------
    transactions : DataFrame, LotLedger or GroupedLedger
        A transaction table (see :func:`quantcore.tax.match_lots`) or its ledger; a
        ledger kept per processing group (``quantcore.tax.splice.GroupedLedger``) gives
        the same form from its parts' slices of the year, its pieces never gathered.
    year : int
        Tax year of the sale dates.
    method, wash_sales, substantially_identical
        Passed to :func:`~quantcore.tax.match_lots` for a table.

    Returns
    -------
    Form8949

    Notes
    -----
    ``proceeds``, ``cost_basis`` and ``adjustment`` are each rounded half-up
    to cents; ``gain_or_loss = proceeds - cost_basis + adjustment`` of the
    rounded values. A wash sale has code ``W`` and the disallowed loss as a
    positive adjustment. ``date_acquired`` is the holding-period date (moved
    back for wash-sale replacement shares), which also decides the part.

    Examples
    --------
    >>> import pandas as pd
    >>> tx = pd.DataFrame({"symbol": ["X", "X", "X"],
    ...     "date": ["2025-01-02", "2025-03-03", "2025-03-20"], "type": ["buy", "sell", "buy"],
    ...     "quantity": [100, 100, 100], "price": [10, 7.5, 8]})
    >>> row = form_8949(tx, 2025).part_i[0]
    >>> row.description, row.code, row.adjustment, row.gain_or_loss
    ('100 sh. X', 'W', Decimal('250.00'), Decimal('0.00'))
    """
    first, last = year_bounds(year)
    if isinstance(transactions, GroupedLedger):
        return _form_of_parts(transactions, int(year))
    ledger = as_ledger(transactions, method=method, wash_sales=wash_sales, substantially_identical=substantially_identical)
    gains, window = scan_realized(ledger, int(year))
    r = ledger.realized
    sym, qty, acquired, sold, proceeds, basis, adjustment, long_term, wash = form_8949_nb(
        read_only(r["symbol"]), read_only(r["quantity"]), read_only(r["acquired"]), read_only(r["sold"]),
        read_only(r["proceeds"]), read_only(r["basis"]), read_only(r["disallowed"]), read_only(r["long_term"]),
        first, last, window,
    )  # fmt: skip
    return Form8949(
        tax_year=int(year), symbols=ledger.symbols, symbol=sym, quantity=qty, acquired=acquired, sold=sold,
        proceeds=proceeds, cost_basis=basis, adjustment=adjustment, long_term=long_term, wash_sale=wash,
        yearly_gains=gains,
    )  # fmt: skip


@dataclass(frozen=True)
class ScheduleD:
    """Schedule D (Form 1040) of one year, in dollars, with the form's signs: a loss, a
    carryover in (lines 6 and 14), the deduction (line 21) and a carryforward are negative.

    Attributes
    ----------
    short_term_proceeds, short_term_cost_basis, short_term_adjustments, short_term_gain_loss
        Part I: Form 8949 Part I totals, columns (d), (e), (g), (h) (lines 1b-3).
    short_term_carryover
        Line 6: the short-term capital loss carried over from earlier years.
    net_short_term_gain_loss
        Line 7: lines 1a-6 combined in column (h).
    long_term_proceeds, long_term_cost_basis, long_term_adjustments, long_term_gain_loss
        Part II: Form 8949 Part II totals (lines 8b-10).
    long_term_carryover
        Line 14: the long-term capital loss carried over.
    net_long_term_gain_loss
        Line 15: lines 8a-14 combined in column (h).
    combined_net_gain_loss
        Line 16: lines 7 and 15 combined (carryovers included; the tax summary's
        ``net_capital_gain_loss`` is the year's own realized gain, without them).
    capital_loss_deduction
        Line 21: when line 16 is a loss, the smaller of that loss and the limit
        (3,000; 1,500 married filing separately), as a negative amount; else 0.
    short_term_carryforward, long_term_carryforward
        The loss carried to next year (the Capital Loss Carryover Worksheet's lines 8
        and 13, next year's lines 6 and 14), negative; 0 when none.

    ``net_capital_gain_loss`` is the deprecated name of ``combined_net_gain_loss``.
    """

    tax_year: int
    short_term_proceeds: Decimal
    short_term_cost_basis: Decimal
    short_term_adjustments: Decimal
    short_term_gain_loss: Decimal
    short_term_carryover: Decimal
    net_short_term_gain_loss: Decimal
    long_term_proceeds: Decimal
    long_term_cost_basis: Decimal
    long_term_adjustments: Decimal
    long_term_gain_loss: Decimal
    long_term_carryover: Decimal
    net_long_term_gain_loss: Decimal
    combined_net_gain_loss: Decimal
    capital_loss_deduction: Decimal
    short_term_carryforward: Decimal
    long_term_carryforward: Decimal

    @property
    def net_capital_gain_loss(self) -> Decimal:
        """Deprecated: Schedule D line 16 is :attr:`combined_net_gain_loss` (the tax
        summary's ``net_capital_gain_loss`` is the year's realized gain, another figure)."""
        warnings.warn(
            "ScheduleD.net_capital_gain_loss is deprecated: use combined_net_gain_loss (line 16)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.combined_net_gain_loss

    def to_dict(self) -> dict[str, Any]:
        """Every field by name."""
        return asdict(self)

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text, amounts as decimal strings."""
        return export_json(self.to_dict(), path)

    def to_csv(self, path: str | Path | None = None) -> str:
        """Two-column CSV: ``line``, ``amount``."""
        d = self.to_dict()
        return export_csv(pd.DataFrame({"line": list(d), "amount": list(d.values())}), path)


def schedule_d(
    transactions: pd.DataFrame | LotLedger,
    year: int,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    rates: TaxRates | None = None,
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
    form: Form8949 | None = None,
    gains: Mapping[int, tuple[Decimal, Decimal]] | None = None,
) -> ScheduleD:
    """Schedule D totals: Form 8949 part totals, carryovers, net gain and loss deduction.

    Parameters
    ----------
    transactions : DataFrame or LotLedger
        A transaction table or its ledger.
    year : int
        Tax year.
    method, wash_sales, substantially_identical
        Passed to :func:`~quantcore.tax.match_lots` for a table.
    rates : TaxRates, optional
        Only its ``loss_limit`` is used (3,000 by default).
    form : Form8949, optional
        The year's :func:`form_8949` of the same ledger, when already made (with its
        yearly gains, no second pass over the pieces).
    gains : mapping, optional
        The ledger's ``quantcore.tax.rates.yearly_gains``, when already summed (the
        ledger may then hold the year's realized pieces only: the carryovers read these);
        they take precedence over ``form``'s.

    Returns
    -------
    ScheduleD

    Notes
    -----
    Line 7 = Part I gain + line 6 (a negative carryover); line 15 likewise; line 16 =
    line 7 + line 15; line 21 = ``-min(limit, -line 16)`` when line 16 < 0.
    Carryovers come from netting every earlier year in the ledger
    (:func:`quantcore.tax.rates.net_capital_gains`). Signs and lines: Instructions
    for Schedule D (Form 1040), lines 6, 14, 16 and 21 and the Capital Loss Carryover
    Worksheet (``docs/tax.md``).

    Examples
    --------
    >>> import pandas as pd
    >>> tx = pd.DataFrame({"symbol": ["X", "X"], "date": ["2024-01-02", "2024-06-03"],
    ...     "type": ["buy", "sell"], "quantity": [100, 100], "price": [100, 20]})
    >>> d = schedule_d(tx, 2025)
    >>> d.short_term_carryover, d.capital_loss_deduction, d.short_term_carryforward
    (Decimal('-5000.00'), Decimal('-3000.00'), Decimal('-2000.00'))
    """
    rates = TaxRates() if rates is None else rates
    ledger = as_ledger(transactions, method=method, wash_sales=wash_sales, substantially_identical=substantially_identical)
    form = form_8949(ledger, year) if form is None else form
    if gains is None:
        gains = yearly_gains(ledger) if form.yearly_gains is None else form.yearly_gains
    st_in, lt_in, net = netting_for(gains, int(year), rates.loss_limit)
    t1, t2 = form.part_i_totals, form.part_ii_totals
    line7 = t1["gain_or_loss"] - st_in
    line15 = t2["gain_or_loss"] - lt_in
    line16 = line7 + line15

    def c(x: Decimal) -> Decimal:
        return x.quantize(_ZERO) + 0  # + 0: no negative zero

    return ScheduleD(
        tax_year=int(year),
        short_term_proceeds=t1["proceeds"],
        short_term_cost_basis=t1["cost_basis"],
        short_term_adjustments=t1["adjustment"],
        short_term_gain_loss=t1["gain_or_loss"],
        short_term_carryover=c(-st_in),
        net_short_term_gain_loss=line7,
        long_term_proceeds=t2["proceeds"],
        long_term_cost_basis=t2["cost_basis"],
        long_term_adjustments=t2["adjustment"],
        long_term_gain_loss=t2["gain_or_loss"],
        long_term_carryover=c(-lt_in),
        net_long_term_gain_loss=line15,
        combined_net_gain_loss=line16,
        capital_loss_deduction=c(-net.deduction),
        short_term_carryforward=c(-net.short_term_carryforward),
        long_term_carryforward=c(-net.long_term_carryforward),
    )
