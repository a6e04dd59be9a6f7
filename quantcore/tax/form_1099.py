"""Form 1099-DIV: boxes 1a and 1b of the dividends paid in a year, per symbol."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from quantcore._kernels.tax_reports import sum_by_code_nb
from quantcore.tax.dividends import year_bounds
from quantcore.tax.export import export_csv, export_json, money
from quantcore.tax.lots import LotLedger, LotMethod, as_ledger
from quantcore.tax.money import cents

__all__ = ["Form1099Div", "form_1099_div"]


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
        return export_csv(pd.concat([frame, total], ignore_index=True) if len(frame) else total, path)

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text, amounts as decimal strings."""
        return export_json(self.to_dict(), path)


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
    the per-symbol rows and the boxes are sums of those (one row per symbol name).

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
    name_code, names = pd.factorize(np.asarray(ledger.symbols, dtype=object), sort=True)
    group = name_code[d["symbol"]] if d.size else np.empty(0, np.int64)
    n = len(names)
    box_1a = sum_by_code_nb(group.astype(np.int64), cents(d["amount"]), n)
    box_1b = sum_by_code_nb(group.astype(np.int64), cents(d["qualified"]), n)
    present = np.unique(group)
    rows = tuple(
        {"symbol": str(names[g]), "box_1a": money(box_1a[g]), "box_1b": money(box_1b[g])} for g in present.tolist()
    )
    return Form1099Div(
        tax_year=int(year),
        box_1a_total_ordinary_dividends=money(box_1a.sum()),
        box_1b_qualified_dividends=money(box_1b.sum()),
        rows=rows,
    )
