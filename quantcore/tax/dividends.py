"""Dividends: qualified or ordinary, by the holding period of the shares that earned them.

A dividend row's amount is ``quantity x price`` (shares x dividend per share).
Its qualified part is found from the holding intervals of all shares of the
symbol (:func:`quantcore._kernels.tax.qualified_dividends_nb`):

* the shares *entitled* are those bought before the ex-dividend date and not
  sold before it;
* of those, a share qualifies when held **more than 60 days** (at least 61) of
  the 121-day window that starts 60 days before the ex-dividend date, counting
  the day of disposal but not the day of acquisition (Publication 550,
  "Qualified Dividends", holding period);
* qualified amount = amount x qualifying shares / entitled shares, rounded
  half-up at 1e-8; with no recorded entitled shares the dividend is ordinary.

Approximations, documented: the ex-dividend date is the ``ex_date`` column, or
the dividend's own date when absent (brokers pay after the ex-date, so a given
``ex_date`` is more accurate); the original purchase date is used (a wash
sale's holding-period tacking is not applied); days on which the risk of loss
was diminished (puts, short sales) are not subtracted; preferred-stock 91/181
day rules are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

import numpy as np

from quantcore._kernels.tax_reports import sum_by_code_nb
from quantcore.tax.money import cents

if TYPE_CHECKING:
    from quantcore.tax.lots import LotLedger

__all__ = ["DividendIncome", "dividend_income", "year_bounds"]

_EPOCH = np.datetime64("1970-01-01", "D")


def year_bounds(year: int) -> tuple[int, int]:
    """First and last day number of a calendar year.

    Examples
    --------
    >>> year_bounds(1970)
    (0, 364)
    """
    if isinstance(year, bool) or not isinstance(year, (int, np.integer)):
        raise ValueError(f"year must be an integer, got {year!r}")
    first = int((np.datetime64(f"{int(year):04d}-01-01", "D") - _EPOCH).astype(np.int64))
    last = int((np.datetime64(f"{int(year):04d}-12-31", "D") - _EPOCH).astype(np.int64))
    return first, last


@dataclass(frozen=True)
class DividendIncome:
    """Dividend totals of one year in cents; each total is the sum of the rounded rows."""

    qualified_dividends: Decimal
    ordinary_dividends: Decimal  # the non-qualified part
    total_dividends: Decimal


def dividend_income(ledger: LotLedger, year: int) -> DividendIncome:
    """Qualified, ordinary (non-qualified) and total dividends paid in ``year``.

    Parameters
    ----------
    ledger : LotLedger
        From :func:`quantcore.tax.match_lots`.
    year : int
        Calendar year of the dividend's payment date.

    Returns
    -------
    DividendIncome
        Each row's amount and qualified part are rounded half-up to cents, the
        ordinary part is their difference, and the totals are sums of rows.

    Examples
    --------
    >>> import pandas as pd
    >>> from quantcore.tax import match_lots
    >>> tx = pd.DataFrame({"symbol": ["X", "X"], "date": ["2025-01-02", "2025-06-02"],
    ...                    "type": ["buy", "dividend"], "quantity": [10, 10], "price": [50, 0.255]})
    >>> dividend_income(match_lots(tx), 2025)
    DividendIncome(qualified_dividends=Decimal('2.55'), ordinary_dividends=Decimal('0.00'), total_dividends=Decimal('2.55'))
    """
    first, last = year_bounds(year)
    rows = ledger.dividends[(ledger.dividends["date"] >= first) & (ledger.dividends["date"] <= last)]
    one = np.zeros(rows.size, dtype=np.int64)
    total = int(sum_by_code_nb(one, cents(rows["amount"]), 1)[0])
    qualified = int(sum_by_code_nb(one, cents(rows["qualified"]), 1)[0])
    return DividendIncome(
        Decimal(qualified).scaleb(-2), Decimal(total - qualified).scaleb(-2), Decimal(total).scaleb(-2)
    )
