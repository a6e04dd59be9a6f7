"""Technical indicators with TA-Lib's conventions, for one series or a panel of assets.

Every function accepts a 1-D ``ndarray`` / ``pd.Series`` (one asset) or a 2-D
``ndarray`` / ``pd.DataFrame`` (axis 0 time, one column per asset), and gives
back the same kind with the index and columns kept. Multi-output indicators
return a named tuple.

Conventions shared by every indicator (each docstring adds its own):

* **TA-Lib parity.** Values equal ``talib``'s (relative error far below 1e-9):
  EMAs are seeded with the SMA of their first ``window`` values, RSI, ATR and
  ADX use Wilder's smoothing, MACD aligns its EMAs like ``TA_MACD``.
* **Warm-up.** The first ``lookback`` values of a series are NaN.
* **Leading NaNs.** A column that starts later than the panel is computed from
  its first valid value, as if the series started there (what the ``talib``
  wrapper does); with several inputs, from the first bar where all are valid.
* **Interior NaNs** (a gap after the start, or a series that ends before the
  panel) follow the arithmetic: running sums and recursions (SMA, EMA, WMA,
  RSI, MACD, Bollinger, ATR, ADX, OBV, VWAP, the %K/%D smoothing) are NaN from
  there to the end of the column; ROC only on the two bars whose ratio uses
  it; CCI, Williams %R and fast %K while their window holds it. ATR's true
  range skips a NaN previous close, as TA-Lib's does. Fill or drop gaps first
  if that matters. Where TA-Lib 0.8 turns a NaN into a number (RSI 0, a frozen
  ADX, an OBV carried through a NaN close, a WMA resuming after a gap, a %R
  computed around a NaN high) we give NaN.
* **Short or empty input.** A series shorter than the warm-up is all NaN; an
  empty input gives an empty output; an all-NaN column stays all NaN.
* **Bad arguments** (a window that is not a positive integer, inputs of
  different shapes) raise ``ValueError`` naming the parameter.
"""

from __future__ import annotations

from typing import Any, Generic, NamedTuple

from quantcore._apply import apply, apply1
from quantcore._indicators_bars import (
    Stochastic,
    adx,
    atr,
    cci,
    obv,
    stochastic,
    vwap,
    williams_r,
)
from quantcore._kernels import indicators_ma as _ma
from quantcore._typing import T
from quantcore._validation import check_int, check_positive

__all__ = [
    "BollingerBands",
    "MACDResult",
    "Stochastic",
    "adx",
    "atr",
    "bollinger_bands",
    "cci",
    "ema",
    "macd",
    "obv",
    "roc",
    "rsi",
    "sma",
    "stochastic",
    "vwap",
    "williams_r",
    "wma",
]



class MACDResult(NamedTuple, Generic[T]):
    """Output of :func:`macd`."""

    macd: T
    signal: T
    histogram: T


class BollingerBands(NamedTuple, Generic[T]):
    """Output of :func:`bollinger_bands`."""

    upper: T
    middle: T
    lower: T


def _window(value: Any, name: str = "window", *, minimum: int = 1) -> int:
    return check_int(value, name, minimum=minimum)


def sma(close: T, window: int) -> T:
    """Simple moving average.

    Parameters
    ----------
    close : ndarray, Series or DataFrame
        Prices, 1-D (one asset) or 2-D (axis 0 time, one column per asset).
    window : int
        Number of observations averaged, ``>= 1``.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; the first ``window - 1`` values of each
        column (after its leading NaNs) are NaN.

    Notes
    -----
    .. math:: \\mathrm{SMA}_t = \\frac{1}{n} \\sum_{i=0}^{n-1} x_{t-i}

    computed with a running sum like ``TA_SMA``. Empty input gives an empty
    output; a series shorter than ``window`` is all NaN; a constant series
    gives the constant; an interior NaN makes the rest of the column NaN.

    References
    ----------
    .. [1] TA-Lib, ``TA_SMA``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import sma
    >>> sma(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 3)
    array([nan, nan,  2.,  3.,  4.])
    """
    w = _window(window)
    return apply1(_ma.sma_nb, close, w)


