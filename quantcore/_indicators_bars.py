"""Indicators on high/low/close bars and volume; re-exported by :mod:`quantcore.indicators`.

The module-level conventions of :mod:`quantcore.indicators` apply. Bar fields
are aligned by position: they must have the same shape (and pandas inputs the
same index and columns), and a column starts at the first bar where all of its
fields are valid.
"""

from __future__ import annotations

from typing import Any, Generic, NamedTuple

from quantcore._apply import apply
from quantcore._kernels import indicators_bars as _hlc
from quantcore._kernels import indicators_range as _rng
from quantcore._typing import T
from quantcore._validation import check_int

__all__ = [
    "Stochastic",
    "adx",
    "atr",
    "cci",
    "obv",
    "stochastic",
    "vwap",
    "williams_r",
]



class Stochastic(NamedTuple, Generic[T]):
    """Output of :func:`stochastic`."""

    k: T
    d: T


def _window(value: Any, name: str = "window") -> int:
    return check_int(value, name, minimum=1)


def atr(high: T, low: T, close: T, window: int = 14) -> T:
    """Average true range with Wilder's smoothing.

    Parameters
    ----------
    high, low, close : ndarray, Series or DataFrame
        Bar fields of the same shape, 1-D or 2-D (axis 0 time).
    window : int, default 14
        Smoothing period ``n >= 1``.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; NaN for the first ``window`` bars.

    Notes
    -----
    .. math::

        TR_t = \\max(h_t - l_t,\\ |h_t - c_{t-1}|,\\ |l_t - c_{t-1}|), \\quad
        ATR_n = \\frac{1}{n}\\sum_{t=1}^{n} TR_t, \\quad
        ATR_t = \\frac{(n-1)\\,ATR_{t-1} + TR_t}{n}

    A column starts at the first bar where all three fields are valid.
    ``window=1`` gives the true range. Constant bars give 0. Empty input gives
    an empty output and a series of ``window`` bars or fewer is all NaN. A NaN
    high or low makes the rest of the column NaN; a NaN close is skipped by
    the next bar's true range (TA-Lib's comparisons), so only gaps in the
    range propagate.

    References
    ----------
    .. [1] J. W. Wilder, *New Concepts in Technical Trading Systems*, 1978.
    .. [2] TA-Lib, ``TA_ATR``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import atr
    >>> high, low = np.array([11.0, 12.0, 13.0, 12.0]), np.array([9.0, 10.0, 11.0, 8.0])
    >>> atr(high, low, (high + low) / 2, window=2)  # TR = 2, 2, 4
    array([nan, nan,  2.,  3.])
    """
    w = _window(window)
    return apply(_hlc.atr_nb, {"high": high, "low": low, "close": close}, (w,))[0]


def stochastic(
    high: T, low: T, close: T, k_window: int = 14, d_window: int = 3, *, smooth_k: int = 3
) -> Stochastic[T]:
    """Stochastic oscillator (slow %K and %D), in ``[0, 100]``.

    Parameters
    ----------
    high, low, close : ndarray, Series or DataFrame
        Bar fields of the same shape, 1-D or 2-D (axis 0 time).
    k_window : int, default 14
        Look-back of the highest high and lowest low, ``>= 1``.
    d_window : int, default 3
        SMA period of %D over %K, ``>= 1``.
    smooth_k : int, default 3
        SMA period applied to the raw (fast) %K, ``>= 1``; ``smooth_k=1`` gives
        the fast stochastic (TA-Lib ``STOCHF``).

    Returns
    -------
    Stochastic
        Named tuple ``(k, d)``, each the same kind and shape as ``close``; both
        NaN for the first ``k_window + smooth_k + d_window - 3`` bars.

    Notes
    -----
    .. math::

        \\%K^{fast}_t = 100 \\frac{c_t - \\min_{n} l}{\\max_{n} h - \\min_{n} l}, \\quad
        \\%K_t = \\mathrm{SMA}_{s}(\\%K^{fast})_t, \\quad
        \\%D_t = \\mathrm{SMA}_{d}(\\%K)_t

    This is ``talib.STOCH(fastk_period=k_window, slowk_period=smooth_k,
    slowk_matype=0, slowd_period=d_window, slowd_matype=0)`` (TA-Lib's default
    SMA smoothing). As in TA-Lib, a bar whose range is zero (e.g. constant
    input) has a fast %K of 0. Empty input gives an empty output and a series
    shorter than the warm-up is all NaN. A NaN bar makes fast %K NaN while it
    is in the window, and the SMA smoothing then carries it to the end of the
    column.

    References
    ----------
    .. [1] G. Lane, "Lane's Stochastics", *Technical Analysis of Stocks & Commodities*, 1984.
    .. [2] TA-Lib, ``TA_STOCH``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import stochastic
    >>> high, low = np.array([2.0, 3.0, 4.0, 5.0]), np.array([0.0, 1.0, 2.0, 3.0])
    >>> k, d = stochastic(high, low, high - 0.5, k_window=2, d_window=2, smooth_k=1)
    >>> k  # (3.5 - 1) / (4 - 1), (4.5 - 2) / (5 - 2); NaN until %D starts
    array([        nan,         nan, 83.33333333, 83.33333333])
    """
    kw = _window(k_window, "k_window")
    dw = _window(d_window, "d_window")
    sk = _window(smooth_k, "smooth_k")
    fields = {"high": high, "low": low, "close": close}
    return Stochastic(*apply(_rng.stochastic_nb, fields, (kw, sk, dw), 2))


