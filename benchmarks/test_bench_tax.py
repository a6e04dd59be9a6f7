"""pytest-benchmark timings of quantcore.tax on small inputs (CI runs one round)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers_tax import make_transactions

from quantcore.tax import form_8949, match_lots, tax_summary


@pytest.fixture(scope="module")
def transactions():
    return make_transactions(20_000, 100)


@pytest.mark.parametrize("method", ["fifo", "hifo", "average"])
def test_bench_match_lots(benchmark, transactions, method: str) -> None:
    ledger = benchmark(match_lots, transactions, method=method)
    assert ledger.realized.size > 0


def test_bench_reports(benchmark, transactions) -> None:
    ledger = match_lots(transactions)
    year = int(transactions["date"].iloc[-1].year)
    form = benchmark(form_8949, ledger, year)
    assert tax_summary(ledger, year).net_capital_gain_loss == form.part_i_totals["gain_or_loss"] + form.part_ii_totals["gain_or_loss"]
