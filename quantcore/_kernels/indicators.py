"""Numba kernels for indicators on high/low/close (and volume) bars.

Same layering as :mod:`quantcore._kernels.indicators_ma` (``_<name>_into`` on one
column, ``<name>_1d_nb`` for one series, ``<name>_nb`` over a panel with
``prange`` and one explicit layout-``A`` signature). A column starts at the
first bar where *all* of its inputs are valid, like the ``talib`` wrapper's
``check_begidx``; the arithmetic follows TA-Lib's C code step by step.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types

from quantcore._kernels.indicators_ma import (
    _INT,
    CONTRACT,
    IN2,
    OUT2,
    TA_EPSILON,
    _nan_head,
    _sma_from,
    check_output_nb,
    check_shape_nb,
    column_nb,
    panel_kernel,
    serial_nb,
)
from quantcore._typing import Float64Array1D, Float64Array2D

__all__ = [
    "adx_1d_nb",
    "adx_nb",
    "atr_1d_nb",
    "atr_nb",
    "cci_1d_nb",
    "cci_nb",
    "first_valid_all_1d_nb",
    "obv_1d_nb",
    "obv_nb",
    "stochastic_1d_nb",
    "stochastic_nb",
    "vwap_1d_nb",
    "vwap_nb",
    "williams_r_1d_nb",
    "williams_r_nb",
]

_SIG_HLC_W = types.void(IN2, IN2, IN2, _INT, OUT2)


@njit(cache=True, fastmath=CONTRACT)
def first_valid_all_1d_nb(
    a: Float64Array1D, b: Float64Array1D, c: Float64Array1D, d: Float64Array1D
) -> int:
    """First index where ``a``, ``b``, ``c`` and ``d`` are all non-NaN (``len(a)`` if none)."""
    for i in range(a.shape[0]):
        if not (np.isnan(a[i]) or np.isnan(b[i]) or np.isnan(c[i]) or np.isnan(d[i])):
            return i
    return a.shape[0]


@njit(cache=True, fastmath=CONTRACT)
def _true_range(high: float, low: float, prev_close: float) -> float:
    """TA-Lib's ``TRUE_RANGE``: ``max(h - l, |h - c_prev|, |l - c_prev|)``."""
    out = high - low
    other = abs(high - prev_close)
    out = other if other > out else out
    other = abs(low - prev_close)
    return other if other > out else out


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
    _nan_head(out, s + window)
    if window >= n - s:
        return
    total = 0.0
    for i in range(s + 1, s + window + 1):
        total += _true_range(high[i], low[i], close[i - 1])
    prev = total / window
    out[s + window] = prev
    # ((n - 1) A + TR) / n as A (n - 1) / n + TR / n: no division on the critical path;
    # the previous close is carried in a register (three loads per bar, not four).
    decay = (window - 1) / window
    inv = 1.0 / window
    prev_close = close[s + window]
    for i in range(s + window + 1, n):
        prev = prev * decay + _true_range(high[i], low[i], prev_close) * inv
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


@panel_kernel(_SIG_HLC_W)
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
    if serial_nb(n, k):
        for j in range(k):
            _atr_into(
                column_nb(high, j),
                column_nb(low, j),
                column_nb(close, j),
                window,
                column_nb(out, j),
            )
    else:
        for j in prange(k):
            _atr_into(
                column_nb(high, j),
                column_nb(low, j),
                column_nb(close, j),
                window,
                column_nb(out, j),
            )


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
    _nan_head(out, s + window - 1)
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
    _sma_from(fast_k, s + k_window - 1, smooth_k, k)
    _sma_from(k, s + k_window + smooth_k - 2, d_window, d)
    _nan_head(k, s + lookback)


@njit(cache=True, fastmath=CONTRACT)
def stochastic_1d_nb(
    high: Float64Array1D,
    low: Float64Array1D,
    close: Float64Array1D,
    k_window: int,
    smooth_k: int,
    d_window: int,
) -> tuple[Float64Array1D, Float64Array1D]:
    """Stochastic oscillator (%K, %D) of one series of bars."""
    n = close.shape[0]
    fast_k = np.empty(n)
    k = np.empty(n)
    d = np.empty(n)
    _stochastic_into(high, low, close, k_window, smooth_k, d_window, fast_k, k, d)
    return k, d


@panel_kernel(types.void(IN2, IN2, IN2, _INT, _INT, _INT, OUT2, OUT2))
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
    """Stochastic oscillator (%K, %D) of every column."""
    n, m = close.shape
    check_shape_nb(high, n, m)
    check_shape_nb(low, n, m)
    check_output_nb(k, n, m)
    check_output_nb(d, n, m)
    if serial_nb(n, m):
        for j in range(m):
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
    else:
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


@panel_kernel(_SIG_HLC_W)
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
    if serial_nb(n, k):
        for j in range(k):
            _williams_r_into(
                column_nb(high, j),
                column_nb(low, j),
                column_nb(close, j),
                window,
                column_nb(out, j),
            )
    else:
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
    _nan_head(out, s + window - 1)
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


@panel_kernel(_SIG_HLC_W)
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
    if serial_nb(n, k):
        for j in range(k):
            _cci_into(
                column_nb(high, j),
                column_nb(low, j),
                column_nb(close, j),
                window,
                np.empty(window),
                column_nb(out, j),
            )
    else:
        for j in prange(k):
            _cci_into(
                column_nb(high, j),
                column_nb(low, j),
                column_nb(close, j),
                window,
                np.empty(window),
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
    _nan_head(out, s + lookback)
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
        tr += _true_range(high[i], low[i], close[i - 1])
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
        tr = tr - (tr / w) + _true_range(high[i], low[i], close[i - 1])
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


@panel_kernel(_SIG_HLC_W)
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
    if serial_nb(n, k):
        for j in range(k):
            _adx_into(
                column_nb(high, j),
                column_nb(low, j),
                column_nb(close, j),
                window,
                column_nb(out, j),
            )
    else:
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
    _nan_head(out, s)
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
    if serial_nb(n, k):
        for j in range(k):
            _obv_into(column_nb(close, j), column_nb(volume, j), column_nb(out, j))
    else:
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
    _nan_head(out, s)
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
    if serial_nb(n, k):
        for j in range(k):
            _vwap_into(
                column_nb(high, j),
                column_nb(low, j),
                column_nb(close, j),
                column_nb(volume, j),
                column_nb(out, j),
            )
    else:
        for j in prange(k):
            _vwap_into(
                column_nb(high, j),
                column_nb(low, j),
                column_nb(close, j),
                column_nb(volume, j),
                column_nb(out, j),
            )