def ema(close: T, window: int) -> T:
    """Exponential moving average, seeded with the simple average of the first ``window`` values.

    Parameters
    ----------
    close : ndarray, Series or DataFrame
        Prices, 1-D or 2-D (axis 0 time).
    window : int
        Span ``n >= 1``; the smoothing factor is ``alpha = 2 / (n + 1)``.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; NaN for the first ``window - 1`` values.

    Notes
    -----
    .. math::

        \\mathrm{EMA}_{n-1} = \\frac{1}{n}\\sum_{i=0}^{n-1} x_i, \\qquad
        \\mathrm{EMA}_t = \\mathrm{EMA}_{t-1} + \\alpha (x_t - \\mathrm{EMA}_{t-1})

    (TA-Lib's default seeding, unlike pandas' ``ewm(adjust=False)`` which seeds
    with ``x_0``). ``window=1`` returns the input. Empty, short, constant and
    NaN inputs behave as in :func:`sma`.

    References
    ----------
    .. [1] TA-Lib, ``TA_EMA``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import ema
    >>> ema(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 3)
    array([nan, nan,  2.,  3.,  4.])
    >>> ema(np.array([1.0, 2.0, 3.0, 10.0]), 3)
    array([nan, nan,  2.,  6.])
    """
    w = _window(window)
    return apply1(_ma.ema_nb, close, w)


def wma(close: T, window: int) -> T:
    """Linearly weighted moving average (weights ``1, 2, ..., window``, newest heaviest).

    Parameters
    ----------
    close : ndarray, Series or DataFrame
        Prices, 1-D or 2-D (axis 0 time).
    window : int
        Number of observations, ``>= 1``.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; NaN for the first ``window - 1`` values.

    Notes
    -----
    .. math:: \\mathrm{WMA}_t = \\frac{\\sum_{i=1}^{n} i\\, x_{t-n+i}}{n(n+1)/2}

    updated in O(1) per bar like ``TA_WMA``. Empty, short, constant and NaN
    inputs behave as in :func:`sma`.

    References
    ----------
    .. [1] TA-Lib, ``TA_WMA``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import wma
    >>> wma(np.array([1.0, 2.0, 3.0, 4.0]), 3)  # (1*1 + 2*2 + 3*3) / 6 = 14 / 6
    array([ nan,  nan, 2.33333333, 3.33333333])
    """
    w = _window(window)
    return apply1(_ma.wma_nb, close, w)


def rsi(close: T, window: int = 14) -> T:
    """Relative strength index with Wilder's smoothing, in ``[0, 100]``.

    Parameters
    ----------
    close : ndarray, Series or DataFrame
        Prices, 1-D or 2-D (axis 0 time).
    window : int, default 14
        Smoothing period ``n >= 1``.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; NaN for the first ``window`` values
        (``window`` price changes are needed for the first value).

    Notes
    -----
    With :math:`d_t = x_t - x_{t-1}`, the average gain :math:`G` and loss
    :math:`L` are seeded with the plain means of :math:`\\max(d, 0)` and
    :math:`\\max(-d, 0)` over the first ``n`` changes, then

    .. math::

        G_t = \\frac{(n-1) G_{t-1} + \\max(d_t, 0)}{n}, \\quad
        L_t = \\frac{(n-1) L_{t-1} + \\max(-d_t, 0)}{n}, \\quad
        \\mathrm{RSI}_t = 100 \\frac{G_t}{G_t + L_t}.

    As in TA-Lib, RSI is 0 when :math:`|G_t + L_t| < 10^{-8}`, so a constant
    series gives 0 (not 50). Empty or short input gives NaN. An interior NaN
    makes the rest of the column NaN (TA-Lib 0.8 reports 0 there instead;
    we keep NaN in, NaN out).

    References
    ----------
    .. [1] J. W. Wilder, *New Concepts in Technical Trading Systems*, 1978.
    .. [2] TA-Lib, ``TA_RSI``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import rsi
    >>> rsi(np.array([1.0, 2.0, 1.0, 2.0, 3.0]), window=2)
    array([ nan,  nan, 50. , 75. , 87.5])
    """
    w = _window(window)
    return apply1(_ma.rsi_nb, close, w)