def williams_r(high: T, low: T, close: T, window: int = 14) -> T:
    """Williams %R, in ``[-100, 0]``.

    Parameters
    ----------
    high, low, close : ndarray, Series or DataFrame
        Bar fields of the same shape, 1-D or 2-D (axis 0 time).
    window : int, default 14
        Look-back of the highest high and lowest low, ``>= 1``.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; NaN for the first ``window - 1`` bars.

    Notes
    -----
    .. math:: \\%R_t = -100 \\frac{\\max_{n} h - c_t}{\\max_{n} h - \\min_{n} l}

    As in TA-Lib, a bar whose range is zero (e.g. constant input) gives 0.
    Empty input gives an empty output and a series shorter than ``window`` is
    all NaN. A NaN high or low makes %R NaN while it is in the window (TA-Lib
    would skip it), a NaN close only on its own bar.

    References
    ----------
    .. [1] L. Williams, *How I Made One Million Dollars Last Year Trading Commodities*, 1973.
    .. [2] TA-Lib, ``TA_WILLR``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import williams_r
    >>> williams_r(np.array([10.0, 12.0]), np.array([8.0, 9.0]), np.array([9.0, 11.0]), window=2)
    array([ nan, -25.])
    """
    w = _window(window)
    return apply(_rng.williams_r_nb, {"high": high, "low": low, "close": close}, (w,))[0]


def cci(high: T, low: T, close: T, window: int = 20) -> T:
    """Commodity channel index.

    Parameters
    ----------
    high, low, close : ndarray, Series or DataFrame
        Bar fields of the same shape, 1-D or 2-D (axis 0 time).
    window : int, default 20
        Number of bars ``n >= 1``.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; NaN for the first ``window - 1`` bars.

    Notes
    -----
    With the typical price :math:`p_t = (h_t + l_t + c_t) / 3`, its ``n``-bar
    mean :math:`\\bar p_t` and mean absolute deviation :math:`D_t`,

    .. math:: CCI_t = \\frac{p_t - \\bar p_t}{0.015\\, D_t}

    and 0 where :math:`p_t = \\bar p_t` or :math:`D_t = 0` (constant input), as
    in TA-Lib. O(``n``) work per bar. Empty input gives an empty output and a
    series shorter than ``window`` is all NaN; a NaN makes the bars whose
    window contains it NaN.

    References
    ----------
    .. [1] D. Lambert, "Commodity Channel Index", *Commodities*, 1980.
    .. [2] TA-Lib, ``TA_CCI``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import cci
    >>> p = np.array([1.0, 2.0, 3.0])
    >>> cci(p, p, p, window=3)  # (3 - 2) / (0.015 * 2 / 3)
    array([ nan,  nan, 100.])
    """
    w = _window(window)
    return apply(_rng.cci_nb, {"high": high, "low": low, "close": close}, (w,))[0]


