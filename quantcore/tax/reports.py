"""US tax reports: Form 8949 rows, Schedule D totals, 1099-DIV summary; CSV and JSON export.

Every amount is rounded half-up to cents once, per row, and every total is the
sum of the rounded rows, so a report always adds up.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from quantcore.tax.dividends import year_bounds
from quantcore.tax.lots import LotLedger, LotMethod, as_ledger, from_fixed, to_cents
from quantcore.tax.rates import TaxRates, _netting_for, yearly_gains

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


def _date(day: int) -> date:
    out: date = (_EPOCH + np.timedelta64(int(day), "D")).astype(object)
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _export_csv(frame: pd.DataFrame, path: str | Path | None) -> str:
    text = frame.to_csv(index=False, lineterminator="\n")
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def _export_json(payload: Any, path: str | Path | None) -> str:
    text = json.dumps(_jsonable(payload), indent=2)
    if path is not None:
        Path(path).write_text(text + "\n", encoding="utf-8")
    return text


def _quantity_text(q: int) -> str:
    return format(from_fixed(q).normalize(), "f")


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


@dataclass(frozen=True)
class Form8949:
    """Form 8949 of one year: Part I (short-term) and Part II (long-term) rows."""

    tax_year: int
    part_i: tuple[Form8949Row, ...]
    part_ii: tuple[Form8949Row, ...]

    @staticmethod
    def _totals(rows: tuple[Form8949Row, ...]) -> dict[str, Decimal]:
        return {
            "proceeds": sum((r.proceeds for r in rows), _ZERO),
            "cost_basis": sum((r.cost_basis for r in rows), _ZERO),
            "adjustment": sum((r.adjustment for r in rows), _ZERO),
            "gain_or_loss": sum((r.gain_or_loss for r in rows), _ZERO),
        }

    @property
    def part_i_totals(self) -> dict[str, Decimal]:
        """Column totals of Part I (line 2), sums of the rounded rows."""
        return self._totals(self.part_i)

    @property
    def part_ii_totals(self) -> dict[str, Decimal]:
        """Column totals of Part II (line 2), sums of the rounded rows."""
        return self._totals(self.part_ii)

    def to_frame(self) -> pd.DataFrame:
        """All rows with a ``part`` column (``'I'`` or ``'II'``); amounts stay ``Decimal``."""
        records = [{"part": "I", **asdict(r)} for r in self.part_i] + [{"part": "II", **asdict(r)} for r in self.part_ii]
        columns = ["part"] + [f.name for f in fields(Form8949Row)]
        return pd.DataFrame.from_records(records, columns=columns)

    def to_csv(self, path: str | Path | None = None) -> str:
        """CSV text of :meth:`to_frame` (written to ``path`` when given)."""
        return _export_csv(self.to_frame(), path)

    def to_dict(self) -> dict[str, Any]:
        """Rows and totals per part."""
        return {
            "tax_year": self.tax_year,
            "part_i": {"rows": [asdict(r) for r in self.part_i], "totals": self.part_i_totals},
            "part_ii": {"rows": [asdict(r) for r in self.part_ii], "totals": self.part_ii_totals},
        }

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text of :meth:`to_dict`, amounts as decimal strings, dates ISO 8601."""
        return _export_json(self.to_dict(), path)


def form_8949(
    transactions: pd.DataFrame | LotLedger,
    year: int,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
) -> Form8949:
    """Form 8949 rows of the sales in ``year``: one row per lot piece sold.

    Parameters
    ----------
    transactions : DataFrame or LotLedger
        A transaction table (see :func:`quantcore.tax.match_lots`) or its ledger.
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
    ledger = as_ledger(transactions, method=method, wash_sales=wash_sales, substantially_identical=substantially_identical)
    r = ledger.realized
    rows = r[(r["sold"] >= first) & (r["sold"] <= last)]
    part_i: list[Form8949Row] = []
    part_ii: list[Form8949Row] = []
    for rec in rows.tolist():
        sym, _, _, _, acquired, sold, qty, proceeds, basis, disallowed, long_term = rec
        p, b, a = to_cents(proceeds), to_cents(basis), to_cents(disallowed)
        row = Form8949Row(
            # a piece of no shares: a return of capital beyond the basis (IRS Pub. 550)
            description=(
                f"{_quantity_text(qty)} sh. {ledger.symbols[sym]}"
                if qty
                else f"{ledger.symbols[sym]} nondividend distribution in excess of basis"
            ),
            date_acquired=_date(acquired),
            date_sold=_date(sold),
            proceeds=p,
            cost_basis=b,
            code="W" if disallowed > 0 else "",
            adjustment=a,
            gain_or_loss=p - b + a,
            long_term=bool(long_term),
        )
        (part_ii if long_term else part_i).append(row)
    return Form8949(int(year), tuple(part_i), tuple(part_ii))


@dataclass(frozen=True)
class ScheduleD:
    """Schedule D totals of one year (dollars; losses and carryovers negative as on the form)."""

    tax_year: int
    short_term_proceeds: Decimal
    short_term_cost_basis: Decimal
    short_term_adjustments: Decimal
    short_term_gain_loss: Decimal  # Part I totals from Form 8949
    short_term_carryover: Decimal  # line 6
    net_short_term_gain_loss: Decimal  # line 7
    long_term_proceeds: Decimal
    long_term_cost_basis: Decimal
    long_term_adjustments: Decimal
    long_term_gain_loss: Decimal  # Part II totals from Form 8949
    long_term_carryover: Decimal  # line 14
    net_long_term_gain_loss: Decimal  # line 15
    net_capital_gain_loss: Decimal  # line 16
    capital_loss_deduction: Decimal  # line 21 (as a loss)
    short_term_carryforward: Decimal
    long_term_carryforward: Decimal

    def to_dict(self) -> dict[str, Any]:
        """Every field by name."""
        return asdict(self)

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text, amounts as decimal strings."""
        return _export_json(self.to_dict(), path)

    def to_csv(self, path: str | Path | None = None) -> str:
        """Two-column CSV: ``line``, ``amount``."""
        frame = pd.DataFrame({"line": list(self.to_dict()), "amount": list(self.to_dict().values())})
        return _export_csv(frame, path)


