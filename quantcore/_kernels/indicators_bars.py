"""Numba kernels for indicators on bars: ATR, ADX, OBV and VWAP.

Layering, signatures and NaN rules are described in
:mod:`quantcore._kernels.indicators_base`. A column starts at the first bar
where *all* of its inputs are valid, like the ``talib`` wrapper's
``check_begidx``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types

from quantcore._kernels.indicators_base import (
    CONTRACT,
    IN2,
    OUT2,
    SIG_HLC_W,
    TA_EPSILON,
    check_output_nb,
    check_shape_nb,
    column_nb,
    first_valid_all_1d_nb,
    nan_head_1d_nb,
    panel_kernel,
    true_range_nb,
    wilder_step_nb,
)
from quantcore._typing import Float64Array1D, Float64Array2D

__all__ = [
    "adx_1d_nb",
    "adx_nb",
    "atr_1d_nb",
    "atr_nb",
    "obv_1d_nb",
    "obv_nb",
    "vwap_1d_nb",
    "vwap_nb",
]


# --- ATR -------------------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _atr_into(
    high: Float64Array1D,
    low: Float64Array1D,
    close: Float64Array1D,
    window: int,
    out: Float64Array1D,
) -> None:
    """TA_ATR: the mean of the first ``window`` true ranges, then Wilder smoothing."""
    n = close.shape[0]
    s = first_valid_all_1d_nb(high, low, close, close)
    nan_head_1d_nb(out, s + window)
    if window >= n - s:
        return
    total = 0.0
    for i in range(s + 1, s + window + 1):
        total += true_range_nb(high[i], low[i], close[i - 1])
    prev = total / window
    out[s + window] = prev
    # the previous close is carried in a register (three loads per bar, not four)
    decay = (window - 1) / window
    inv = 1.0 / window
    prev_close = close[s + window]
    for i in range(np.uint64(s + window + 1), np.uint64(n)):  # unsigned: no wraparound code
        prev = wilder_step_nb(prev, true_range_nb(high[i], low[i], prev_close), decay, inv)
        prev_close = close[i]
        out[i] = prev


@njit(cache=True, fastmath=CONTRACT)
def atr_1d_nb(
    high: Float64Array1D, low: Float64Array1D, close: Float64Array1D, window: int
) -> Float64Array1D:
    """Average true range of one series of bars."""
    out = np.empty(close.shape[0])
    _atr_into(high, low, close, window, out)
    return out


@panel_kernel(SIG_HLC_W)
def atr_nb(
    high: Float64Array2D,
    low: Float64Array2D,
    close: Float64Array2D,
    window: int,
    out: Float64Array2D,
) -> None:
    """Average true range (Wilder) of every column."""
    n, k = close.shape
    check_shape_nb(high, n, k)
    check_shape_nb(low, n, k)
    check_output_nb(out, n, k)
    for j in prange(k):
        _atr_into(
            column_nb(high, j),
            column_nb(low, j),
            column_nb(close, j),
            window,
            column_nb(out, j),
        )


# --- ADX -------------------------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _directional_moves(
    high: float, low: float, prev_high: float, prev_low: float
) -> tuple[float, float]:
    """(+DM, -DM) of one bar: only the larger positive move counts, as in TA-Lib."""
    up = high - prev_high
    down = prev_low - low
    if down > 0 and up < down:
        return 0.0, down
    if up > 0 and up > down:
        return up, 0.0
    return 0.0, 0.0


@njit(cache=True, fastmath=CONTRACT)
def _dx(plus_dm: float, minus_dm: float, tr: float) -> float:
    """``100 |+DI - -DI| / (+DI + -DI)``; ``-1`` when TR or the DI sum is (TA-Lib) zero.

    A NaN input gives NaN, which then propagates into the ADX.
    """
    if -TA_EPSILON < tr < TA_EPSILON:
        return -1.0
    minus_di = 100.0 * (minus_dm / tr)
    plus_di = 100.0 * (plus_dm / tr)
    di_sum = minus_di + plus_di
    if -TA_EPSILON < di_sum < TA_EPSILON:
        return -1.0
    return 100.0 * (abs(minus_di - plus_di) / di_sum)


@njit(cache=True, fastmath=CONTRACT)
def _adx_into(
    high: Float64Array1D,
    low: Float64Array1D,
    close: Float64Array1D,
    window: int,
    out: Float64Array1D,
) -> None:
    """TA_ADX: Wilder-smoothed +DM, -DM and TR, DX, then a Wilder average of DX.

    Bars ``s+1 .. s+w-1`` sum DM and TR; bars ``s+w .. s+2w-1`` smooth them and
    sum DX (the first ADX is that sum over ``w``); later bars update the ADX
    recursively. A bar whose TR or DI sum is zero leaves the ADX unchanged
    (TA-Lib skips it), which the ``-1`` returned by :func:`_dx` signals.
    """
    n = close.shape[0]
    s = first_valid_all_1d_nb(high, low, close, close)
    lookback = 2 * window - 1
    nan_head_1d_nb(out, s + lookback)
    if lookback >= n - s:
        return
    w = float(window)
    plus_dm = 0.0
    minus_dm = 0.0
    tr = 0.0
    for i in range(s + 1, s + window):
        up, down = _directional_moves(high[i], low[i], high[i - 1], low[i - 1])
        plus_dm += up
        minus_dm += down
        tr += true_range_nb(high[i], low[i], close[i - 1])
    sum_dx = 0.0
    adx = 0.0
    for i in range(s + window, n):
        up, down = _directional_moves(high[i], low[i], high[i - 1], low[i - 1])
        minus_dm -= minus_dm / w
        plus_dm -= plus_dm / w
        if down != 0.0:
            minus_dm += down
        elif up != 0.0:
            plus_dm += up
        tr = tr - (tr / w) + true_range_nb(high[i], low[i], close[i - 1])
        dx = _dx(plus_dm, minus_dm, tr)
        skipped = dx < 0.0  # -1 marks a bar TA-Lib skips; a NaN propagates
        if i <= s + lookback:
            if not skipped:
                sum_dx += dx
            if i < s + lookback:
                continue
            adx = sum_dx / w
        elif not skipped:
            adx = ((adx * (w - 1.0)) + dx) / w
        out[i] = adx


@njit(cache=True, fastmath=CONTRACT)
def adx_1d_nb(
    high: Float64Array1D, low: Float64Array1D, close: Float64Array1D, window: int
) -> Float64Array1D:
    """Average directional index of one series of bars."""
    out = np.empty(close.shape[0])
    _adx_into(high, low, close, window, out)
    return out


@panel_kernel(SIG_HLC_W)
def adx_nb(
    high: Float64Array2D,
    low: Float64Array2D,
    close: Float64Array2D,
    window: int,
    out: Float64Array2D,
) -> None:
    """Average directional index (Wilder) of every column."""
    n, k = close.shape
    check_shape_nb(high, n, k)
    check_shape_nb(low, n, k)
    check_output_nb(out, n, k)
    for j in prange(k):
        _adx_into(
            column_nb(high, j),
            column_nb(low, j),
            column_nb(close, j),
            window,
            column_nb(out, j),
        )


# --- volume: OBV and VWAP ----------------------------------------------------------


@njit(cache=True, fastmath=CONTRACT)
def _obv_into(close: Float64Array1D, volume: Float64Array1D, out: Float64Array1D) -> None:
    """TA_OBV: starts at the first volume, then adds or subtracts volume on up or down closes.

    Unlike TA-Lib, which carries the last value through a NaN close (comparisons
    with NaN are false), a NaN close or volume makes the rest of the column NaN.
    """
    n = close.shape[0]
    s = first_valid_all_1d_nb(close, volume, close, volume)
    nan_head_1d_nb(out, s)
    if s >= n:
        return
    obv = volume[s]
    prev = close[s]
    for i in range(s, n):
        value = close[i]
        traded = volume[i]
        if np.isnan(value) or np.isnan(traded):
            obv = np.nan
        elif value > prev:
            obv += traded
        elif value < prev:
            obv -= traded
        out[i] = obv
        prev = value


@njit(cache=True, fastmath=CONTRACT)
def obv_1d_nb(close: Float64Array1D, volume: Float64Array1D) -> Float64Array1D:
    """On-balance volume of one series."""
    out = np.empty(close.shape[0])
    _obv_into(close, volume, out)
    return out


@panel_kernel(types.void(IN2, IN2, OUT2))
def obv_nb(close: Float64Array2D, volume: Float64Array2D, out: Float64Array2D) -> None:
    """On-balance volume of every column."""
    n, k = close.shape
    check_shape_nb(volume, n, k)
    check_output_nb(out, n, k)
    for j in prange(k):
        _obv_into(column_nb(close, j), column_nb(volume, j), column_nb(out, j))


@njit(cache=True, fastmath=CONTRACT)
def _vwap_into(
    high: Float64Array1D,
    low: Float64Array1D,
    close: Float64Array1D,
    volume: Float64Array1D,
    out: Float64Array1D,
) -> None:
    """Cumulative typical-price VWAP from the first fully valid bar; NaN while no volume traded."""
    n = close.shape[0]
    s = first_valid_all_1d_nb(high, low, close, volume)
    nan_head_1d_nb(out, s)
    price_volume = 0.0
    total_volume = 0.0
    for i in range(s, n):
        price_volume += (high[i] + low[i] + close[i]) / 3.0 * volume[i]
        total_volume += volume[i]
        out[i] = price_volume / total_volume if total_volume != 0.0 else np.nan


@njit(cache=True, fastmath=CONTRACT)
def vwap_1d_nb(
    high: Float64Array1D, low: Float64Array1D, close: Float64Array1D, volume: Float64Array1D
) -> Float64Array1D:
    """Cumulative volume-weighted average typical price of one series of bars."""
    out = np.empty(close.shape[0])
    _vwap_into(high, low, close, volume, out)
    return out


@panel_kernel(types.void(IN2, IN2, IN2, IN2, OUT2))
def vwap_nb(
    high: Float64Array2D,
    low: Float64Array2D,
    close: Float64Array2D,
    volume: Float64Array2D,
    out: Float64Array2D,
) -> None:
    """Cumulative volume-weighted average typical price of every column."""
    n, k = close.shape
    check_shape_nb(high, n, k)
    check_shape_nb(low, n, k)
    check_shape_nb(volume, n, k)
    check_output_nb(out, n, k)
    for j in prange(k):
        _vwap_into(
            column_nb(high, j),
            column_nb(low, j),
            column_nb(close, j),
            column_nb(volume, j),
            column_nb(out, j),
        )
