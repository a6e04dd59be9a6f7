"""Numba kernels for single-input indicators: moving averages, RSI, MACD, Bollinger, ROC.

Every indicator has three layers:

* ``_<name>_into(x, ..., out)``: the recursion on one column, written into ``out``;
* ``<name>_1d_nb(x, ...)``: one series in, one series out (callable from other
  jitted code, compiled lazily for the caller's types);
* ``<name>_nb(x, ...)``: a 2-D panel (axis 0 time, axis 1 assets) with ``prange``
  over the columns, compiled once for one explicit signature with layout ``A``,
  so a single series passed as an ``(n, 1)`` column and a Fortran-ordered panel
  share one machine-code specialization (cached on disk by ``cache=True``).

The arithmetic follows TA-Lib's C code operation by operation (running sums,
``TA_IS_ZERO`` thresholds, seeding), so results agree with ``talib`` to the last
few ulps. Like the ``talib`` wrapper, each column is computed from its first
valid value (leading NaNs are skipped, the output is NaN until that start plus
the indicator's lookback); a NaN after the start propagates through the
arithmetic exactly as it does in TA-Lib.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types

from quantcore._typing import Float64Array1D, Float64Array2D

__all__ = [
    "IN2",
    "OUT2",
    "TA_EPSILON",
    "bollinger_1d_nb",
    "bollinger_nb",
    "ema_1d_nb",
    "ema_nb",
    "first_valid_1d_nb",
    "macd_1d_nb",
    "macd_nb",
    "roc_1d_nb",
    "roc_nb",
    "rsi_1d_nb",
    "rsi_nb",
    "sma_1d_nb",
    "sma_nb",
    "wma_1d_nb",
    "wma_nb",
]

#: TA-Lib's ``TA_IS_ZERO`` / ``TA_IS_ZERO_OR_NEG`` threshold.
TA_EPSILON = 1e-8

# One signature per kernel: layout ``A`` takes C, F and strided panels alike, and
# read-only inputs (pandas' copy-on-write arrays) are accepted without a copy.
IN2 = types.Array(types.float64, 2, "A", readonly=True)
OUT2 = types.float64[:, :]
_SIG_W = OUT2(IN2, types.int64)
_SIG_TRIPLE = types.Tuple((OUT2, OUT2, OUT2))


@njit(cache=True)
def first_valid_1d_nb(x: Float64Array1D) -> int:
    """Index of the first non-NaN value of ``x`` (``len(x)`` if there is none)."""
    for i in range(x.shape[0]):
        if not np.isnan(x[i]):
            return i
    return x.shape[0]


@njit(cache=True)
def _nan_head(out: Float64Array1D, stop: int) -> None:
    """Fill ``out[:stop]`` with NaN (``stop`` clipped to the length)."""
    for i in range(min(stop, out.shape[0])):
        out[i] = np.nan


@njit(cache=True)
def _new_panel(n: int, k: int) -> Float64Array2D:
    """Uninitialised ``(n, k)`` float64 array in Fortran order (contiguous columns)."""
    return np.empty((k, n)).T


# --- SMA -------------------------------------------------------------------------


@njit(cache=True)
def _sma_from(x: Float64Array1D, s: int, window: int, out: Float64Array1D) -> None:
    """TA_INT_SMA on ``x[s:]``: a running sum, valid from ``s + window - 1``."""
    n = x.shape[0]
    _nan_head(out, s + window - 1)
    if window > n - s:
        return
    total = 0.0
    for i in range(s, s + window - 1):
        total += x[i]
    trailing = s
    for i in range(s + window - 1, n):
        total += x[i]
        value = total
        total -= x[trailing]
        trailing += 1
        out[i] = value / window


@njit(cache=True)
def _sma_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    _sma_from(x, first_valid_1d_nb(x), window, out)


@njit(cache=True)
def sma_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Simple moving average of one series (see :func:`quantcore.indicators.sma`)."""
    out = np.empty(x.shape[0])
    _sma_into(x, window, out)
    return out


@njit(_SIG_W, cache=True, parallel=True)
def sma_nb(x: Float64Array2D, window: int) -> Float64Array2D:
    """Simple moving average of every column of a panel."""
    n, k = x.shape
    out = _new_panel(n, k)
    for j in prange(k):
        _sma_into(x[:, j], window, out[:, j])
    return out


# --- EMA -------------------------------------------------------------------------


