"""Signals of the built-in strategies, computed block by block from a few scalars of state.

Every built-in strategy's signals are produced by :func:`signal_block_nb` from a
few scalars of state (rolling sums, EMA and Wilder recursions) carried from one
block of :data:`BLOCK` bars to the next, so a sweep never materialises an
indicator or a signal series (:mod:`quantcore._kernels.backtest_sweep`). The
recursions are the indicator kernels' own steps
(:mod:`quantcore._kernels.indicators_ma`: ``sma_step_nb``, ``ema_step_nb``,
``rsi_step_nb``, ``bollinger_step_nb``), so a strategy's averages, RSI and bands
are those of :mod:`quantcore.indicators` to the last bit (numba inlines the
steps into the caller, whose fast-math flags apply: these kernels compile with the
indicators' ``fastmath=CONTRACT``, fused multiply-adds only).
:func:`signals_1d` runs the very same recursion over a whole series (in Python,
calling that strategy's block kernel only, so that a first run compiles only its
own); the public strategies use it, which makes a sweep row identical to a single
run with the same parameters.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._kernels.indicators_base import CONTRACT
from quantcore._kernels.indicators_ma import (
    bollinger_step_nb,
    ema_step_nb,
    rsi_step_nb,
    rsi_sum_step_nb,
    rsi_value_nb,
    sma_step_nb,
)
from quantcore._typing import BoolArray1D, Float64Array1D

__all__ = [
    "BLOCK",
    "N_STATE",
    "STRATEGY_BUY_HOLD",
    "STRATEGY_MEAN_REVERSION",
    "STRATEGY_MOMENTUM",
    "STRATEGY_MOVING_AVERAGE",
    "STRATEGY_RSI",
    "constants_nb",
    "ma_update_nb",
    "signal_block_nb",
    "signals_1d",
]

STRATEGY_BUY_HOLD = 0
STRATEGY_MOVING_AVERAGE = 1  # p0 short window, p1 long window, p2 0 = SMA / 1 = EMA
STRATEGY_MOMENTUM = 2  # p0 window, p1 threshold
STRATEGY_MEAN_REVERSION = 3  # p0 window, p1 num_std
STRATEGY_RSI = 4  # p0 window, p1 oversold, p2 overbought

#: Scalars of indicator state per combination.
N_STATE = 6
#: Bars of signals a sweep computes at a time (two bool buffers of this length per task).
BLOCK = 256


@njit(cache=True, fastmath=CONTRACT)
def constants_nb(strategy: int, p0: float, p1: float) -> Float64Array1D:
    """Per-combination constants of :func:`signal_block_nb`, computed once, not per bar.

    moving_average: ``1 / short, 1 / long, 2 / (short + 1), 2 / (long + 1)`` (the
    EMAs' ``alpha`` in slots 2 and 3); rsi: Wilder's ``(window - 1) / window`` and
    ``1 / window``.
    """
    cst = np.empty(4)  # and a fill: the constructor spelling most kernels share
    cst[:] = 0.0
    if strategy == STRATEGY_MOVING_AVERAGE:
        cst[0] = 1.0 / p0
        cst[1] = 1.0 / p1
        cst[2] = 2.0 / (p0 + 1.0)
        cst[3] = 2.0 / (p1 + 1.0)
    elif strategy == STRATEGY_RSI:
        cst[0] = (p0 - 1.0) / p0
        cst[1] = 1.0 / p0
    return cst


@njit(cache=True, fastmath=CONTRACT)
def ma_update_nb(
    x: Float64Array1D, t: int, i: int, w: int, inv_w: float, alpha: float, ema: bool, acc: float
) -> tuple[float, float]:
    """Advance a moving average of window ``w`` by bar ``t`` (``i`` bars since the first).

    SMA: TA-Lib's running sum (:func:`~quantcore._kernels.indicators_ma.sma_step_nb`;
    ``acc`` holds the ``w - 1`` values before ``t``). EMA: seeded with the SMA of
    the first ``w`` values, then ``acc = (x[t] - acc) * alpha + acc``
    (:func:`~quantcore._kernels.indicators_ma.ema_step_nb`) with
    ``alpha = 2 / (w + 1)``. Returns ``(acc, value)``, value NaN until
    ``i >= w - 1``. ``inv_w`` (``1 / w``) is not used: the mean divides by ``w``,
    as TA-Lib does.
    """
    if ema and i >= w:
        acc = ema_step_nb(acc, x[t], alpha)
        return acc, acc
    if i < w - 1:
        return acc + x[t], np.nan
    acc, value = sma_step_nb(acc, x[t], x[t - w + 1], w)
    if ema:  # i == w - 1: the seed
        return value, value
    return acc, value


@njit(cache=True, fastmath=CONTRACT)
def _ma_block(
    x: Float64Array1D, first: int, t0: int, t1: int, p0: float, p1: float, p2: float,
    cst: Float64Array1D, st: Float64Array1D, ent: BoolArray1D, ext: BoolArray1D,
) -> None:  # fmt: skip
    w_fast = int(p0)
    w_slow = int(p1)
    ema = p2 != 0.0
    a_fast = st[0]
    a_slow = st[1]
    pf = st[2]
    ps = st[3]
    if ema:
        for t in range(t0, t1):
            i = t - first
            a_fast, fast = ma_update_nb(x, t, i, w_fast, cst[0], cst[2], ema, a_fast)
            a_slow, slow = ma_update_nb(x, t, i, w_slow, cst[1], cst[3], ema, a_slow)
            ent[t - t0] = (pf < ps) & (fast > slow)
            ext[t - t0] = (pf > ps) & (fast < slow)
            pf = fast
            ps = slow
    else:  # the SMA branch of ma_update_nb, written out: the sweeps' hot loop
        nan = np.nan
        for t in range(t0, t1):
            i = t - first
            v = x[t]
            if i >= w_fast - 1:
                a_fast, fast = sma_step_nb(a_fast, v, x[t - w_fast + 1], w_fast)
            else:
                a_fast += v
                fast = nan
            if i >= w_slow - 1:
                a_slow, slow = sma_step_nb(a_slow, v, x[t - w_slow + 1], w_slow)
            else:
                a_slow += v
                slow = nan
            ent[t - t0] = (pf < ps) & (fast > slow)
            ext[t - t0] = (pf > ps) & (fast < slow)
            pf = fast
            ps = slow
    st[0] = a_fast
    st[1] = a_slow
    st[2] = pf
    st[3] = ps


@njit(cache=True, fastmath=CONTRACT)
def _momentum_block(
    x: Float64Array1D, first: int, t0: int, t1: int, p0: float, p1: float,
    ent: BoolArray1D, ext: BoolArray1D,
) -> None:  # fmt: skip
    lb = int(p0)
    for t in range(t0, t1):
        if t - first < lb:
            ent[t - t0] = False
            ext[t - t0] = False
        else:
            m = x[t] / x[t - lb] - 1.0
            ent[t - t0] = m > p1
            ext[t - t0] = m < -p1


@njit(cache=True, fastmath=CONTRACT)
def _mean_reversion_block(
    x: Float64Array1D, first: int, t0: int, t1: int, p0: float, p1: float,
    st: Float64Array1D, ent: BoolArray1D, ext: BoolArray1D,
) -> None:  # fmt: skip
    w = int(p0)
    s1 = st[0]
    s2 = st[1]
    for t in range(t0, t1):
        v = x[t]
        if t - first < w - 1:
            s1 += v
            s2 += v * v
            ent[t - t0] = False
            ext[t - t0] = False
            continue
        s1, s2, _, mid, lower = bollinger_step_nb(x, t, w, p1, s1, s2)
        ent[t - t0] = v < lower
        ext[t - t0] = v >= mid
    st[0] = s1
    st[1] = s2


@njit(cache=True, fastmath=CONTRACT)
def _rsi_block(
    x: Float64Array1D, first: int, t0: int, t1: int, p0: float, p1: float, p2: float,
    cst: Float64Array1D, st: Float64Array1D, ent: BoolArray1D, ext: BoolArray1D,
) -> None:  # fmt: skip
    w = int(p0)
    gain = st[0]
    loss = st[1]
    for t in range(t0, t1):
        i = t - first
        ent[t - t0] = False
        ext[t - t0] = False
        if i == 0:
            continue
        d = x[t] - x[t - 1]
        if i <= w:  # the seed: the means of the first ``w`` changes
            gain, loss = rsi_sum_step_nb(gain, loss, d)
            if i < w:
                continue
            gain /= w
            loss /= w
        else:
            gain, loss = rsi_step_nb(gain, loss, d, cst[0], cst[1])
        rsi = rsi_value_nb(gain, loss)
        ent[t - t0] = rsi < p1
        ext[t - t0] = rsi > p2
    st[0] = gain
    st[1] = loss


@njit(cache=True, fastmath=CONTRACT)
def signal_block_nb(
    strategy: int,
    x: Float64Array1D,
    first: int,
    t0: int,
    t1: int,
    p0: float,
    p1: float,
    p2: float,
    cst: Float64Array1D,
    st: Float64Array1D,
    ent: BoolArray1D,
    ext: BoolArray1D,
) -> None:
    """Entry and exit signals of one strategy on bars ``first <= t0 <= t < t1``.

    Writes bar ``t`` to ``ent[t - t0]`` and ``ext[t - t0]``. ``cst`` comes from
    :func:`constants_nb`; ``st`` carries :data:`N_STATE` scalars of indicator
    state from one block to the next (zeros before the first block), so any
    split of the bars into blocks gives the same signals. Definitions
    (``i = t - first``):

    * buy_hold: entry at ``i == 0``, never an exit.
    * moving_average: fast/slow MA; entry when ``fast[t-1] < slow[t-1]`` and
      ``fast[t] > slow[t]``; exit when ``fast[t-1] > slow[t-1]`` and ``fast[t] < slow[t]``.
    * momentum: ``m = x[t] / x[t - window] - 1``; entry ``m > threshold``,
      exit ``m < -threshold``.
    * mean_reversion: Bollinger bands over ``window`` (SMA middle, population
      std; TA-Lib's running sums); entry ``x[t] < mid - num_std * sd``, exit
      ``x[t] >= mid``.
    * rsi: Wilder RSI (TA-Lib); entry ``rsi < oversold``, exit ``rsi > overbought``.
    """
    if strategy == STRATEGY_MOVING_AVERAGE:
        _ma_block(x, first, t0, t1, p0, p1, p2, cst, st, ent, ext)
    elif strategy == STRATEGY_MOMENTUM:
        _momentum_block(x, first, t0, t1, p0, p1, ent, ext)
    elif strategy == STRATEGY_MEAN_REVERSION:
        _mean_reversion_block(x, first, t0, t1, p0, p1, st, ent, ext)
    elif strategy == STRATEGY_RSI:
        _rsi_block(x, first, t0, t1, p0, p1, p2, cst, st, ent, ext)
    else:
        for t in range(t0, t1):
            ent[t - t0] = t == first
            ext[t - t0] = False


def signals_1d(
    strategy: int, x: Float64Array1D, first: int, p0: float, p1: float, p2: float
) -> tuple[BoolArray1D, BoolArray1D]:
    """Entries and exits of one strategy over a whole series (bars before ``first`` are False).

    The recursion of :func:`signal_block_nb` over all bars as one block. Plain
    Python: it calls the strategy's own block kernel, so a first run compiles that
    strategy's recursion only, not all five, and no kernel around it. ``x`` should
    be contiguous, writable float64 (what the sweeps pass: one compiled type).
    """
    n = x.shape[0]
    ent = np.zeros(n, dtype=np.bool_)
    ext = np.zeros(n, dtype=np.bool_)
    if first >= n:
        return ent, ext
    if strategy == STRATEGY_BUY_HOLD:
        ent[first] = True
        return ent, ext
    st = np.zeros(N_STATE)
    e = ent[first:]
    q = ext[first:]
    if strategy == STRATEGY_MOVING_AVERAGE:
        cst = constants_nb(strategy, p0, p1)
        _ma_block(x, first, first, n, p0, p1, p2, cst, st, e, q)
    elif strategy == STRATEGY_MOMENTUM:
        _momentum_block(x, first, first, n, p0, p1, e, q)
    elif strategy == STRATEGY_MEAN_REVERSION:
        _mean_reversion_block(x, first, first, n, p0, p1, st, e, q)
    elif strategy == STRATEGY_RSI:
        cst = constants_nb(strategy, p0, p1)
        _rsi_block(x, first, first, n, p0, p1, p2, cst, st, e, q)
    else:
        raise ValueError(f"unknown strategy code {strategy}")
    return ent, ext
