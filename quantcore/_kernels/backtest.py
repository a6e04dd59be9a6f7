"""Signal backtest kernels: order fills, the multi-asset simulation loop and online metrics.

The helpers below are the single definition of every fill, cash and metric update;
:func:`simulate_nb` (the engine) and the fused sweep kernels in
:mod:`quantcore._kernels.sweep` both call them, so a sweep row equals a single run
with the same parameters operation for operation.

Cash model: an entry of ``size`` units at fill price ``f`` debits ``size * f`` plus
the fee ``size * f * fees`` from cash, long or short (a short's proceeds are held as
collateral). A position is worth ``size * p`` (long) or ``size * (2 f - p)`` (short)
at price ``p``; equity is cash plus the positions' worth.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "DIRECTION_BOTH",
    "DIRECTION_LONG",
    "DIRECTION_SHORT",
    "N_STATS",
    "STAT_NAMES",
    "close_position_nb",
    "equity_stats_nb",
    "finalize_stats_nb",
    "mark_value_nb",
    "open_position_nb",
    "simulate_nb",
    "stats_step_nb",
]

#: ``direction`` codes: entries open longs, exits close them.
DIRECTION_LONG = 0
#: entries open shorts, exits cover them.
DIRECTION_SHORT = 1
#: entries go long and exits go short, reversing an open position.
DIRECTION_BOTH = 2

#: Columns of a metrics row, in order (see :func:`finalize_stats_nb`).
STAT_NAMES = (
    "total_return",
    "annualized_return",
    "sharpe_ratio",
    "sortino_ratio",
    "max_drawdown",
    "win_rate",
    "total_trades",
    "profit_factor",
    "exposure",
    "final_equity",
)
N_STATS = len(STAT_NAMES)


@njit(cache=True)
def open_position_nb(
    cash: float,
    budget: float,
    price: float,
    side: int,
    fees: float,
    slippage: float,
    integer_shares: bool,
) -> tuple[float, float, float, float]:
    """Open ``side`` (+1 long, -1 short) spending at most ``budget`` including fees.

    Returns ``(cash, size, fill, fee)``; ``size == 0`` when nothing can be bought.
    """
    fill = price * (1.0 + slippage) if side > 0 else price * (1.0 - slippage)
    if not budget > 0.0 or not fill > 0.0:
        return cash, 0.0, fill, 0.0
    size = budget / (fill * (1.0 + fees))
    if integer_shares:
        size = np.floor(size)
        if size <= 0.0:
            return cash, 0.0, fill, 0.0
    value = size * fill
    fee = value * fees
    return cash - (value + fee), size, fill, fee


@njit(cache=True)
def mark_value_nb(size: float, side: int, entry_fill: float, price: float) -> float:
    """Worth of a position at ``price``: ``size * price`` long, ``size * (2 f - price)`` short."""
    if side > 0:
        return size * price
    return size * (2.0 * entry_fill - price)


@njit(cache=True)
def close_position_nb(
    cash: float,
    size: float,
    side: int,
    entry_fill: float,
    entry_fee: float,
    price: float,
    fees: float,
    slippage: float,
) -> tuple[float, float, float, float]:
    """Close a position at ``price`` moved against the trader by ``slippage``.

    Returns ``(cash, pnl, fill, fee)``; ``pnl`` is net of the entry and exit fees.
    """
    fill = price * (1.0 - slippage) if side > 0 else price * (1.0 + slippage)
    value = size * fill
    fee = value * fees
    cash = cash + mark_value_nb(size, side, entry_fill, fill) - fee
    pnl = side * (value - size * entry_fill) - entry_fee - fee
    return cash, pnl, fill, fee


@njit(cache=True)
def stats_step_nb(
    equity: float,
    prev: float,
    peak: float,
    trough: float,
    max_dd: float,
    sum_r: float,
    sum_r2: float,
    sum_down2: float,
) -> tuple[float, float, float, float, float, float]:
    """Fold one bar's equity into the running return sums and drawdown state.

    ``r = equity / prev - 1`` feeds the sums (skipped when the equity did not
    move: r is then exactly 0). The drawdown keeps the lowest equity since the
    running peak and divides only when a new peak closes an episode:
    ``min(e / peak) == min(e) / peak`` exactly, rounding being monotone.
    Returns ``(peak, trough, max_dd, sum_r, sum_r2, sum_down2)``.
    """
    if equity != prev:
        r = equity / prev - 1.0
        sum_r += r
        sum_r2 += r * r
        d = min(r, 0.0)  # branch-free: the sign of r is a coin flip for the predictor
        sum_down2 += d * d
        if equity > peak:
            dd = trough / peak - 1.0
            if dd < max_dd:
                max_dd = dd
            peak = equity
            trough = equity
        elif equity < trough:
            trough = equity
    return peak, trough, max_dd, sum_r, sum_r2, sum_down2


@njit(cache=True)
def finalize_stats_nb(
    out: np.ndarray,
    init_cash: float,
    final_equity: float,
    n: int,
    sum_r: float,
    sum_r2: float,
    sum_down2: float,
    peak: float,
    trough: float,
    max_dd: float,
    n_trades: int,
    n_closed: int,
    n_wins: int,
    gross_profit: float,
    gross_loss: float,
    exposure_bars: int,
    periods_per_year: float,
) -> None:
    """Write one metrics row (order of :data:`STAT_NAMES`) into ``out``.

    Degenerate cases give NaN: no bars, n < 2 or zero variance (Sharpe), no
    downside (Sortino), no closed trade (win rate), no losing trade (profit factor).
    """
    nan = np.nan
    total = final_equity / init_cash - 1.0
    out[0] = total
    if n > 0 and final_equity >= 0.0:
        out[1] = (final_equity / init_cash) ** (periods_per_year / n) - 1.0
    else:
        out[1] = nan
    mean = sum_r / n if n > 0 else nan
    var = (sum_r2 - sum_r * mean) / (n - 1) if n > 1 else nan
    out[2] = mean / np.sqrt(var) * np.sqrt(periods_per_year) if var > 0.0 else nan
    down = np.sqrt(sum_down2 / n) * np.sqrt(periods_per_year) if n > 0 else nan
    out[3] = mean * periods_per_year / down if down > 0.0 else nan
    dd = trough / peak - 1.0
    out[4] = min(max_dd, dd) if n > 0 else nan
    out[5] = n_wins / n_closed if n_closed > 0 else nan
    out[6] = n_trades
    out[7] = gross_profit / gross_loss if gross_loss > 0.0 else nan
    out[8] = exposure_bars / n if n > 0 else nan
    out[9] = final_equity


@njit(cache=True)
def equity_stats_nb(
    equity: np.ndarray,
    exposed: np.ndarray,
    trade_pnl: np.ndarray,
    trade_closed: np.ndarray,
    init_cash: float,
    periods_per_year: float,
) -> np.ndarray:
    """Metrics row of one equity curve, folded bar by bar like the fused sweeps."""
    out = np.empty(N_STATS)
    peak = init_cash
    trough = init_cash
    max_dd = 0.0
    sum_r = 0.0
    sum_r2 = 0.0
    sum_down2 = 0.0
    prev = init_cash
    n_exposed = 0
    for t in range(equity.shape[0]):
        peak, trough, max_dd, sum_r, sum_r2, sum_down2 = stats_step_nb(
            equity[t], prev, peak, trough, max_dd, sum_r, sum_r2, sum_down2
        )
        prev = equity[t]
        if exposed[t]:
            n_exposed += 1
    n_closed = 0
    n_wins = 0
    gross_profit = 0.0
    gross_loss = 0.0
    for i in range(trade_pnl.shape[0]):
        if trade_closed[i]:
            n_closed += 1
            pnl = trade_pnl[i]
            if pnl > 0.0:
                n_wins += 1
                gross_profit += pnl
            elif pnl < 0.0:
                gross_loss -= pnl
    final = equity[-1] if equity.shape[0] > 0 else init_cash
    finalize_stats_nb(
        out, init_cash, final, equity.shape[0], sum_r, sum_r2, sum_down2, peak, trough, max_dd,
        trade_pnl.shape[0], n_closed, n_wins, gross_profit, gross_loss, n_exposed,
        periods_per_year,
    )  # fmt: skip
    return out


@njit(cache=True)
def _write_trade(
    trades: np.ndarray,
    i: int,
    column: int,
    side: int,
    status: int,
    entry_idx: int,
    exit_idx: int,
    size: float,
    entry_fill: float,
    exit_price: float,
    entry_fee: float,
    exit_fee: float,
    pnl: float,
) -> None:
    rec = trades[i]
    rec["column"] = column
    rec["direction"] = side
    rec["status"] = status
    rec["entry_idx"] = entry_idx
    rec["exit_idx"] = exit_idx
    rec["size"] = size
    rec["entry_price"] = entry_fill
    rec["exit_price"] = exit_price
    rec["entry_fees"] = entry_fee
    rec["exit_fees"] = exit_fee
    rec["pnl"] = pnl
    rec["ret"] = pnl / (size * entry_fill)


@njit(cache=True)
def simulate_nb(
    close: np.ndarray,
    fill: np.ndarray,
    entries: np.ndarray,
    exits: np.ndarray,
    init_cash: float,
    fees: float,
    slippage: float,
    max_size: float,
    direction: int,
    integer_shares: bool,
    trades: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Simulate signals on ``k`` assets sharing one cash pool.

    Parameters are (n, k) arrays: ``close`` marks positions, ``fill`` is the price
    an order at bar ``t`` fills at (already aligned: for next-open fills the caller
    shifts the signals by one bar). Each bar first closes (exits, and the closing
    leg of reversals) in column order, then opens in column order with a budget of
    ``min(max_size * equity, cash)``, equity valued at the bar's fill prices. An
    order whose fill price is not finite and positive is ignored. ``trades`` is a
    preallocated ``trade_dt`` array large enough for every entry signal.

    Returns ``(equity, cash, positions, n_trades)``: equity and cash per bar, the
    signed position size per bar and asset, and the number of records written.
    """
    n, k = close.shape
    equity = np.empty(n)
    cash_out = np.empty(n)
    positions = np.zeros((n, k))
    size = np.zeros(k)
    side = np.zeros(k, dtype=np.int64)
    entry_fill = np.zeros(k)
    entry_fee = np.zeros(k)
    entry_idx = np.zeros(k, dtype=np.int64)
    mark = np.full(k, np.nan)
    cash = init_cash
    n_trades = 0
    for t in range(n):
        # phase 1: closes (plain exits and the first leg of reversals)
        for j in range(k):
            if size[j] == 0.0:
                continue
            e = entries[t, j]
            x = exits[t, j]
            p = fill[t, j]
            if e == x or not (np.isfinite(p) and p > 0.0):
                continue
            if direction == DIRECTION_LONG:
                do_close = x
            elif direction == DIRECTION_SHORT:
                do_close = x
            else:
                do_close = (x and side[j] > 0) or (e and side[j] < 0)
            if do_close:
                cash, pnl, xf, xfee = close_position_nb(
                    cash, size[j], side[j], entry_fill[j], entry_fee[j], p, fees, slippage
                )
                _write_trade(
                    trades, n_trades, j, side[j], 1, entry_idx[j], t, size[j],
                    entry_fill[j], xf, entry_fee[j], xfee, pnl,
                )  # fmt: skip
                n_trades += 1
                size[j] = 0.0
                side[j] = 0
        # phase 2: opens, each sized on the equity at this bar's fill prices
        for j in range(k):
            if size[j] != 0.0:
                continue
            e = entries[t, j]
            x = exits[t, j]
            p = fill[t, j]
            if e == x or not (np.isfinite(p) and p > 0.0):
                continue
            if direction == DIRECTION_LONG:
                new_side = 1 if e else 0
            elif direction == DIRECTION_SHORT:
                new_side = -1 if e else 0
            else:
                new_side = 1 if e else -1
            if new_side == 0:
                continue
            eq = cash
            for i in range(k):
                if size[i] != 0.0:
                    q = fill[t, i] if np.isfinite(fill[t, i]) and fill[t, i] > 0.0 else mark[i]
                    eq += mark_value_nb(size[i], side[i], entry_fill[i], q)
            budget = min(max_size * eq, cash)
            cash, q, f, fee = open_position_nb(
                cash, budget, p, new_side, fees, slippage, integer_shares
            )
            if q > 0.0:
                size[j] = q
                side[j] = new_side
                entry_fill[j] = f
                entry_fee[j] = fee
                entry_idx[j] = t
        # mark to market at the close
        eq = cash
        for j in range(k):
            c = close[t, j]
            if np.isfinite(c):
                mark[j] = c
            if size[j] != 0.0:
                eq += mark_value_nb(size[j], side[j], entry_fill[j], mark[j])
                positions[t, j] = side[j] * size[j]
        equity[t] = eq
        cash_out[t] = cash
    for j in range(k):
        if size[j] != 0.0:
            m = mark[j]
            pnl = side[j] * (size[j] * m - size[j] * entry_fill[j]) - entry_fee[j]
            _write_trade(
                trades, n_trades, j, side[j], 0, entry_idx[j], -1, size[j],
                entry_fill[j], m, entry_fee[j], 0.0, pnl,
            )  # fmt: skip
            n_trades += 1
    return equity, cash_out, positions, n_trades