def macd(close: T, fast: int = 12, slow: int = 26, signal: int = 9) -> MACDResult[T]:
    """Moving-average convergence divergence: MACD line, signal line and histogram.

    Parameters
    ----------
    close : ndarray, Series or DataFrame
        Prices, 1-D or 2-D (axis 0 time).
    fast : int, default 12
        Span of the fast EMA, ``>= 1`` and smaller than ``slow``.
    slow : int, default 26
        Span of the slow EMA.
    signal : int, default 9
        Span of the EMA of the MACD line, ``>= 1``.

    Returns
    -------
    MACDResult
        Named tuple ``(macd, signal, histogram)``, each the same kind and shape
        as ``close``; all three are NaN for the first ``slow + signal - 2`` values.

    Notes
    -----
    .. math::

        \\mathrm{MACD}_t = \\mathrm{EMA}^{fast}_t - \\mathrm{EMA}^{slow}_t, \\quad
        \\mathrm{Signal}_t = \\mathrm{EMA}^{signal}(\\mathrm{MACD})_t, \\quad
        \\mathrm{Hist}_t = \\mathrm{MACD}_t - \\mathrm{Signal}_t

    with TA-Lib's alignment: both EMAs start on bar ``slow - 1``; the slow one
    is seeded with the mean of the first ``slow`` prices and the fast one with
    the mean of the ``fast`` prices ending on that same bar (so the fast EMA
    ignores the first ``slow - fast`` prices). The signal EMA is seeded with the
    mean of the first ``signal`` MACD values. A constant series gives zeros;
    empty, short and NaN inputs behave as in :func:`sma`.

    References
    ----------
    .. [1] G. Appel, *Technical Analysis: Power Tools for Active Investors*, 2005.
    .. [2] TA-Lib, ``TA_MACD``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import macd
    >>> line, sig, hist = macd(np.arange(1.0, 8.0), fast=2, slow=3, signal=2)
    >>> line  # EMA(2) - EMA(3) of a straight line: a constant lag difference
    array([nan, nan, nan, 0.5, 0.5, 0.5, 0.5])
    >>> hist
    array([nan, nan, nan, 0., 0., 0., 0.])
    """
    f = _window(fast, "fast")
    s = _window(slow, "slow", minimum=2)
    g = _window(signal, "signal")
    if f >= s:
        raise ValueError(f"fast must be smaller than slow, got fast={f} and slow={s}")
    return MACDResult(*apply(_ma.macd_nb, {"close": close}, (f, s, g), 3))


def bollinger_bands(close: T, window: int = 20, num_std: float = 2.0) -> BollingerBands[T]:
    """Bollinger bands: an SMA and bands ``num_std`` population deviations above and below.

    Parameters
    ----------
    close : ndarray, Series or DataFrame
        Prices, 1-D or 2-D (axis 0 time).
    window : int, default 20
        Number of observations, ``>= 1``.
    num_std : float, default 2.0
        Width of the bands in standard deviations, finite and ``>= 0``.

    Returns
    -------
    BollingerBands
        Named tuple ``(upper, middle, lower)``, each the same kind and shape as
        ``close``; NaN for the first ``window - 1`` values.

    Notes
    -----
    .. math::

        m_t = \\mathrm{SMA}_t, \\quad
        \\sigma_t = \\sqrt{\\tfrac{1}{n}\\sum_{i=0}^{n-1} x_{t-i}^2 - m_t^2}, \\quad
        (m_t + k\\sigma_t,\\; m_t,\\; m_t - k\\sigma_t)

    with the population deviation (``ddof=0``) from running sums, as
    ``TA_BBANDS`` with an SMA middle band. Where the difference of the two
    running means cancels to rounding noise (a variance below :math:`10^{-9}`
    of the mean square) it is recomputed from the window's deviations, so a
    flat window has zero width at any price level (TA-Lib returns the noise
    there). As in TA-Lib, a variance below :math:`10^{-8}` counts as zero: a
    constant series gives three equal bands. Empty, short and NaN inputs
    behave as in :func:`sma`.

    References
    ----------
    .. [1] J. Bollinger, *Bollinger on Bollinger Bands*, 2001.
    .. [2] TA-Lib, ``TA_BBANDS``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import bollinger_bands
    >>> upper, middle, lower = bollinger_bands(np.array([1.0, 3.0, 1.0, 3.0]), window=2)
    >>> upper, middle, lower
    (array([nan, 3., 3., 3.]), array([nan, 2., 2., 2.]), array([nan, 1., 1., 1.]))
    """
    w = _window(window)
    k = check_positive(num_std, "num_std", allow_zero=True)
    return BollingerBands(*apply(_ma.bollinger_nb, {"close": close}, (w, k), 3))


def roc(close: T, window: int) -> T:
    """Rate of change in percent over ``window`` bars.

    Parameters
    ----------
    close : ndarray, Series or DataFrame
        Prices, 1-D or 2-D (axis 0 time).
    window : int
        Number of bars back, ``>= 1``.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``close``; NaN for the first ``window`` values.

    Notes
    -----
    .. math:: \\mathrm{ROC}_t = 100 \\left(\\frac{x_t}{x_{t-n}} - 1\\right)

    As in TA-Lib, the value is 0 where :math:`x_{t-n} = 0`. A constant series
    gives zeros. Empty input gives an empty output and a series of ``window``
    values or fewer is all NaN; a NaN makes only the two bars whose ratio uses
    it NaN.

    References
    ----------
    .. [1] TA-Lib, ``TA_ROC``, https://ta-lib.org/functions/

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.indicators import roc
    >>> roc(np.array([100.0, 110.0, 99.0]), 1)
    array([ nan,  10., -10.])
    """
    w = _window(window)
    return apply1(_ma.roc_nb, close, w)
