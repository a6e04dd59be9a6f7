"""Signal backtest kernels: the multi-asset simulation, the one-asset bar step, online metrics.

Every order and fill rule is in :mod:`quantcore._kernels.backtest_orders`. :func:`simulate_nb`
(several assets sharing cash) and :func:`asset_bar_nb` (one asset on its own
capital, the bar step of every sweep kernel) call those rules in the same order,
so a sweep row equals a single run with the same parameters operation for operation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._kernels.backtest_orders import (
    DIRECTION_BOTH,
    DIRECTION_LONG,
    DIRECTION_SHORT,
    EXIT_NONE,
    EXIT_SIGNAL,
    EXIT_TIME,
    N_POS,
    POS_ANCHOR,
    POS_BORROW,
    POS_ENTRY_FEE,
    POS_ENTRY_FILL,
    POS_ENTRY_IDX,
    POS_EXTREME,
    POS_SIDE,
    POS_SIZE,
    borrow_step_nb,
    close_position_nb,
    entry_fill_nb,
    exit_step_nb,
    mark_value_nb,
    open_position_nb,
    order_units_nb,
    signal_action_nb,
)

__all__ = [
    "DIRECTION_BOTH",
    "DIRECTION_LONG",
    "DIRECTION_SHORT",
    "N_RUN",
    "N_STATS",
    "STAT_NAMES",
    "asset_bar_nb",
    "equity_stats_nb",
    "finalize_stats_nb",
    "finish_run_nb",
    "new_run_nb",
    "simulate_nb",
    "stats_step_nb",
]

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
    # int(np.int64(0)), not 0: numba would compile finalize_stats_nb once more for the literal
    n_exposed = int(np.int64(0))
    for t in range(equity.shape[0]):
        peak, trough, max_dd, sum_r, sum_r2, sum_down2 = stats_step_nb(
            equity[t], prev, peak, trough, max_dd, sum_r, sum_r2, sum_down2
        )
        prev = equity[t]
        if exposed[t]:
            n_exposed += 1
    n_closed = int(np.int64(0))
    n_wins = int(np.int64(0))
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
    trades: np.ndarray, i: int, column: int, pos: np.ndarray, status: int, exit_idx: int,
    exit_price: float, exit_fee: float, pnl: float, reason: int,
) -> None:  # fmt: skip
    rec = trades[i]
    rec["column"] = column
    rec["direction"] = int(pos[POS_SIDE])
    rec["status"] = status
    rec["entry_idx"] = int(pos[POS_ENTRY_IDX])
    rec["exit_idx"] = exit_idx
    rec["size"] = pos[POS_SIZE]
    rec["entry_price"] = pos[POS_ENTRY_FILL]
    rec["exit_price"] = exit_price
    rec["entry_fees"] = pos[POS_ENTRY_FEE]
    rec["exit_fees"] = exit_fee
    rec["pnl"] = pnl
    rec["ret"] = pnl / (pos[POS_SIZE] * pos[POS_ENTRY_FILL])
    rec["exit_reason"] = reason


# _exit and _enter are inlined into their callers' IR (simulate_nb, asset_bar_nb):
# two kernels less to compile, each around order helpers their callers compile anyway
@njit(cache=True, inline="always")
def _exit(
    pos: np.ndarray, cash: float, price: float, why: int, fees: float, slippage: float
) -> tuple[float, float, float, float]:
    """Close ``pos`` at ``price`` for reason ``why``: ``(cash, pnl, fill, fee)``, borrow included."""
    slip = slippage if why == EXIT_SIGNAL or why == EXIT_TIME else 0.0
    cash, pnl, fill, fee = close_position_nb(
        cash, pos[POS_SIZE], int(pos[POS_SIDE]), pos[POS_ENTRY_FILL], pos[POS_ENTRY_FEE], price,
        fees, slip,
    )  # fmt: skip
    return cash, pnl - pos[POS_BORROW], fill, fee


@njit(cache=True, inline="always")
def _enter(
    pos: np.ndarray, cash: float, equity: float, t: int, p: float, side: int, size_type: int,
    size: float, leverage: float, fees: float, slippage: float, integer_shares: bool,
) -> float:  # fmt: skip
    """Open ``side`` at order price ``p`` if the sizing allows a unit; returns the cash."""
    f = entry_fill_nb(p, side, slippage)
    units = order_units_nb(size_type, size, cash, equity, leverage, f, fees, integer_shares)
    if units > 0.0:
        cash, fee = open_position_nb(cash, units, f, fees)
        pos[POS_SIZE] = units
        pos[POS_SIDE] = side
        pos[POS_ENTRY_FILL] = f
        pos[POS_ENTRY_FEE] = fee
        pos[POS_ENTRY_IDX] = t
        pos[POS_ANCHOR] = p
        pos[POS_EXTREME] = p
        pos[POS_BORROW] = 0.0
    return cash


@njit(cache=True)
def simulate_nb(
    open_: np.ndarray,
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    fill: np.ndarray,
    entries: np.ndarray,
    exits: np.ndarray,
    use_open: bool,
    init_cash: float,
    fees: float,
    slippage: float,
    size_type: int,
    size: float,
    leverage: float,
    borrow_bar: float,
    direction: int,
    integer_shares: bool,
    sl: float,
    tp: float,
    trail: float,
    time_stop: float,
    trades: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Simulate signals on ``k`` assets sharing one cash pool.

    Price arrays are (n, k): ``open_``, ``high``, ``low`` feed the stops (pass the
    closes for close-only data), ``close`` marks positions, ``fill`` is the price an
    order at bar ``t`` fills at (already aligned: for next-open fills the caller
    shifts the signals by one bar and sets ``use_open``). Each bar: shorts pay one
    bar of borrow; then exits (stops and signals, :func:`~quantcore._kernels.backtest_orders.exit_step_nb`)
    in column order; then entries in column order, sized on the equity at this
    bar's fill prices; then the mark at the close. A bar on which a stop or time
    stop closed an asset opens nothing on it. An order whose fill price is not
    finite and positive is ignored. ``trades`` is a preallocated ``trade_dt``
    array large enough for every entry signal; each record's ``exit_reason`` is the
    ``EXIT_*`` code of :mod:`~quantcore._kernels.backtest_orders` that closed it
    (``EXIT_NONE`` for a position still open at the end).

    Returns ``(equity, cash, positions, n_trades)``: equity and cash per bar, the
    signed position size per bar and asset, and the number of records written.
    """
    n, k = close.shape
    equity = np.empty(n)
    cash_out = np.empty(n)
    # np.empty, then a fill: numba compiles each array-constructor spelling (np.zeros,
    # np.full, a dtype) once per process; most kernels share np.empty's float64 one
    positions = np.empty((n, k))
    positions[:] = 0.0
    pos = np.empty((k, N_POS))
    pos[:] = 0.0
    mark = np.empty(k)
    mark[:] = np.nan
    stopped = np.empty(k, dtype=np.bool_)
    stopped[:] = False
    cash = init_cash
    # typed ints, not literals: numba compiles a callee once more for each literal argument
    n_trades = int(np.int64(0))
    flat = int(np.int64(0))
    closed = int(np.int64(1))
    for t in range(n):
        for j in range(k):
            cash = borrow_step_nb(pos[j], cash, t, mark[j], borrow_bar)
        # exits: stops and signals
        for j in range(k):
            stopped[j] = False
            if pos[j, POS_SIZE] == 0.0:
                continue
            price, why = exit_step_nb(
                pos[j], t, open_[t, j], high[t, j], low[t, j], fill[t, j], entries[t, j],
                exits[t, j], use_open, direction, sl, tp, trail, time_stop,
            )  # fmt: skip
            if why != EXIT_NONE:
                cash, pnl, xf, xfee = _exit(pos[j], cash, price, why, fees, slippage)
                _write_trade(trades, n_trades, j, pos[j], closed, t, xf, xfee, pnl, why)
                n_trades += 1
                pos[j, POS_SIZE] = 0.0
                stopped[j] = why != EXIT_SIGNAL
        # entries, each sized on the equity at this bar's fill prices
        for j in range(k):
            if pos[j, POS_SIZE] != 0.0 or stopped[j]:
                continue
            p = fill[t, j]
            if not (np.isfinite(p) and p > 0.0):
                continue
            _, new_side = signal_action_nb(flat, entries[t, j], exits[t, j], direction)
            if new_side == 0:
                continue
            eq = cash
            for i in range(k):
                if pos[i, POS_SIZE] != 0.0:
                    q = fill[t, i] if np.isfinite(fill[t, i]) and fill[t, i] > 0.0 else mark[i]
                    eq += mark_value_nb(pos[i, POS_SIZE], int(pos[i, POS_SIDE]),
                                        pos[i, POS_ENTRY_FILL], q)  # fmt: skip
            cash = _enter(
                pos[j], cash, eq, t, p, new_side, size_type, size, leverage, fees, slippage,
                integer_shares,
            )  # fmt: skip
        # mark to market at the close
        eq = cash
        for j in range(k):
            c = close[t, j]
            if np.isfinite(c):
                mark[j] = c
            if pos[j, POS_SIZE] != 0.0:
                eq += mark_value_nb(pos[j, POS_SIZE], int(pos[j, POS_SIDE]), pos[j, POS_ENTRY_FILL],
                                    mark[j])  # fmt: skip
                positions[t, j] = pos[j, POS_SIDE] * pos[j, POS_SIZE]
        equity[t] = eq
        cash_out[t] = cash
    for j in range(k):
        if pos[j, POS_SIZE] != 0.0:
            m = mark[j]
            s = pos[j, POS_SIZE]
            pnl = pos[j, POS_SIDE] * (s * m - s * pos[j, POS_ENTRY_FILL]) - pos[j, POS_ENTRY_FEE]
            _write_trade(
                trades, n_trades, j, pos[j], flat, int(np.int64(-1)), m, 0.0,
                pnl - pos[j, POS_BORROW], int(np.int64(EXIT_NONE)),
            )  # fmt: skip
            n_trades += 1
    return equity, cash_out, positions, n_trades


