"""Portfolio kernels: position marks and per-portfolio totals in base currency."""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._typing import Float64Array1D, Int64Array1D

__all__ = ["mark_nb", "totals_nb"]


@njit(cache=True)
def mark_nb(
    quantity: Float64Array1D,
    cost_basis: Float64Array1D,
    price: Float64Array1D,
    change: Float64Array1D,
    new_quantity: Float64Array1D,
    new_cost: Float64Array1D,
    rate: Float64Array1D,
    previous_rate: Float64Array1D,
) -> tuple[Float64Array1D, Float64Array1D, Float64Array1D, Float64Array1D]:
    """Value, unrealized gain, gain percent and daily change of each position, in base currency.

    Arguments are per position (one row each); see
    :func:`quantcore.portfolio.mark_positions` for their meaning.
    """
    n = quantity.shape[0]
    value = np.empty(n)
    gain = np.empty(n)
    pct = np.empty(n)
    daily = np.empty(n)
    for i in range(n):
        r = rate[i]
        v = quantity[i] * price[i] * r
        cost = cost_basis[i] * r
        value[i] = v
        gain[i] = v - cost
        pct[i] = (v - cost) / cost * 100.0 if cost > 0.0 else np.nan
        # shares bought since the previous close earn price - cost, the rest the change
        # (of price x rate); negative for the shares a reverse split took away
        fresh = min(new_quantity[i], quantity[i])
        # p r - (p - change) r' = change r' + p (r - r'), the second term only when it moved
        moved = change[i] * previous_rate[i]
        if r != previous_rate[i]:
            moved += price[i] * (r - previous_rate[i])
        daily[i] = (quantity[i] - fresh) * moved
        if fresh != 0.0:
            daily[i] += (fresh * price[i] - new_cost[i]) * r
    return value, gain, pct, daily


@njit(cache=True)
def totals_nb(
    group: Int64Array1D,
    n_groups: int,
    value: Float64Array1D,
    daily: Float64Array1D,
    cash: Float64Array1D,
    cash_change: Float64Array1D,
) -> tuple[Float64Array1D, Float64Array1D, Float64Array1D, Int64Array1D]:
    """Per group (portfolio): total value, daily change, change percent and position count.

    See :func:`quantcore.portfolio.portfolio_totals`.
    """
    total = cash.copy()
    change = cash_change.copy()
    count = np.zeros(n_groups, dtype=np.int64)
    for i in range(group.shape[0]):
        g = group[i]
        count[g] += 1
        if not np.isnan(value[i]):
            total[g] += value[i]
        if not np.isnan(daily[i]):
            change[g] += daily[i]
    pct = np.zeros(n_groups)
    for g in range(n_groups):
        base = total[g] - change[g]
        if base > 0.0:
            pct[g] = change[g] / base * 100.0
    return total, change, pct, count
