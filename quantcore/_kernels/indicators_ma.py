"""Numba kernels for single-input indicators: moving averages, RSI, MACD, Bollinger, ROC.

Layering, signatures and NaN rules are described in
:mod:`quantcore._kernels.indicators_base`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types

from quantcore._kernels.indicators_base import (
    CANCELLED,
    CONTRACT,
    IN2,
    INT,
    OUT2,
    SIG_W,
    TA_EPSILON,
    check_output_nb,
    column_nb,
    first_valid_1d_nb,
    nan_head_1d_nb,
    panel_kernel,
)
from quantcore._typing import Float64Array1D, Float64Array2D

__all__ = [
    "bollinger_1d_nb",
    "bollinger_nb",
    "bollinger_step_nb",
    "ema_1d_nb",
    "ema_nb",
    "ema_step_nb",
    "macd_1d_nb",
    "macd_nb",
    "roc_1d_nb",
    "roc_nb",
    "rsi_1d_nb",
    "rsi_nb",
    "rsi_step_nb",
    "rsi_sum_step_nb",
    "rsi_value_nb",
    "sma_1d_nb",
    "sma_from_1d_nb",
    "sma_nb",
    "sma_step_nb",
    "wma_1d_nb",
    "wma_nb",
]


# --- Recursion steps ----------------------------------------------------------------
#
# One bar of each recursion, shared by the indicator kernels below and the
# strategies' block-wise signals (:mod:`quantcore._kernels.backtest_signals`),
# which carry the state from one block of bars to the next. numba inlines them
# into the caller's IR (``inline="always"``): no call, and no machine code of
# their own to compile. The caller's fast-math flags then apply, so every caller
# compiles with ``fastmath=CONTRACT``, and both compute the same values, to the last bit.


@njit(cache=True, fastmath=CONTRACT, inline="always")
def sma_step_nb(total: float, new: float, old: float, window: int) -> tuple[float, float]:
    """TA_SMA's running sum: add ``new``, take the mean, drop ``old`` (the window's first value).

    ``total`` holds the ``window - 1`` values before ``new``; returns the next such
    total and the mean of the window ending at ``new``.
    """
    total += new
    return total - old, total / window


@njit(cache=True, fastmath=CONTRACT, inline="always")
def ema_step_nb(prev: float, new: float, alpha: float) -> float:
    """TA_EMA's recursion ``(new - prev) * alpha + prev``."""
    return ((new - prev) * alpha) + prev


@njit(cache=True, fastmath=CONTRACT, inline="always")
def rsi_sum_step_nb(gain: float, loss: float, diff: float) -> tuple[float, float]:
    """Add one change to the sums of gains and losses that seed TA_RSI.

    Selects rather than branches (a random walk defeats branch prediction); a NaN
    change counts as a gain, so it propagates.
    """
    falling = diff < 0.0
    return gain + (0.0 if falling else diff), loss - (diff if falling else 0.0)


@njit(cache=True, fastmath=CONTRACT, inline="always")
def rsi_step_nb(
    gain: float, loss: float, diff: float, decay: float, inv: float
) -> tuple[float, float]:
    """Wilder's smoothing of the mean gain and loss by one change.

    The arithmetic of :func:`wilder_step_nb`, written out: that step inlined into
    this inlined one left RSI's loop about 20 % slower on a 1,000,000-point series
    (same values to the last bit).
    """
    falling = diff < 0.0
    loss = loss * decay + (-diff if falling else 0.0) * inv
    gain = gain * decay + (0.0 if falling else diff) * inv
    return gain, loss


@njit(cache=True, fastmath=CONTRACT, inline="always")
def rsi_value_nb(gain: float, loss: float) -> float:
    """``100 * gain / (gain + loss)``, 0 when TA-Lib's ``TA_IS_ZERO(gain + loss)``."""
    total = gain + loss
    if -TA_EPSILON < total < TA_EPSILON:
        return 0.0
    return 100.0 * (gain / total)


