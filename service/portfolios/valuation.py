"""Mark-to-market of positions, vectorized over all positions of many portfolios.

For position *i* with quantity :math:`q_i`, cost basis :math:`C_i`, last price
:math:`p_i` and previous close :math:`p_i - \\Delta_i`:

* ``current_value``  :math:`V_i = q_i p_i`
* ``unrealized_gain_loss`` :math:`G_i = V_i - C_i`, percent :math:`100\\, G_i / C_i`
* ``daily_change`` of portfolio *k*: :math:`D_k = \\sum_{i \\in k} q_i \\Delta_i`,
  percent :math:`100\\, D_k / (T_k - D_k)` where :math:`T_k = \\sum_{i \\in k} V_i`.

Positions without a price count as zero value (their fields are ``null``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["PortfolioTotals", "PositionMarks", "mark_positions", "portfolio_totals"]

F64 = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PositionMarks:
    value: F64
    gain: F64
    gain_percent: F64
    daily_change: F64


@dataclass(frozen=True, slots=True)
class PortfolioTotals:
    total_value: F64
    daily_change: F64
    daily_change_percent: F64
    position_count: NDArray[np.int64]


def mark_positions(quantity: F64, cost_basis: F64, price: F64, change: F64) -> PositionMarks:
    """Value, unrealized gain (and percent of cost) and today's change of each position."""
    value = quantity * price
    gain = value - cost_basis
    with np.errstate(divide="ignore", invalid="ignore"):
        gain_percent = np.where(cost_basis > 0, gain / cost_basis * 100.0, np.nan)
    return PositionMarks(value, gain, gain_percent, quantity * change)


def portfolio_totals(
    group: NDArray[np.int64], n_groups: int, marks: PositionMarks
) -> PortfolioTotals:
    """Sum position marks per portfolio (``group[i]`` is position *i*'s portfolio index)."""
    value = np.nan_to_num(marks.value)
    change = np.nan_to_num(marks.daily_change)
    total = np.bincount(group, weights=value, minlength=n_groups).astype(np.float64)
    daily = np.bincount(group, weights=change, minlength=n_groups).astype(np.float64)
    count = np.bincount(group, minlength=n_groups).astype(np.int64)
    base = total - daily
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.where(base > 0, daily / base * 100.0, 0.0)
    return PortfolioTotals(total, daily, pct, count)
