"""Numba kernels for the range indicators: stochastic oscillator, Williams %R, CCI.

Layering, signatures and NaN rules are described in
:mod:`quantcore._kernels.indicators_base`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types

from quantcore._kernels.indicators_base import (
    CONTRACT,
    IN2,
    INT,
    OUT2,
    SIG_HLC_W,
    check_output_nb,
    check_shape_nb,
    column_nb,
    first_valid_all_1d_nb,
    nan_head_1d_nb,
    panel_kernel,
)
from quantcore._kernels.indicators_ma import sma_from_1d_nb
from quantcore._typing import Float64Array1D, Float64Array2D

__all__ = [
    "cci_1d_nb",
    "cci_nb",
    "stochastic_1d_nb",
    "stochastic_nb",
    "williams_r_1d_nb",
    "williams_r_nb",
]


# --- rolling extremes: stochastic %K and Williams %R --------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _range_position_into(
    high: Float64Array1D,
    low: Float64Array1D,
    close: Float64Array1D,
    s: int,
    window: int,
    williams: bool,
    out: Float64Array1D,
) -> None:
    """Fast %K (``williams=False``) or Williams %R of ``close`` within the rolling range.

    The highest high and lowest low are tracked like TA-Lib's STOCH/WILLR: the
    extreme's index is kept and the window is rescanned only when it leaves.
    %K is ``(c - L) / ((H - L) / 100)`` and %R is ``(H - c) / ((H - L) / -100)``,
    both 0 when ``H == L``. A bar is NaN while its window holds a NaN high or
    low, or when its close is NaN (TA-Lib's comparisons would skip the NaN).
    """
    n = close.shape[0]
    nan_head_1d_nb(out, s + window - 1)
    if window > n - s:
        return
    lowest_idx = -1
    highest_idx = -1
    lowest = 0.0
    highest = 0.0
    last_gap = -1  # last bar with a NaN high or low
    for i in range(s, s + window - 1):
        if np.isnan(high[i]) or np.isnan(low[i]):
            last_gap = i
    trailing = s
    for today in range(s + window - 1, n):
        if np.isnan(high[today]) or np.isnan(low[today]):
            last_gap = today
        if last_gap >= trailing or np.isnan(close[today]):
            out[today] = np.nan
            if last_gap >= trailing:  # rescan both extremes once the gap has left
                lowest_idx = -1
                highest_idx = -1
            trailing += 1
            continue
        value = low[today]
        if lowest_idx < trailing:
            lowest_idx = trailing
            lowest = low[trailing]
            for i in range(trailing + 1, today + 1):
                if low[i] < lowest:
                    lowest_idx = i
                    lowest = low[i]
        elif value <= lowest:
            lowest_idx = today
            lowest = value
        value = high[today]
        if highest_idx < trailing:
            highest_idx = trailing
            highest = high[trailing]
            for i in range(trailing + 1, today + 1):
                if high[i] > highest:
                    highest_idx = i
                    highest = high[i]
        elif value >= highest:
            highest_idx = today
            highest = value
        if williams:
            diff = (highest - lowest) / -100.0
            out[today] = (highest - close[today]) / diff if diff != 0.0 else 0.0
        else:
            diff = (highest - lowest) / 100.0
            out[today] = (close[today] - lowest) / diff if diff != 0.0 else 0.0
        trailing += 1


@njit(cache=True, fastmath=CONTRACT)
def _stochastic_into(
    high: Float64Array1D,
    low: Float64Array1D,
    close: Float64Array1D,
    k_window: int,
    smooth_k: int,
    d_window: int,
    fast_k: Float64Array1D,
    k: Float64Array1D,
    d: Float64Array1D,
) -> None:
    """TA_STOCH with SMA smoothing: ``k = SMA(fast %K, smooth_k)``, ``d = SMA(k, d_window)``."""
    s = first_valid_all_1d_nb(high, low, close, close)
    lookback = k_window + smooth_k + d_window - 3
    _range_position_into(high, low, close, s, k_window, False, fast_k)
    sma_from_1d_nb(fast_k, s + k_window - 1, smooth_k, k)
    sma_from_1d_nb(k, s + k_window + smooth_k - 2, d_window, d)
    nan_head_1d_nb(k, s + lookback)


@njit(cache=True, fastmath=CONTRACT)
def stochastic_1d_nb(
    high: Float64Array1D,
    low: Float64Array1D,
    close: Float64Array1D,
    k_window: int,
    smooth_k: int,
    d_window: int,
) -> tuple[Float64Array1D, Float64Array1D]:
    """Stochastic oscillator (%K, %D) of one series of bars.

    The windows come in TA-Lib's ``STOCH`` order (fast %K, %K smoothing, %D),
    not in the order of :func:`quantcore.indicators.stochastic`.
    """
    n = close.shape[0]
    fast_k = np.empty(n)
    k = np.empty(n)
    d = np.empty(n)
    _stochastic_into(high, low, close, k_window, smooth_k, d_window, fast_k, k, d)
    return k, d


@panel_kernel(types.void(IN2, IN2, IN2, INT, INT, INT, OUT2, OUT2))
def stochastic_nb(
    high: Float64Array2D,
    low: Float64Array2D,
    close: Float64Array2D,
    k_window: int,
    smooth_k: int,
    d_window: int,
    k: Float64Array2D,
    d: Float64Array2D,
) -> None:
    """Stochastic oscillator (%K, %D) of every column (windows in TA-Lib's ``STOCH`` order)."""
    n, m = close.shape
    check_shape_nb(high, n, m)
    check_shape_nb(low, n, m)
    check_output_nb(k, n, m)
    check_output_nb(d, n, m)
    for j in prange(m):
        fast_k = np.empty(n)
        _stochastic_into(
            column_nb(high, j),
            column_nb(low, j),
            column_nb(close, j),
            k_window,
            smooth_k,
            d_window,
            fast_k,
            column_nb(k, j),
            column_nb(d, j),
        )


@njit(cache=True, fastmath=CONTRACT)
def _williams_r_into(
    high: Float64Array1D,
    low: Float64Array1D,
    close: Float64Array1D,
    window: int,
    out: Float64Array1D,
) -> None:
    s = first_valid_all_1d_nb(high, low, close, close)
    _range_position_into(high, low, close, s, window, True, out)


@njit(cache=True, fastmath=CONTRACT)
def williams_r_1d_nb(
    high: Float64Array1D, low: Float64Array1D, close: Float64Array1D, window: int
) -> Float64Array1D:
    """Williams %R of one series of bars."""
    out = np.empty(close.shape[0])
    _williams_r_into(high, low, close, window, out)
    return out


@panel_kernel(SIG_HLC_W)
def williams_r_nb(
    high: Float64Array2D,
    low: Float64Array2D,
    close: Float64Array2D,
    window: int,
    out: Float64Array2D,
) -> None:
    """Williams %R of every column."""
    n, k = close.shape
    check_shape_nb(high, n, k)
    check_shape_nb(low, n, k)
    check_output_nb(out, n, k)
    for j in prange(k):
        _williams_r_into(
            column_nb(high, j),
            column_nb(low, j),
            column_nb(close, j),
            window,
            column_nb(out, j),
        )


# --- CCI -------------------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _cci_into(
    high: Float64Array1D,
    low: Float64Array1D,
    close: Float64Array1D,
    window: int,
    buffer: Float64Array1D,
    out: Float64Array1D,
) -> None:
    """TA_CCI: typical prices in a circular buffer, summed in buffer order like TA-Lib."""
    n = close.shape[0]
    s = first_valid_all_1d_nb(high, low, close, close)
    nan_head_1d_nb(out, s + window - 1)
    if window > n - s:
        return
    pos = 0
    for i in range(s, s + window - 1):
        buffer[pos] = (high[i] + low[i] + close[i]) / 3
        pos += 1
    for i in range(s + window - 1, n):
        last = (high[i] + low[i] + close[i]) / 3
        buffer[pos] = last
        average = 0.0
        for j in range(window):
            average += buffer[j]
        average /= window
        deviation = 0.0
        for j in range(window):
            deviation += abs(buffer[j] - average)
        distance = last - average
        if distance != 0.0 and deviation != 0.0:
            out[i] = distance / (0.015 * (deviation / window))
        else:
            out[i] = 0.0
        pos += 1
        if pos == window:
            pos = 0


@njit(cache=True, fastmath=CONTRACT)
def cci_1d_nb(
    high: Float64Array1D, low: Float64Array1D, close: Float64Array1D, window: int
) -> Float64Array1D:
    """Commodity channel index of one series of bars."""
    out = np.empty(close.shape[0])
    _cci_into(high, low, close, window, np.empty(window), out)
    return out


@panel_kernel(SIG_HLC_W)
def cci_nb(
    high: Float64Array2D,
    low: Float64Array2D,
    close: Float64Array2D,
    window: int,
    out: Float64Array2D,
) -> None:
    """Commodity channel index of every column."""
    n, k = close.shape
    check_shape_nb(high, n, k)
    check_shape_nb(low, n, k)
    check_output_nb(out, n, k)
    for j in prange(k):
        _cci_into(
            column_nb(high, j),
            column_nb(low, j),
            column_nb(close, j),
            window,
            np.empty(window),
            column_nb(out, j),
        )