@njit(cache=True, fastmath=CONTRACT, inline="always")
def bollinger_step_nb(
    x: Float64Array1D, i: int, window: int, num_std: float, total: float, total2: float
) -> tuple[float, float, float, float, float]:
    """TA_BBANDS at bar ``i``: ``(total, total2, upper, middle, lower)`` over ``x[i - window + 1:i + 1]``.

    ``total`` and ``total2`` hold the sums of ``x`` and ``x**2`` over the
    ``window - 1`` values before ``i`` and are returned for the next bar; the
    middle band is the mean, the others are ``num_std`` standard deviations away. The
    population variance is ``mean(x**2) - mean**2``, as in TA-Lib, except where
    that difference has cancelled down to the rounding noise of the sums (below
    :data:`CANCELLED` times ``mean(x**2)``): there it is recomputed from the
    window's deviations, so a flat window gets exactly zero width instead of
    noise. As in TA-Lib, a variance below :data:`TA_EPSILON` counts as zero.
    """
    v = x[i]
    old = x[i + 1 - window]
    total += v
    total2 += v * v
    mid = total / window
    mean2 = total2 / window
    var = mean2 - mid * mid
    if var < CANCELLED * mean2:
        var = 0.0
        for t in range(i + 1 - window, i + 1):
            var += (x[t] - mid) * (x[t] - mid)
        var /= window
    dev = 0.0 if var < TA_EPSILON else np.sqrt(var) * num_std
    return total - old, total2 - old * old, mid + dev, mid, mid - dev


# --- SMA -------------------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def sma_from_1d_nb(x: Float64Array1D, s: int, window: int, out: Float64Array1D) -> None:
    """TAINT_SMA on ``x[s:]``: a running sum, valid from ``s + window - 1``."""
    n = x.shape[0]
    nan_head_1d_nb(out, s + window - 1)
    if window > n - s:
        return
    total = 0.0
    for i in range(s, s + window - 1):
        total += x[i]
    trailing = s
    for i in range(s + window - 1, n):
        total, out[i] = sma_step_nb(total, x[i], x[trailing], window)
        trailing += 1


@njit(cache=True, fastmath=CONTRACT)
def _sma_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    sma_from_1d_nb(x, first_valid_1d_nb(x), window, out)


@njit(cache=True, fastmath=CONTRACT)
def sma_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Simple moving average of one series (see :func:`quantcore.indicators.sma`)."""
    out = np.empty(x.shape[0])
    _sma_into(x, window, out)
    return out


@panel_kernel(SIG_W)
def sma_nb(x: Float64Array2D, window: int, out: Float64Array2D) -> None:
    """Simple moving average of every column of ``x``, written into ``out``."""
    n, k = x.shape
    check_output_nb(out, n, k)
    for j in prange(k):
        _sma_into(column_nb(x, j), window, column_nb(out, j))


# --- EMA -------------------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _ema_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    """TAINT_EMA: the mean of the first ``window`` values seeds the recursion."""
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    first = s + window - 1
    nan_head_1d_nb(out, first)
    if window > n - s:
        return
    alpha = 2.0 / (window + 1)
    total = 0.0
    for i in range(s, first):
        total += x[i]
    _, prev = sma_step_nb(total, x[first], 0.0, window)
    out[first] = prev
    for i in range(np.uint64(first + 1), np.uint64(n)):  # unsigned: no wraparound code
        prev = ema_step_nb(prev, x[i], alpha)
        out[i] = prev


@njit(cache=True, fastmath=CONTRACT)
def ema_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Exponential moving average of one series (see :func:`quantcore.indicators.ema`)."""
    out = np.empty(x.shape[0])
    _ema_into(x, window, out)
    return out


@panel_kernel(SIG_W)
def ema_nb(x: Float64Array2D, window: int, out: Float64Array2D) -> None:
    """SMA-seeded exponential moving average (``alpha = 2 / (window + 1)``) of every column."""
    n, k = x.shape
    check_output_nb(out, n, k)
    for j in prange(k):
        _ema_into(column_nb(x, j), window, column_nb(out, j))


# --- WMA -------------------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _wma_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    """TA_WMA: linear weights ``1..window`` updated incrementally in O(1) per step."""
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    nan_head_1d_nb(out, s + window - 1)
    if window > n - s:
        return
    divider = (window * (window + 1)) >> 1
    period_sum = 0.0
    period_sub = 0.0
    weight = 1
    for i in range(s, s + window - 1):
        value = x[i]
        period_sub += value
        period_sum += value * weight
        weight += 1
    trailing_value = 0.0
    trailing = s
    for i in range(s + window - 1, n):
        value = x[i]
        period_sub += value
        period_sub -= trailing_value
        period_sum += value * window
        trailing_value = x[trailing]
        trailing += 1
        out[i] = period_sum / divider
        period_sum -= period_sub


