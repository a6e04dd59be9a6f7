"""Signals of the built-in strategies, computed block by block from a few scalars of state.

Every built-in strategy's signals are produced by :func:`signal_block_nb` from a
few scalars of state (rolling sums, EMA and Wilder recursions) carried from one
block of :data:`BLOCK` bars to the next, so a sweep never materialises an
indicator or a signal series (:mod:`quantcore._kernels.backtest_sweep`).
:func:`signals_1d` runs the very same recursion over a whole series (one kernel
per strategy, ``<strategy>_1d_nb``, so that a first run compiles only its own);
the public strategies use it, which makes a sweep row identical to a single run
with the same parameters.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "BLOCK",
    "N_STATE",
    "STRATEGY_BUY_HOLD",
    "STRATEGY_MEAN_REVERSION",
    "STRATEGY_MOMENTUM",
    "STRATEGY_MOVING_AVERAGE",
    "STRATEGY_RSI",
    "buy_hold_1d_nb",
    "constants_nb",
    "ma_update_nb",
    "mean_reversion_1d_nb",
    "momentum_1d_nb",
    "moving_average_1d_nb",
    "rsi_1d_nb",
    "signal_block_nb",
    "signals_1d",
]

STRATEGY_BUY_HOLD = 0
STRATEGY_MOVING_AVERAGE = 1  # p0 short window, p1 long window, p2 0 = SMA / 1 = EMA
STRATEGY_MOMENTUM = 2  # p0 lookback, p1 threshold
STRATEGY_MEAN_REVERSION = 3  # p0 window, p1 num_std
STRATEGY_RSI = 4  # p0 window, p1 oversold, p2 overbought

#: Scalars of indicator state per combination.
N_STATE = 6
#: Bars of signals a sweep computes at a time (two bool buffers of this length per task).
BLOCK = 256


@njit(cache=True)
def constants_nb(strategy: int, p0: float, p1: float) -> np.ndarray:
    """Per-combination constants of :func:`signal_block_nb`, computed once, not per bar.

    moving_average: ``1 / short, 1 / long, 2 / (short + 1), 2 / (long + 1)``;
    mean_reversion: ``1 / window``.
    """
    cst = np.zeros(4)
    if strategy == STRATEGY_MOVING_AVERAGE:
        cst[0] = 1.0 / p0
        cst[1] = 1.0 / p1
        cst[2] = 2.0 / (p0 + 1.0)
        cst[3] = 2.0 / (p1 + 1.0)
    elif strategy == STRATEGY_MEAN_REVERSION:
        cst[0] = 1.0 / p0
    return cst


@njit(cache=True)
def ma_update_nb(
    x: np.ndarray, t: int, i: int, w: int, inv_w: float, alpha: float, ema: bool, acc: float
) -> tuple[float, float]:
    """Advance a moving average of window ``w`` by bar ``t`` (``i`` bars since the first).

    SMA: rolling sum ``acc += x[t] - x[t - w]``, value ``acc * (1 / w)``. EMA
    (TA-Lib convention): seeded with the SMA of the first ``w`` values, then
    ``acc = (x[t] - acc) * alpha + acc`` with ``alpha = 2 / (w + 1)``. Returns
    ``(acc, value)``, value NaN until ``i >= w - 1``.
    """
    if ema and i >= w:
        acc = (x[t] - acc) * alpha + acc
        return acc, acc
    acc += x[t]
    if i >= w:
        acc -= x[t - w]
    if i < w - 1:
        return acc, np.nan
    if ema:  # i == w - 1: the seed
        acc = acc * inv_w
        return acc, acc
    return acc, acc * inv_w


@njit(cache=True)
def _ma_block(
    x: np.ndarray, first: int, t0: int, t1: int, p0: float, p1: float, p2: float,
    cst: np.ndarray, st: np.ndarray, ent: np.ndarray, ext: np.ndarray,
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
            a_fast, fast = ma_update_nb(x, t, i, w_fast, cst[0], cst[2], True, a_fast)
            a_slow, slow = ma_update_nb(x, t, i, w_slow, cst[1], cst[3], True, a_slow)
            ent[t - t0] = (pf < ps) & (fast > slow)
            ext[t - t0] = (pf > ps) & (fast < slow)
            pf = fast
            ps = slow
    else:  # the SMA branch of ma_update_nb, written out: the sweeps' hot loop
        inv_fast = cst[0]
        inv_slow = cst[1]
        nan = np.nan
        for t in range(t0, t1):
            i = t - first
            v = x[t]
            a_fast += v
            if i >= w_fast:
                a_fast -= x[t - w_fast]
            a_slow += v
            if i >= w_slow:
                a_slow -= x[t - w_slow]
            fast = a_fast * inv_fast if i >= w_fast - 1 else nan
            slow = a_slow * inv_slow if i >= w_slow - 1 else nan
            ent[t - t0] = (pf < ps) & (fast > slow)
            ext[t - t0] = (pf > ps) & (fast < slow)
            pf = fast
            ps = slow
    st[0] = a_fast
    st[1] = a_slow
    st[2] = pf
    st[3] = ps


@njit(cache=True)
def _momentum_block(
    x: np.ndarray, first: int, t0: int, t1: int, p0: float, p1: float,
    ent: np.ndarray, ext: np.ndarray,
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


@njit(cache=True)
def _mean_reversion_block(
    x: np.ndarray, first: int, t0: int, t1: int, p0: float, p1: float,
    cst: np.ndarray, st: np.ndarray, ent: np.ndarray, ext: np.ndarray,
) -> None:  # fmt: skip
    w = int(p0)
    s1 = st[0]
    s2 = st[1]
    for t in range(t0, t1):
        i = t - first
        v = x[t]
        s1 += v
        s2 += v * v
        if i >= w:
            old = x[t - w]
            s1 -= old
            s2 -= old * old
        if i < w - 1:
            ent[t - t0] = False
            ext[t - t0] = False
            continue
        mid = s1 * cst[0]
        var = s2 * cst[0] - mid * mid
        sd = np.sqrt(var) if var > 0.0 else 0.0
        ent[t - t0] = v < mid - p1 * sd
        ext[t - t0] = v >= mid
    st[0] = s1
    st[1] = s2


@njit(cache=True)
def _rsi_block(
    x: np.ndarray, first: int, t0: int, t1: int, p0: float, p1: float, p2: float,
    st: np.ndarray, ent: np.ndarray, ext: np.ndarray,
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
        up = d if d > 0.0 else 0.0
        down = -d if d < 0.0 else 0.0
        if i < w:
            gain += up
            loss += down
            continue
        if i == w:
            gain = (gain + up) / w
            loss = (loss + down) / w
        else:
            gain = (gain * (w - 1) + up) / w
            loss = (loss * (w - 1) + down) / w
        tot = gain + loss
        rsi = 100.0 * (gain / tot) if tot != 0.0 else 0.0
        ent[t - t0] = rsi < p1
        ext[t - t0] = rsi > p2
    st[0] = gain
    st[1] = loss


@njit(cache=True)
def signal_block_nb(
    strategy: int,
    x: np.ndarray,
    first: int,
    t0: int,
    t1: int,
    p0: float,
    p1: float,
    p2: float,
    cst: np.ndarray,
    st: np.ndarray,
    ent: np.ndarray,
    ext: np.ndarray,
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
    * momentum: ``m = x[t] / x[t - lookback] - 1``; entry ``m > threshold``,
      exit ``m < -threshold``.
    * mean_reversion: ``mid`` = SMA, ``sd`` = population std over ``window``
      (rolling sums of ``x`` and ``x**2``, as TA-Lib); entry
      ``x[t] < mid - num_std * sd``, exit ``x[t] >= mid``.
    * rsi: Wilder RSI (TA-Lib); entry ``rsi < oversold``, exit ``rsi > overbought``.
    """
    if strategy == STRATEGY_MOVING_AVERAGE:
        _ma_block(x, first, t0, t1, p0, p1, p2, cst, st, ent, ext)
    elif strategy == STRATEGY_MOMENTUM:
        _momentum_block(x, first, t0, t1, p0, p1, ent, ext)
    elif strategy == STRATEGY_MEAN_REVERSION:
        _mean_reversion_block(x, first, t0, t1, p0, p1, cst, st, ent, ext)
    elif strategy == STRATEGY_RSI:
        _rsi_block(x, first, t0, t1, p0, p1, p2, st, ent, ext)
    else:
        for t in range(t0, t1):
            ent[t - t0] = t == first
            ext[t - t0] = False