def adx(high: T, low: T, close: T, window: int = 14) -> T:
    """Average directional index (Wilder), in ``[0, 100]``.

    Parameters
    ----------
    high, low, close : ndarray, Series or DataFrame
        Bar fields of the same shape, 1-D or 2-D (axis 0 time).
    window : int, default 14
        Smoothing period ``n >= 1``.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; NaN for the first ``2 * window - 1`` bars.

    Notes
    -----
    With :math:`u_t = h_t - h_{t-1}` and :math:`v_t = l_{t-1} - l_t`,
    :math:`+DM_t = u_t` if :math:`u_t > v_t` and :math:`u_t > 0` (else 0),
    :math:`-DM_t = v_t` if :math:`v_t > u_t` and :math:`v_t > 0` (else 0).
    :math:`+DM`, :math:`-DM` and the true range are summed over the first
    ``n - 1`` moves, then Wilder-smoothed (:math:`S_t = S_{t-1} - S_{t-1}/n + x_t`);

    .. math::

        \\pm DI_t = 100 \\frac{\\pm DM_t}{TR_t}, \\quad
        DX_t = 100 \\frac{|{+DI_t} - {-DI_t}|}{{+DI_t} + {-DI_t}}, \\quad
        ADX_t = \\frac{(n-1)\\,ADX_{t-1} + DX_t}{n}

    the first ADX being the mean of the first ``n`` DX values. As in TA-Lib, a
    bar whose smoothed TR or DI sum is below :math:`10^{-8}` leaves the ADX
    unchanged (constant input gives 0). Empty, short and NaN inputs behave as
    in :func:`sma`.

    References
    ----------
    .. [1] J. W. Wilder, *New Concepts in Technical Trading Systems*, 1978.
    .. [2] TA-Lib, ``TA_ADX``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import adx
    >>> high = np.arange(10.0, 16.0)  # a steady up-trend: +DM every bar, no -DM
    >>> adx(high, high - 1.0, high - 0.5, window=2)
    array([ nan,  nan,  nan, 100., 100., 100.])
    """
    w = _window(window)
    return apply(_hlc.adx_nb, {"high": high, "low": low, "close": close}, (w,))[0]


def obv(close: T, volume: T) -> T:
    """On-balance volume.

    Parameters
    ----------
    close, volume : ndarray, Series or DataFrame
        Closes and traded volumes of the same shape, 1-D or 2-D (axis 0 time).

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; no warm-up.

    Notes
    -----
    .. math::

        OBV_s = v_s, \\quad
        OBV_t = OBV_{t-1} + \\operatorname{sign}(c_t - c_{t-1})\\, v_t

    starting, like ``TA_OBV``, with the first bar's volume (not 0) at the first
    bar where both inputs are valid. A later NaN close or volume makes the rest
    of the column NaN (TA-Lib instead carries the last value through a NaN
    close, e.g. after a series ends). Empty input gives an empty output.

    References
    ----------
    .. [1] J. Granville, *Granville's New Key to Stock Market Profits*, 1963.
    .. [2] TA-Lib, ``TA_OBV``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import obv
    >>> obv(np.array([10.0, 11.0, 10.5, 10.5]), np.array([100.0, 50.0, 30.0, 70.0]))
    array([100., 150., 120., 120.])
    """
    return apply(_hlc.obv_nb, {"close": close, "volume": volume}, ())[0]


def vwap(high: T, low: T, close: T, volume: T) -> T:
    """Cumulative volume-weighted average price of the typical price, from the first bar.

    Parameters
    ----------
    high, low, close, volume : ndarray, Series or DataFrame
        Bar fields and traded volumes of the same shape, 1-D or 2-D (axis 0 time).

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; no warm-up.

    Notes
    -----
    TA-Lib has no VWAP; this one is anchored at the first bar where all four
    inputs are valid (not reset per session; slice the input to anchor elsewhere):

    .. math::

        p_t = \\frac{h_t + l_t + c_t}{3}, \\quad
        VWAP_t = \\frac{\\sum_{i \\le t} p_i v_i}{\\sum_{i \\le t} v_i}

    NaN while the cumulative volume is 0. An interior NaN makes the rest of
    the column NaN. Empty input gives an empty output.

    References
    ----------
    .. [1] S. Berkowitz, D. Logue, E. Noser, "The Total Cost of Transactions on
       the NYSE", *Journal of Finance* 43(1), 1988.

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import vwap
    >>> p = np.array([10.0, 20.0, 30.0])
    >>> vwap(p, p, p, np.array([0.0, 1.0, 3.0]))  # (20 * 1 + 30 * 3) / 4
    array([ nan, 20. , 27.5])
    """
    fields = {"high": high, "low": low, "close": close, "volume": volume}
    return apply(_hlc.vwap_nb, fields, ())[0]