@njit(cache=True, fastmath=CONTRACT)
def wma_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Linearly weighted moving average of one series."""
    out = np.empty(x.shape[0])
    _wma_into(x, window, out)
    return out


@panel_kernel(SIG_W)
def wma_nb(x: Float64Array2D, window: int, out: Float64Array2D) -> None:
    """Linearly weighted moving average of every column."""
    n, k = x.shape
    check_output_nb(out, n, k)
    for j in prange(k):
        _wma_into(column_nb(x, j), window, column_nb(out, j))


# --- RSI -------------------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _rsi_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    """TA_RSI: Wilder-smoothed mean gain and loss (:func:`rsi_step_nb`), seeded with their plain means."""
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    nan_head_1d_nb(out, s + window)
    if window >= n - s:
        return
    prev_value = x[s]
    gain = 0.0
    loss = 0.0
    for i in range(s + 1, s + window + 1):
        gain, loss = rsi_sum_step_nb(gain, loss, x[i] - prev_value)
        prev_value = x[i]
    loss /= window
    gain /= window
    out[s + window] = rsi_value_nb(gain, loss)
    decay = (window - 1) / window
    inv = 1.0 / window
    for i in range(np.uint64(s + window + 1), np.uint64(n)):  # unsigned: no wraparound code
        gain, loss = rsi_step_nb(gain, loss, x[i] - prev_value, decay, inv)
        prev_value = x[i]
        out[i] = rsi_value_nb(gain, loss)


@njit(cache=True, fastmath=CONTRACT)
def rsi_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Relative strength index of one series."""
    out = np.empty(x.shape[0])
    _rsi_into(x, window, out)
    return out


@panel_kernel(SIG_W)
def rsi_nb(x: Float64Array2D, window: int, out: Float64Array2D) -> None:
    """Relative strength index (Wilder) of every column."""
    n, k = x.shape
    check_output_nb(out, n, k)
    for j in prange(k):
        _rsi_into(column_nb(x, j), window, column_nb(out, j))


# --- MACD ------------------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _macd_into(
    x: Float64Array1D,
    fast: int,
    slow: int,
    signal: int,
    macd: Float64Array1D,
    sig: Float64Array1D,
    hist: Float64Array1D,
) -> None:
    """TA_MACD in one pass: both EMAs start on bar ``s + slow - 1``.

    The slow EMA is seeded with the mean of ``x[s : s + slow]`` and the fast EMA
    with the mean of the last ``fast`` of those values; the signal EMA is seeded
    with the mean of the first ``signal`` MACD values, and all three outputs
    start at ``s + slow + signal - 2``. TA-Lib makes five passes over
    temporaries; fusing them reads the input once and writes each output once.
    """
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    start = s + slow + signal - 2
    nan_head_1d_nb(macd, start)
    nan_head_1d_nb(sig, start)
    nan_head_1d_nb(hist, start)
    if slow + signal - 2 >= n - s:
        return
    first_line = s + slow - 1
    slow_total = 0.0
    for i in range(s, first_line + 1):
        slow_total += x[i]
    fast_total = 0.0
    for i in range(first_line + 1 - fast, first_line + 1):
        fast_total += x[i]
    slow_ema = slow_total / slow
    fast_ema = fast_total / fast
    slow_alpha = 2.0 / (slow + 1)
    fast_alpha = 2.0 / (fast + 1)
    signal_alpha = 2.0 / (signal + 1)
    line = fast_ema - slow_ema
    signal_total = 0.0 + line
    for i in range(first_line + 1, start + 1):
        slow_ema = ((x[i] - slow_ema) * slow_alpha) + slow_ema
        fast_ema = ((x[i] - fast_ema) * fast_alpha) + fast_ema
        line = fast_ema - slow_ema
        signal_total += line
    signal_ema = signal_total / signal
    macd[start] = line
    sig[start] = signal_ema
    hist[start] = line - signal_ema
    for i in range(np.uint64(start + 1), np.uint64(n)):  # unsigned: no wraparound code
        slow_ema = ((x[i] - slow_ema) * slow_alpha) + slow_ema
        fast_ema = ((x[i] - fast_ema) * fast_alpha) + fast_ema
        line = fast_ema - slow_ema
        signal_ema = ((line - signal_ema) * signal_alpha) + signal_ema
        macd[i] = line
        sig[i] = signal_ema
        hist[i] = line - signal_ema