@njit(cache=True)
def _series_buffers(
    strategy: int, n: int, p0: float, p1: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Entries, exits (all False), the state and the constants of one whole-series run."""
    return (
        np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_), np.zeros(N_STATE),
        constants_nb(strategy, p0, p1),
    )  # fmt: skip


@njit(cache=True)
def buy_hold_1d_nb(
    x: np.ndarray, first: int, p0: float, p1: float, p2: float
) -> tuple[np.ndarray, np.ndarray]:
    """buy_hold over a whole series: entry at ``first``."""
    n = x.shape[0]
    ent, ext, _, _ = _series_buffers(STRATEGY_BUY_HOLD, n, p0, p1)
    if first < n:
        ent[first] = True
    return ent, ext


@njit(cache=True)
def moving_average_1d_nb(
    x: np.ndarray, first: int, p0: float, p1: float, p2: float
) -> tuple[np.ndarray, np.ndarray]:
    """moving_average over a whole series: the block recursion of :func:`signal_block_nb`."""
    n = x.shape[0]
    ent, ext, st, cst = _series_buffers(STRATEGY_MOVING_AVERAGE, n, p0, p1)
    if first < n:
        _ma_block(x, first, first, n, p0, p1, p2, cst, st, ent[first:], ext[first:])
    return ent, ext


@njit(cache=True)
def momentum_1d_nb(
    x: np.ndarray, first: int, p0: float, p1: float, p2: float
) -> tuple[np.ndarray, np.ndarray]:
    """momentum over a whole series: the block recursion of :func:`signal_block_nb`."""
    n = x.shape[0]
    ent, ext, _, _ = _series_buffers(STRATEGY_MOMENTUM, n, p0, p1)
    if first < n:
        _momentum_block(x, first, first, n, p0, p1, ent[first:], ext[first:])
    return ent, ext


@njit(cache=True)
def mean_reversion_1d_nb(
    x: np.ndarray, first: int, p0: float, p1: float, p2: float
) -> tuple[np.ndarray, np.ndarray]:
    """mean_reversion over a whole series: the block recursion of :func:`signal_block_nb`."""
    n = x.shape[0]
    ent, ext, st, cst = _series_buffers(STRATEGY_MEAN_REVERSION, n, p0, p1)
    if first < n:
        _mean_reversion_block(x, first, first, n, p0, p1, cst, st, ent[first:], ext[first:])
    return ent, ext


@njit(cache=True)
def rsi_1d_nb(
    x: np.ndarray, first: int, p0: float, p1: float, p2: float
) -> tuple[np.ndarray, np.ndarray]:
    """rsi over a whole series: the block recursion of :func:`signal_block_nb`."""
    n = x.shape[0]
    ent, ext, st, _ = _series_buffers(STRATEGY_RSI, n, p0, p1)
    if first < n:
        _rsi_block(x, first, first, n, p0, p1, p2, st, ent[first:], ext[first:])
    return ent, ext


_SERIES_KERNELS = {
    STRATEGY_BUY_HOLD: buy_hold_1d_nb,
    STRATEGY_MOVING_AVERAGE: moving_average_1d_nb,
    STRATEGY_MOMENTUM: momentum_1d_nb,
    STRATEGY_MEAN_REVERSION: mean_reversion_1d_nb,
    STRATEGY_RSI: rsi_1d_nb,
}


def signals_1d(
    strategy: int, x: np.ndarray, first: int, p0: float, p1: float, p2: float
) -> tuple[np.ndarray, np.ndarray]:
    """Entries and exits of one strategy over a whole series (bars before ``first`` are False).

    Plain Python: it calls the strategy's own kernel (``<strategy>_1d_nb``), so a
    first run compiles that strategy's recursion only, not all five.
    """
    kernel = _SERIES_KERNELS[strategy]
    entries, exits = kernel(x, first, p0, p1, p2)
    return entries, exits