@njit(cache=True)
def _ema_from(
    x: Float64Array1D, seed_start: int, window: int, alpha: float, out: Float64Array1D
) -> None:
    """TA_INT_EMA: the mean of ``x[seed_start : seed_start + window]`` seeds the recursion.

    The output is NaN before ``seed_start + window - 1``.
    """
    n = x.shape[0]
    first = seed_start + window - 1
    _nan_head(out, first)
    if window > n - seed_start:
        return
    total = 0.0
    for i in range(seed_start, first + 1):
        total += x[i]
    prev = total / window
    out[first] = prev
    for i in range(first + 1, n):
        prev = ((x[i] - prev) * alpha) + prev
        out[i] = prev


@njit(cache=True)
def _ema_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    s = first_valid_1d_nb(x)
    _ema_from(x, s, window, 2.0 / (window + 1), out)


@njit(cache=True)
def ema_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Exponential moving average of one series (see :func:`quantcore.indicators.ema`)."""
    out = np.empty(x.shape[0])
    _ema_into(x, window, out)
    return out


@njit(_SIG_W, cache=True, parallel=True)
def ema_nb(x: Float64Array2D, window: int) -> Float64Array2D:
    """Exponential moving average (SMA-seeded, ``alpha = 2 / (window + 1)``) of every column."""
    n, k = x.shape
    out = _new_panel(n, k)
    for j in prange(k):
        _ema_into(x[:, j], window, out[:, j])
    return out


# --- WMA -------------------------------------------------------------------------


@njit(cache=True)
def _wma_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    """TA_WMA: linear weights ``1..window`` updated incrementally in O(1) per step."""
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    _nan_head(out, s + window - 1)
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


@njit(cache=True)
def wma_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Linearly weighted moving average of one series."""
    out = np.empty(x.shape[0])
    _wma_into(x, window, out)
    return out


@njit(_SIG_W, cache=True, parallel=True)
def wma_nb(x: Float64Array2D, window: int) -> Float64Array2D:
    """Linearly weighted moving average of every column."""
    n, k = x.shape
    out = _new_panel(n, k)
    for j in prange(k):
        _wma_into(x[:, j], window, out[:, j])
    return out


# --- RSI -------------------------------------------------------------------------


@njit(cache=True)
def _rsi_value(gain: float, total: float) -> float:
    """``100 * gain / (gain + loss)``, 0 when TA-Lib's ``TA_IS_ZERO(gain + loss)``."""
    if -TA_EPSILON < total < TA_EPSILON:
        return 0.0
    return 100.0 * (gain / total)


@njit(cache=True)
def _rsi_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    """TA_RSI: Wilder-smoothed mean gain and loss, seeded with their plain means."""
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    _nan_head(out, s + window)
    if window >= n - s:
        return
    prev_value = x[s]
    gain = 0.0
    loss = 0.0
    for i in range(s + 1, s + window + 1):
        diff = x[i] - prev_value
        prev_value = x[i]
        if diff < 0:
            loss -= diff
        else:
            gain += diff
    loss /= window
    gain /= window
    total = gain + loss
    out[s + window] = _rsi_value(gain, total)
    for i in range(s + window + 1, n):
        diff = x[i] - prev_value
        prev_value = x[i]
        loss *= window - 1
        gain *= window - 1
        if diff < 0:
            loss -= diff
        else:
            gain += diff
        loss /= window
        gain /= window
        total = gain + loss
        out[i] = _rsi_value(gain, total)