# slots of a one-asset run's state (:func:`asset_bar_nb`)
RUN_CASH = 0
RUN_MARK = 1
RUN_PREV = 2  # equity at the previous bar
RUN_PEAK = 3
RUN_TROUGH = 4
RUN_MAX_DD = 5
RUN_SUM_R = 6
RUN_SUM_R2 = 7
RUN_SUM_DOWN2 = 8
RUN_CLOSED = 9
RUN_WINS = 10
RUN_PROFIT = 11
RUN_LOSS = 12
RUN_EXPOSED = 13
N_RUN = 14


@njit(cache=True)
def new_run_nb(init_cash: float) -> tuple[np.ndarray, np.ndarray]:
    """Fresh ``(position, run state)`` arrays of one asset for :func:`asset_bar_nb`."""
    st = np.zeros(N_RUN)
    st[RUN_CASH] = init_cash
    st[RUN_MARK] = np.nan
    st[RUN_PREV] = init_cash
    st[RUN_PEAK] = init_cash
    st[RUN_TROUGH] = init_cash
    return np.zeros(N_POS), st


@njit(cache=True)
def asset_bar_nb(
    pos: np.ndarray, st: np.ndarray, t: int, o: float, h: float, lo: float, c: float, p: float,
    e: bool, x: bool, use_open: bool, direction: int, sl: float, tp: float, trail: float,
    time_stop: float, fees: float, slippage: float, size_type: int, size: float, leverage: float,
    borrow_bar: float, integer_shares: bool,
) -> None:  # fmt: skip
    """One bar of one asset on its own capital: :func:`simulate_nb` with ``k = 1``.

    ``p`` is the bar's order price and ``e, x`` the signals acted on at this bar
    (already shifted for next-open fills). Updates the position ``pos`` and the run
    state ``st`` (cash, mark and the online metrics of :func:`stats_step_nb`).
    """
    cash = borrow_step_nb(pos, st[RUN_CASH], t, st[RUN_MARK], borrow_bar)
    stopped = False
    if pos[POS_SIZE] != 0.0:
        price, why = exit_step_nb(
            pos, t, o, h, lo, p, e, x, use_open, direction, sl, tp, trail, time_stop
        )
        if why != EXIT_NONE:
            cash, pnl, _, _ = _exit(pos, cash, price, why, fees, slippage)
            st[RUN_CLOSED] += 1.0
            if pnl > 0.0:
                st[RUN_WINS] += 1.0
                st[RUN_PROFIT] += pnl
            elif pnl < 0.0:
                st[RUN_LOSS] -= pnl
            pos[POS_SIZE] = 0.0
            stopped = why != EXIT_SIGNAL
    if pos[POS_SIZE] == 0.0 and not stopped and e != x and p == p and p > 0.0:
        _, new_side = signal_action_nb(int(np.int64(0)), e, x, direction)
        if new_side != 0:
            cash = _enter(
                pos, cash, cash, t, p, new_side, size_type, size, leverage, fees, slippage,
                integer_shares,
            )  # fmt: skip
    if c == c:
        st[RUN_MARK] = c
    eq = cash
    if pos[POS_SIZE] != 0.0:
        eq += mark_value_nb(pos[POS_SIZE], int(pos[POS_SIDE]), pos[POS_ENTRY_FILL], st[RUN_MARK])
        st[RUN_EXPOSED] += 1.0
    st[RUN_CASH] = cash
    peak, trough, max_dd, sum_r, sum_r2, sum_down2 = stats_step_nb(
        eq, st[RUN_PREV], st[RUN_PEAK], st[RUN_TROUGH], st[RUN_MAX_DD], st[RUN_SUM_R],
        st[RUN_SUM_R2], st[RUN_SUM_DOWN2],
    )  # fmt: skip
    st[RUN_PEAK] = peak
    st[RUN_TROUGH] = trough
    st[RUN_MAX_DD] = max_dd
    st[RUN_SUM_R] = sum_r
    st[RUN_SUM_R2] = sum_r2
    st[RUN_SUM_DOWN2] = sum_down2
    st[RUN_PREV] = eq


@njit(cache=True)
def finish_run_nb(
    pos: np.ndarray, st: np.ndarray, init_cash: float, n: int, periods_per_year: float,
    out: np.ndarray,
) -> None:  # fmt: skip
    """Write the metrics row of a finished :func:`asset_bar_nb` run into ``out``."""
    n_closed = int(st[RUN_CLOSED])
    n_trades = n_closed + (1 if pos[POS_SIZE] != 0.0 else 0)
    finalize_stats_nb(
        out, init_cash, st[RUN_PREV], n, st[RUN_SUM_R], st[RUN_SUM_R2], st[RUN_SUM_DOWN2],
        st[RUN_PEAK], st[RUN_TROUGH], st[RUN_MAX_DD], n_trades, n_closed, int(st[RUN_WINS]),
        st[RUN_PROFIT], st[RUN_LOSS], int(st[RUN_EXPOSED]), periods_per_year,
    )  # fmt: skip
