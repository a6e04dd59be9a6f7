"""Kernel == Decimal reference on trading histories at real closing prices (S&P 500,
NASDAQ and GOOG closes, July 2005 to June 2007 from the ``close_panel`` fixture), every lot method
and one method per symbol."""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from quantcore.tax import form_8949, match_lots, tax_summary
from quantcore.tax.lots import from_fixed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
from tax_reference import history_from_closes, reference_match_lots


@pytest.fixture(scope="module")
def history(close_panel: pd.DataFrame) -> list[dict]:
    closes = close_panel.loc["2005-07-01":"2007-06-30"]
    return history_from_closes(closes, np.random.default_rng(20261122))


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "symbol": [r["symbol"] for r in rows],
            "date": [pd.Timestamp(r["date"]) for r in rows],
            "type": [r["type"] for r in rows],
            "quantity": [float(r["quantity"]) for r in rows],  # the float path of the reader
            "price": [float(r["price"]) for r in rows],
            "fees": [float(r["fees"]) for r in rows],
            "lot_id": [f"L{i}" if r["type"] == "buy" else (f"L{r['lot']}" if "lot" in r else None) for i, r in enumerate(rows)],
            "ex_date": [pd.Timestamp(r["ex_date"]) if "ex_date" in r else pd.NaT for r in rows],
        }
    )


@pytest.mark.parametrize(
    "method", ["fifo", "lifo", "hifo", "specific", "average", {"SP500": "average", "NASDAQ": "hifo", "GOOG": "specific"}]
)
def test_real_prices_kernel_equals_reference(history: list[dict], method: str | dict[str, str]) -> None:
    ledger = match_lots(_frame(history), method=method)  # type: ignore[arg-type]
    ref = reference_match_lots(history, method=method)
    assert len(history) > 400 and any(p["disallowed"] > 0 for p in ref.realized)
    got = [(from_fixed(r["proceeds"]), from_fixed(r["basis"]), from_fixed(r["disallowed"]), bool(r["long_term"])) for r in ledger.realized]
    want = [(p["proceeds"], p["basis"], p["disallowed"], p["long_term"]) for p in ref.realized]
    assert got == want
    assert [from_fixed(b) for b in ledger.open_lots["basis"]] == [lot.basis for lot in ref.open_lots]
    assert [from_fixed(q) for q in ledger.dividends["qualified"]] == [d["qualified"] for d in ref.dividends]


def test_real_prices_reports_add_up(history: list[dict]) -> None:
    ledger = match_lots(_frame(history))
    for year in (2005, 2006, 2007):
        form = form_8949(ledger, year)
        s = tax_summary(ledger, year)
        assert s.short_term_gain_loss == form.part_i_totals["gain_or_loss"]
        assert s.long_term_gain_loss == form.part_ii_totals["gain_or_loss"]
        assert all(r.gain_or_loss == r.proceeds - r.cost_basis + r.adjustment for r in form.part_i + form.part_ii)
        assert all((r.code == "W") == (r.adjustment > 0) for r in form.part_i + form.part_ii)
    assert s.total_dividends == s.qualified_dividends + s.ordinary_dividends > Decimal(0)