def schedule_d(
    transactions: pd.DataFrame | LotLedger,
    year: int,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    rates: TaxRates | None = None,
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
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

    Returns
    -------
    ScheduleD

    Notes
    -----
    Line 7 = Part I gain - short-term carryover; line 15 likewise; line 16 =
    line 7 + line 15; line 21 = ``-min(limit, -line 16)`` when line 16 < 0.
    Carryovers come from netting every earlier year in the ledger
    (:func:`quantcore.tax.rates.net_capital_gains`).

    Examples
    --------
    >>> import pandas as pd
    >>> tx = pd.DataFrame({"symbol": ["X", "X"], "date": ["2024-01-02", "2024-06-03"],
    ...     "type": ["buy", "sell"], "quantity": [100, 100], "price": [100, 20]})
    >>> d = schedule_d(tx, 2025)
    >>> d.short_term_carryover, d.capital_loss_deduction, d.short_term_carryforward
    (Decimal('-5000.00'), Decimal('-3000.00'), Decimal('2000.00'))
    """
    rates = TaxRates() if rates is None else rates
    form = form_8949(transactions, year, method=method, wash_sales=wash_sales, substantially_identical=substantially_identical)
    ledger = as_ledger(transactions, method=method, wash_sales=wash_sales, substantially_identical=substantially_identical)
    st_in, lt_in, net = _netting_for(yearly_gains(ledger), int(year), rates.loss_limit)
    t1, t2 = form.part_i_totals, form.part_ii_totals
    line7 = t1["gain_or_loss"] - st_in
    line15 = t2["gain_or_loss"] - lt_in
    line16 = line7 + line15

    def c(x: Decimal) -> Decimal:
        return x.quantize(_ZERO)

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
        net_capital_gain_loss=line16,
        capital_loss_deduction=c(-net.deduction),
        short_term_carryforward=c(net.short_term_carryforward),
        long_term_carryforward=c(net.long_term_carryforward),
    )


@dataclass(frozen=True)
class Form1099Div:
    """1099-DIV summary: box 1a (total ordinary dividends, which include the
    qualified ones) and box 1b (qualified dividends), with one row per symbol."""

    tax_year: int
    box_1a_total_ordinary_dividends: Decimal
    box_1b_qualified_dividends: Decimal
    rows: tuple[dict[str, Any], ...]

    def to_frame(self) -> pd.DataFrame:
        """Per-symbol rows: ``symbol``, ``box_1a``, ``box_1b``."""
        return pd.DataFrame.from_records(list(self.rows), columns=["symbol", "box_1a", "box_1b"])

    def to_dict(self) -> dict[str, Any]:
        """Boxes and rows."""
        return asdict(self)

    def to_csv(self, path: str | Path | None = None) -> str:
        """CSV text of :meth:`to_frame` with a final ``TOTAL`` row."""
        frame = self.to_frame()
        total = pd.DataFrame([{"symbol": "TOTAL", "box_1a": self.box_1a_total_ordinary_dividends, "box_1b": self.box_1b_qualified_dividends}])
        return _export_csv(pd.concat([frame, total], ignore_index=True) if len(frame) else total, path)

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text, amounts as decimal strings."""
        return _export_json(self.to_dict(), path)


def form_1099_div(
    transactions: pd.DataFrame | LotLedger,
    year: int,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
) -> Form1099Div:
    """1099-DIV boxes 1a and 1b for the dividends paid in ``year``.

    Each dividend's amount and qualified part are rounded half-up to cents;
    the per-symbol rows and the boxes are sums of those.

    Examples
    --------
    >>> import pandas as pd
    >>> tx = pd.DataFrame({"symbol": ["X", "X", "X"],
    ...     "date": ["2025-07-09", "2025-07-16", "2025-08-12"],
    ...     "type": ["buy", "dividend", "sell"], "quantity": [5000, 5000, 5000],
    ...     "price": [20, 0.10, 21]})
    >>> f = form_1099_div(tx, 2025)
    >>> f.box_1a_total_ordinary_dividends, f.box_1b_qualified_dividends
    (Decimal('500.00'), Decimal('0.00'))
    """
    first, last = year_bounds(year)
    ledger = as_ledger(transactions, method=method, wash_sales=wash_sales, substantially_identical=substantially_identical)
    d = ledger.dividends
    d = d[(d["date"] >= first) & (d["date"] <= last)]
    per: dict[str, list[Decimal]] = {}
    for sym, amount, qual in zip(d["symbol"].tolist(), d["amount"].tolist(), d["qualified"].tolist(), strict=True):
        acc = per.setdefault(ledger.symbols[sym], [_ZERO, _ZERO])
        acc[0] += to_cents(amount)
        acc[1] += to_cents(qual)
    rows: tuple[dict[str, Any], ...] = tuple({"symbol": s, "box_1a": v[0], "box_1b": v[1]} for s, v in sorted(per.items()))
    return Form1099Div(
        tax_year=int(year),
        box_1a_total_ordinary_dividends=sum((v[0] for v in per.values()), _ZERO),
        box_1b_qualified_dividends=sum((v[1] for v in per.values()), _ZERO),
        rows=rows,
    )