@njit(cache=True)
def rsi_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Relative strength index of one series."""
    out = np.empty(x.shape[0])
    _rsi_into(x, window, out)
    return out


@njit(_SIG_W, cache=True, parallel=True)
def rsi_nb(x: Float64Array2D, window: int) -> Float64Array2D:
    """Relative strength index (Wilder) of every column."""
    n, k = x.shape
    out = _new_panel(n, k)
    for j in prange(k):
        _rsi_into(x[:, j], window, out[:, j])
    return out


# --- MACD ------------------------------------------------------------------------


@njit(cache=True)
def _macd_into(
    x: Float64Array1D,
    fast: int,
    slow: int,
    signal: int,
    macd: Float64Array1D,
    sig: Float64Array1D,
    hist: Float64Array1D,
) -> None:
    """TA_MACD: both EMAs start at ``s + slow - 1``; the fast one is seeded there too.

    The slow EMA is seeded with the mean of ``x[s : s + slow]``, the fast EMA with
    the mean of the last ``fast`` of those values, so both are aligned on the
    same first bar. The signal line is an SMA-seeded EMA of the MACD line and all
    three outputs start at ``s + slow + signal - 2``.
    """
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    first_line = s + slow - 1
    lookback = slow + signal - 2
    _nan_head(macd, s + lookback)
    _nan_head(sig, s + lookback)
    _nan_head(hist, s + lookback)
    if lookback >= n - s:
        return
    # Slow and fast EMA, written into ``sig`` and ``hist`` as scratch from first_line on.
    _ema_from(x, s, slow, 2.0 / (slow + 1), sig)
    _ema_from(x, s + slow - fast, fast, 2.0 / (fast + 1), hist)
    for i in range(first_line, n):
        macd[i] = hist[i] - sig[i]
    _ema_from(macd, first_line, signal, 2.0 / (signal + 1), sig)
    for i in range(first_line, n):
        hist[i] = macd[i] - sig[i]
    for i in range(first_line, s + lookback):
        macd[i] = np.nan
        hist[i] = np.nan


@njit(cache=True)
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


@njit(_SIG_TRIPLE(IN2, types.int64, types.int64, types.int64), cache=True, parallel=True)
def macd_nb(
    x: Float64Array2D, fast: int, slow: int, signal: int
) -> tuple[Float64Array2D, Float64Array2D, Float64Array2D]:
    """MACD line, signal line and histogram of every column."""
    n, k = x.shape
    macd = _new_panel(n, k)
    sig = _new_panel(n, k)
    hist = _new_panel(n, k)
    for j in prange(k):
        _macd_into(x[:, j], fast, slow, signal, macd[:, j], sig[:, j], hist[:, j])
    return macd, sig, hist


# --- Bollinger bands -------------------------------------------------------------


@njit(cache=True)
def _bollinger_into(
    x: Float64Array1D,
    window: int,
    num_std: float,
    upper: Float64Array1D,
    middle: Float64Array1D,
    lower: Float64Array1D,
) -> None:
    """TA_BBANDS with an SMA middle band and TA-Lib's running-sum population deviation."""
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    first = s + window - 1
    _sma_from(x, s, window, middle)
    _nan_head(upper, first)
    _nan_head(lower, first)
    if window > n - s:
        return
    total2 = 0.0
    for i in range(s, first):
        total2 += x[i] * x[i]
    trailing = s
    for i in range(first, n):
        total2 += x[i] * x[i]
        mean2 = total2 / window
        total2 -= x[trailing] * x[trailing]
        trailing += 1
        mid = middle[i]
        var = mean2 - mid * mid
        dev = 0.0 if var < TA_EPSILON else np.sqrt(var) * num_std
        upper[i] = mid + dev
        lower[i] = mid - dev


@njit(cache=True)
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


@njit(_SIG_TRIPLE(IN2, types.int64, types.float64), cache=True, parallel=True)
def bollinger_nb(
    x: Float64Array2D, window: int, num_std: float
) -> tuple[Float64Array2D, Float64Array2D, Float64Array2D]:
    """Upper, middle and lower Bollinger band of every column."""
    n, k = x.shape
    upper = _new_panel(n, k)
    middle = _new_panel(n, k)
    lower = _new_panel(n, k)
    for j in prange(k):
        _bollinger_into(x[:, j], window, num_std, upper[:, j], middle[:, j], lower[:, j])
    return upper, middle, lower


# --- ROC -------------------------------------------------------------------------


@njit(cache=True)
def _roc_into(x: Float64Array1D, window: int, out: Float64Array1D) -> None:
    """TA_ROC: ``100 * (x[t] / x[t - window] - 1)``, 0 where the old value is 0."""
    n = x.shape[0]
    s = first_valid_1d_nb(x)
    _nan_head(out, s + window)
    if window >= n - s:
        return
    for i in range(s + window, n):
        old = x[i - window]
        out[i] = ((x[i] / old) - 1.0) * 100.0 if old != 0.0 else 0.0


@njit(cache=True)
def roc_1d_nb(x: Float64Array1D, window: int) -> Float64Array1D:
    """Rate of change (percent) of one series."""
    out = np.empty(x.shape[0])
    _roc_into(x, window, out)
    return out


@njit(_SIG_W, cache=True, parallel=True)
def roc_nb(x: Float64Array2D, window: int) -> Float64Array2D:
    """Rate of change (percent) of every column."""
    n, k = x.shape
    out = _new_panel(n, k)
    for j in prange(k):
        _roc_into(x[:, j], window, out[:, j])
    return out
