"""Tax rates, capital-loss netting with the $3,000 limit and carry-forward, and ``tax_summary``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import numpy as np
import pandas as pd

from quantcore._kernels.tax_reports import SUM_LIMIT, yearly_gains_nb
from quantcore._validation import read_only
from quantcore.tax.dividends import dividend_income, year_bounds
from quantcore.tax.lots import LotLedger, LotMethod, as_ledger

__all__ = [
    "NIIT_RATE",
    "CapitalLossNetting",
    "TaxRates",
    "TaxSummary",
    "YearlyGains",
    "net_capital_gains",
    "netting_for",
    "scan_realized",
    "tax_summary",
    "yearly_gains",
]

#: Net investment income tax rate (IRC 1411).
NIIT_RATE = Decimal("0.038")
_CENT = Decimal("0.01")
_ZERO = Decimal("0.00")


def _rate(value: Any, name: str) -> Decimal:
    try:
        d = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not d.is_finite() or d < 0 or d > 1:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return d


@dataclass(frozen=True)
class TaxRates:
    """Flat marginal rates for the estimate.

    Attributes
    ----------
    ordinary_rate : Decimal
        Short-term gains, non-qualified dividends and the capital-loss
        deduction against ordinary income (default 0.24).
    long_term_rate : Decimal
        Long-term gains and qualified dividends (default 0.15).
    niit : bool
        Add the 3.8% net investment income tax on net gains and dividends.
    loss_limit : Decimal
        Net capital loss deductible against ordinary income per year
        (3,000; 1,500 married filing separately).
    """

    ordinary_rate: Decimal = field(default=Decimal("0.24"))
    long_term_rate: Decimal = field(default=Decimal("0.15"))
    niit: bool = False
    loss_limit: Decimal = field(default=Decimal("3000"))

    def __post_init__(self) -> None:
        object.__setattr__(self, "ordinary_rate", _rate(self.ordinary_rate, "ordinary_rate"))
        object.__setattr__(self, "long_term_rate", _rate(self.long_term_rate, "long_term_rate"))
        try:
            limit = Decimal(str(self.loss_limit))
        except (InvalidOperation, ValueError):
            limit = Decimal(-1)
        if not limit.is_finite() or limit < 0:
            raise ValueError(f"loss_limit must be a number >= 0, got {self.loss_limit!r}")
        object.__setattr__(self, "loss_limit", limit)
        if not isinstance(self.niit, bool):
            raise ValueError(f"niit must be a bool, got {self.niit!r}")

    @property
    def niit_rate(self) -> Decimal:
        """3.8% when ``niit`` is set, else 0."""
        return NIIT_RATE if self.niit else Decimal(0)


@dataclass(frozen=True)
class CapitalLossNetting:
    """One year of Schedule D netting (all in dollars, losses negative).

    ``short_term``/``long_term`` are after prior-year carryovers and netting of
    one term against the other; ``deduction`` is the loss taken against
    ordinary income (>= 0); the carryforwards (>= 0) go to next year keeping
    their character.
    """

    short_term: Decimal
    long_term: Decimal
    deduction: Decimal
    short_term_carryforward: Decimal
    long_term_carryforward: Decimal


def net_capital_gains(
    short_term: Decimal,
    long_term: Decimal,
    *,
    short_term_carryover: Decimal = Decimal(0),
    long_term_carryover: Decimal = Decimal(0),
    loss_limit: Decimal = Decimal(3000),
) -> CapitalLossNetting:
    """Net one year's gains with last year's carryovers and apply the loss limit.

    Parameters
    ----------
    short_term, long_term : Decimal
        The year's net short- and long-term gain (negative for a loss).
    short_term_carryover, long_term_carryover : Decimal
        Losses carried in from last year, as positive numbers.
    loss_limit : Decimal
        Maximum deduction against ordinary income.

    Returns
    -------
    CapitalLossNetting

    Notes
    -----
    With ``st = short_term - st_carry`` and ``lt = long_term - lt_carry``: a
    loss in one term first offsets a gain in the other. If the combined
    ``st + lt`` is a loss, ``min(limit, -(st + lt))`` is deducted, taken from
    the short-term loss first (Publication 550, "Capital Losses"; Schedule D
    capital loss carryover worksheet, simplified to ignore taxable income).

    Examples
    --------
    >>> r = net_capital_gains(Decimal("-5000"), Decimal("1000"))
    >>> r.deduction, r.short_term_carryforward, r.long_term_carryforward
    (Decimal('3000'), Decimal('1000'), Decimal('0'))
    """
    st = short_term - short_term_carryover
    lt = long_term - long_term_carryover
    zero = Decimal(0)
    if st < 0 <= lt:
        st, lt = min(st + lt, zero), max(st + lt, zero)
    elif lt < 0 <= st:
        st, lt = max(st + lt, zero), min(st + lt, zero)
    total = st + lt
    if total >= 0:
        return CapitalLossNetting(st, lt, zero, zero, zero)
    deduction = min(loss_limit, -total)
    from_st = min(deduction, -st) if st < 0 else zero
    from_lt = deduction - from_st
    return CapitalLossNetting(st, lt, deduction, -(st + from_st), -(lt + from_lt))


#: The realized gains of each sale year in dollars: ``{year: (short_term, long_term)}``.
YearlyGains = dict[int, tuple[Decimal, Decimal]]


def scan_realized(ledger: LotLedger, year: int) -> tuple[YearlyGains | None, np.ndarray]:
    """:func:`yearly_gains` and where ``year``'s pieces are, in one pass over the pieces.

    Returns the gains (``None`` when their sums would leave the int64 range: ask
    :func:`yearly_gains`, which raises) and the window ``(lo, hi, short, long)`` of
    :func:`~quantcore._kernels.tax_reports.yearly_gains_nb`.
    """
    first, last = year_bounds(year)
    r = ledger.realized
    # the record's fields as strided read-only views: one pass over the records, no copies,
    # one compiled kernel for a cached ledger and a fresh one
    sold, proceeds, basis, disallowed, long_term = (
        read_only(r[f]) for f in ("sold", "proceeds", "basis", "disallowed", "long_term")
    )
    years, st, lt, count, window, size = yearly_gains_nb(sold, proceeds, basis, disallowed, long_term, first, last)
    if size >= SUM_LIMIT:
        return None, window
    at = count > 0
    gains = {
        int(y): (Decimal(int(a)).scaleb(-2), Decimal(int(b)).scaleb(-2))
        for y, a, b in zip(years[at].tolist(), st[at].tolist(), lt[at].tolist(), strict=True)
    }
    return gains, window


def yearly_gains(ledger: LotLedger) -> YearlyGains:
    """Short- and long-term gain per sale year, each the sum of its Form 8949 rows.

    A row's gain is ``cents(proceeds) - cents(basis) + cents(adjustment)``; the sums
    are one kernel pass over the realized pieces (:func:`yearly_gains_nb`). Years with
    sales only. Raises ``OverflowError`` when a sum would leave the int64 range.
    """
    gains, _ = scan_realized(ledger, 1970)
    if gains is None:
        raise OverflowError("tax kernel: yearly gains out of the int64 range")
    return gains


@dataclass(frozen=True)
class TaxSummary:
    """Tax figures of one year, in dollars rounded to cents (the service's field names),
    with Schedule D's signs: a loss, a carryover in, the deduction and a carryforward
    are negative.

    Attributes
    ----------
    short_term_gain_loss, long_term_gain_loss
        The year's own realized results: the Form 8949 Part I and Part II totals of
        column (h), Schedule D lines 1b-3 and 8b-10 (sums of rounded rows).
    net_capital_gain_loss
        Their sum: the year's realized gain or loss, without carryovers (Schedule
        D's line 16 includes them: :attr:`ScheduleD.combined_net_gain_loss`).
    short_term_carryover, long_term_carryover
        Losses carried in from earlier years, negative: Schedule D lines 6 and 14.
    capital_loss_deduction
        The net capital loss deducted this year, negative: Schedule D line 21.
    short_term_carryforward, long_term_carryforward
        Losses carried to next year, negative (the Capital Loss Carryover
        Worksheet's lines 8 and 13: next year's lines 6 and 14).
    qualified_dividends, ordinary_dividends, total_dividends
        Form 1099-DIV box 1b, box 1a - box 1b (the non-qualified part), box 1a.
    estimated_tax_liability
        May be negative (a saving against other ordinary income).
    """

    tax_year: int
    short_term_gain_loss: Decimal
    long_term_gain_loss: Decimal
    net_capital_gain_loss: Decimal
    qualified_dividends: Decimal
    ordinary_dividends: Decimal
    total_dividends: Decimal
    estimated_tax_liability: Decimal
    short_term_carryover: Decimal
    long_term_carryover: Decimal
    capital_loss_deduction: Decimal
    short_term_carryforward: Decimal
    long_term_carryforward: Decimal

    def capital_gains(self) -> dict[str, Decimal]:
        """The ``capital_gains`` object of the service's tax summary."""
        return {
            "short_term_gain_loss": self.short_term_gain_loss,
            "long_term_gain_loss": self.long_term_gain_loss,
            "net_capital_gain_loss": self.net_capital_gain_loss,
        }

    def dividend_income(self) -> dict[str, Decimal]:
        """The ``dividend_income`` object of the service's tax summary."""
        return {
            "qualified_dividends": self.qualified_dividends,
            "ordinary_dividends": self.ordinary_dividends,
            "total_dividends": self.total_dividends,
        }


def netting_for(
    gains: Mapping[int, tuple[Decimal, Decimal]], year: int, limit: Decimal
) -> tuple[Decimal, Decimal, CapitalLossNetting]:
    """Schedule D's netting of ``year``, carryovers included: the short- and long-term losses
    carried in (positive amounts) and :func:`net_capital_gains` of the year, from the
    realized ``gains`` of each year (:func:`yearly_gains`), netted year by year from the first."""
    st_carry = lt_carry = _ZERO
    first = min([*gains, year])
    net = net_capital_gains(_ZERO, _ZERO, loss_limit=limit)
    for y in range(first, year + 1):
        st_in, lt_in = st_carry, lt_carry
        st, lt = gains.get(y, (_ZERO, _ZERO))
        net = net_capital_gains(st, lt, short_term_carryover=st_in, long_term_carryover=lt_in, loss_limit=limit)
        st_carry, lt_carry = net.short_term_carryforward, net.long_term_carryforward
    return st_in, lt_in, net


def tax_summary(
    transactions: pd.DataFrame | LotLedger,
    year: int,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    rates: TaxRates | None = None,
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
    gains: Mapping[int, tuple[Decimal, Decimal]] | None = None,
) -> TaxSummary:
    """Capital gains, dividends and an estimated tax for one calendar year.

    Parameters
    ----------
    transactions : DataFrame or LotLedger
        A transaction table (see :func:`quantcore.tax.match_lots`) or its ledger.
    year : int
        Tax year.
    method, wash_sales, substantially_identical
        Passed to :func:`~quantcore.tax.match_lots` for a table.
    rates : TaxRates, optional
        Defaults to ``TaxRates()``.
    gains : mapping, optional
        The ledger's :func:`yearly_gains`, when already summed (a ledger kept per
        processing group, ``quantcore.tax.splice.GroupedLedger``); its realized
        pieces are then not read.

    Returns
    -------
    TaxSummary

    Notes
    -----
    Net capital losses of earlier years carry forward with their character
    (:func:`net_capital_gains`). With the netted ``st``, ``lt``, deduction
    ``D`` and dividends ``q`` (qualified) and ``o`` (ordinary)::

        tax = r_ord (max(st, 0) + o) + r_lt (max(lt, 0) + q)
              + r_niit (max(st, 0) + max(lt, 0) + q + o) - r_ord D

    rounded half-up to cents.

    Examples
    --------
    >>> import pandas as pd
    >>> tx = pd.DataFrame({"symbol": ["X", "X"], "date": ["2024-01-02", "2025-03-03"],
    ...                    "type": ["buy", "sell"], "quantity": [10, 10], "price": [100, 150]})
    >>> s = tax_summary(tx, 2025, rates=TaxRates(long_term_rate="0.15"))
    >>> s.long_term_gain_loss, s.estimated_tax_liability
    (Decimal('500.00'), Decimal('75.00'))
    """
    rates = TaxRates() if rates is None else rates
    if not isinstance(rates, TaxRates):
        raise ValueError(f"rates must be a TaxRates, got {type(rates).__name__}")
    year_bounds(year)  # validates year
    ledger = as_ledger(transactions, method=method, wash_sales=wash_sales, substantially_identical=substantially_identical)
    gains = yearly_gains(ledger) if gains is None else gains
    st_in, lt_in, net = netting_for(gains, int(year), rates.loss_limit)
    st, lt = gains.get(int(year), (_ZERO, _ZERO))
    div = dividend_income(ledger, int(year))
    st_tax, lt_tax = max(net.short_term, Decimal(0)), max(net.long_term, Decimal(0))
    tax = (
        rates.ordinary_rate * (st_tax + div.ordinary_dividends)
        + rates.long_term_rate * (lt_tax + div.qualified_dividends)
        + rates.niit_rate * (st_tax + lt_tax + div.total_dividends)
        - rates.ordinary_rate * net.deduction
    )

    def c(x: Decimal) -> Decimal:
        return x.quantize(_CENT, rounding=ROUND_HALF_UP) + 0  # + 0: no negative zero

    return TaxSummary(
        tax_year=int(year),
        short_term_gain_loss=c(st),
        long_term_gain_loss=c(lt),
        net_capital_gain_loss=c(st + lt),
        qualified_dividends=div.qualified_dividends,
        ordinary_dividends=div.ordinary_dividends,
        total_dividends=div.total_dividends,
        estimated_tax_liability=c(tax),
        short_term_carryover=c(-st_in),
        long_term_carryover=c(-lt_in),
        capital_loss_deduction=c(-net.deduction),
        short_term_carryforward=c(-net.short_term_carryforward),
        long_term_carryforward=c(-net.long_term_carryforward),
    )