@njit(cache=True, fastmath=CONTRACT)
def macd_1d_nb(
    x: Float64Array1D, fast: int, slow: int, signal: int
) -> tuple[Float64Array1D, Float64Array1D, Float64Array1D]:
    """MACD line, signal line and histogram of one series."""
    n = x.shape[0]
    macd = np.empty(n)
    sig = np.empty(n)
    hist = np.empty(n)
    _macd_into(x, fast, slow, signal, macd, sig, hist)
    return macd, sig, hist


@panel_kernel(types.void(IN2, INT, INT, INT, OUT2, OUT2, OUT2))
def macd_nb(
    x: Float64Array2D,
    fast: int,
    slow: int,
    signal: int,
    macd: Float64Array2D,
    sig: Float64Array2D,
    hist: Float64Array2D,
) -> None:
    """MACD line, signal line and histogram of every column."""
    n, k = x.shape
    check_output_nb(macd, n, k)
    check_output_nb(sig, n, k)
    check_output_nb(hist, n, k)
    for j in prange(k):
        _macd_into(
            column_nb(x, j),
            fast,
            slow,
            signal,
            column_nb(macd, j),
            column_nb(sig, j),
            column_nb(hist, j),
        )


# --- Bollinger bands -------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _bollinger_into(
    x: Float64Array1D,
    window: int,
    num_std: float,
    upper: Float64Array1D,
    middle: Float64Array1D,
    lower: Float64Array1D,
) -> None:
    """TA_BBANDS with an SMA middle band: running sums of ``x`` and ``x**2`` in one pass
    (:func:`bollinger_step_nb`)."""
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    first = s + window - 1
    nan_head_1d_nb(upper, first)
    nan_head_1d_nb(middle, first)
    nan_head_1d_nb(lower, first)
    if window > n - s:
        return
    total = 0.0
    total2 = 0.0
    for i in range(s, first):
        total += x[i]
        total2 += x[i] * x[i]
    for i in range(first, n):
        total, total2, upper[i], middle[i], lower[i] = bollinger_step_nb(
            x, i, window, num_std, total, total2
        )


@njit(cache=True, fastmath=CONTRACT)
def bollinger_1d_nb(
    x: Float64Array1D, window: int, num_std: float
) -> tuple[Float64Array1D, Float64Array1D, Float64Array1D]:
    """Upper, middle and lower Bollinger band of one series."""
    n = x.shape[0]
    upper = np.empty(n)
    middle = np.empty(n)
    lower = np.empty(n)
    _bollinger_into(x, window, num_std, upper, middle, lower)
    return upper, middle, lower


@panel_kernel(types.void(IN2, INT, types.float64, OUT2, OUT2, OUT2))
def bollinger_nb(
    x: Float64Array2D,
    window: int,
    num_std: float,
    upper: Float64Array2D,
    middle: Float64Array2D,
    lower: Float64Array2D,
) -> None:
    """Upper, middle and lower Bollinger band of every column."""
    n, k = x.shape
    check_output_nb(upper, n, k)
    check_output_nb(middle, n, k)
    check_output_nb(lower, n, k)
    for j in prange(k):
        _bollinger_into(
            column_nb(x, j),
            window,
            num_std,
            column_nb(upper, j),
            column_nb(middle, j),
            column_nb(lower, j),
        )


# --- ROC -------------------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _roc_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    """TA_ROC: ``100 * (x[t] / x[t - window] - 1)``, 0 where the old value is 0."""
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    nan_head_1d_nb(out, s + window)
    if window >= n - s:
        return
    for i in range(s + window, n):
        old = x[i - window]
        out[i] = ((x[i] / old) - 1.0) * 100.0 if old != 0.0 else 0.0


@njit(cache=True, fastmath=CONTRACT)
def roc_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Rate of change (percent) of one series."""
    out = np.empty(x.shape[0])
    _roc_into(x, window, out)
    return out


@panel_kernel(SIG_W)
def roc_nb(x: Float64Array2D, window: int, out: Float64Array2D) -> None:
    """Rate of change (percent) of every column."""
    n, k = x.shape
    check_output_nb(out, n, k)
    for j in prange(k):
        _roc_into(column_nb(x, j), window, column_nb(out, j))
