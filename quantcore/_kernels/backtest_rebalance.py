"""Target-weight rebalancing kernel: one cash pool, long-only, fills at the close.

Orders go through the order engine's fill rules (:mod:`quantcore._kernels.backtest_orders`):
buys size with :func:`order_units_nb` (a cash amount, fees included) and debit with
:func:`open_position_nb`; sells credit with :func:`close_position_nb` on the units
sold. What is particular to a rebalance is only how many units: the amount that
moves each asset's value to its target share of the pre-trade equity.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._kernels.backtest_orders import (
    SIZE_AMOUNT,
    close_position_nb,
    entry_fill_nb,
    open_position_nb,
    order_units_nb,
)

__all__ = ["rebalance_nb"]


@njit(cache=True)
def rebalance_nb(
    close: np.ndarray,
    targets: np.ndarray,
    candidate: np.ndarray,
    threshold: float,
    init_cash: float,
    fees: float,
    slippage: float,
    integer_shares: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Rebalance ``k`` assets to target weights on candidate bars.

    Parameters
    ----------
    close : (n, k) array
        Prices (NaN: no price; the asset is then neither traded nor re-marked).
    targets : (n, k) array
        Target weight per bar and asset (the weights in force at that bar).
    candidate : (n,) bool array
        Bars on which a rebalance may happen.
    threshold : float
        Negative: every candidate trades. Otherwise a candidate after the first
        trade rebalances only when some ``|value_j / equity - target_j|`` exceeds it.
    init_cash, fees, slippage : float
    integer_shares : bool
        Buys round down, sells round up (capped at the units held).

    Returns
    -------
    equity, cash : (n,) arrays
    positions : (n, k) array of units held at each close
    traded : (n,) array, value traded at the close prices (both sides)
    costs : (n,) array, fees plus slippage (units times the fill's distance to the close)
    n_orders : int

    Notes
    -----
    At a rebalance, with ``V`` the equity and ``v_j`` the value of asset ``j`` at
    the close, each asset trades the amount ``a_j = w_j V - v_j``, fees included:
    sells first (raising ``-a_j`` net of fees and slippage, so ``a_j / (p (1 - s)
    (1 - f))`` units; all units when ``w_j = 0``), then buys (spending ``a_j``).
    Cash ends at ``(1 - sum w) V``; fees come out of the asset traded.
    """
    n, k = close.shape
    equity = np.empty(n)
    cash_out = np.empty(n)
    positions = np.zeros((n, k))
    traded = np.zeros(n)
    costs = np.zeros(n)
    pos = np.zeros(k)
    mark = np.full(k, np.nan)
    amount = np.zeros(k)
    cash = init_cash
    n_orders = 0
    started = False
    for t in range(n):
        eq = cash
        for j in range(k):
            c = close[t, j]
            if np.isfinite(c):
                mark[j] = c
            if pos[j] != 0.0:
                eq += pos[j] * mark[j]
        if candidate[t] and eq > 0.0:
            trade = True
            if started and threshold >= 0.0:
                trade = False
                for j in range(k):
                    v = pos[j] * mark[j] if pos[j] != 0.0 else 0.0
                    if abs(v / eq - targets[t, j]) > threshold:
                        trade = True
                        break
            if trade:
                started = True
                for j in range(k):
                    p = close[t, j]
                    v = pos[j] * mark[j] if pos[j] != 0.0 else 0.0
                    amount[j] = targets[t, j] * eq - v if np.isfinite(p) else 0.0
                for j in range(k):  # sells
                    if amount[j] >= 0.0 or pos[j] == 0.0:
                        continue
                    p = close[t, j]
                    fill = entry_fill_nb(p, -1, slippage)
                    if targets[t, j] == 0.0:
                        units = pos[j]
                    else:
                        units = -amount[j] / (fill * (1.0 - fees))
                        if integer_shares:
                            units = np.ceil(units)
                        units = min(units, pos[j])
                    if units > 0.0:
                        cash, _pnl, fill, fee = close_position_nb(
                            cash, units, 1, 0.0, 0.0, p, fees, slippage
                        )
                        pos[j] -= units
                        traded[t] += units * p
                        costs[t] += fee + units * (p - fill)
                        n_orders += 1
                for j in range(k):  # buys
                    if amount[j] <= 0.0:
                        continue
                    p = close[t, j]
                    fill = entry_fill_nb(p, 1, slippage)
                    units = order_units_nb(
                        SIZE_AMOUNT, amount[j], cash, eq, 1.0, fill, fees, integer_shares
                    )
                    if units > 0.0:
                        cash, fee = open_position_nb(cash, units, fill, fees)
                        pos[j] += units
                        traded[t] += units * p
                        costs[t] += fee + units * (fill - p)
                        n_orders += 1
                eq = cash
                for j in range(k):
                    if pos[j] != 0.0:
                        eq += pos[j] * mark[j]
        for j in range(k):
            positions[t, j] = pos[j]
        equity[t] = eq
        cash_out[t] = cash
    return equity, cash_out, positions, traded, costs, n_orders
