"""Built-in signal generators: pure functions ``(prices, **params) -> (entries, exits)``.

Each strategy computes its indicator with the recursion the fused sweep kernel
uses (:func:`quantcore._kernels.backtest_signals.signal_block_nb`), so a sweep row equals
:func:`run_strategy` with the same parameters. The indicators follow TA-Lib's
conventions (SMA rolling sum; EMA seeded with an SMA; Wilder RSI; population
standard deviation in the Bollinger bands) and agree with
:mod:`quantcore.indicators` and TA-Lib to rounding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from quantcore._deprecation import warn_renamed
from quantcore._kernels.backtest_signals import (
    STRATEGY_BUY_HOLD,
    STRATEGY_MEAN_REVERSION,
    STRATEGY_MOMENTUM,
    STRATEGY_MOVING_AVERAGE,
    STRATEGY_RSI,
    signals_1d,
)
from quantcore._validation import check_int
from quantcore.backtest.engine import first_valid, load_prices

__all__ = [
    "STRATEGIES",
    "Param",
    "Signals",
    "Strategy",
    "buy_hold",
    "encode_params",
    "generate",
    "get_strategy",
    "mean_reversion",
    "momentum",
    "moving_average",
    "rsi",
]


#: Entry and exit signals, booleans of the kind of the closes given: 1-D or 2-D
#: arrays, two Series (one asset) or two DataFrames (a panel).
Signals: TypeAlias = (
    "tuple[np.ndarray, np.ndarray] | tuple[pd.Series, pd.Series] | tuple[pd.DataFrame, pd.DataFrame]"
)


def _number(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def _window(minimum: int) -> Callable[[Any, str], float]:
    def check(value: Any, name: str) -> float:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return float(check_int(value, name, minimum=minimum))

    return check


def _non_negative(value: Any, name: str) -> float:
    v = _number(value, name)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return v


def _positive(value: Any, name: str) -> float:
    v = _number(value, name)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def _percent(value: Any, name: str) -> float:
    v = _number(value, name)
    if not 0.0 <= v <= 100.0:
        raise ValueError(f"{name} must be in [0, 100], got {value!r}")
    return v


def _ma_type(value: Any, name: str) -> float:
    if value not in ("sma", "ema"):
        raise ValueError(f"{name} must be 'sma' or 'ema', got {value!r}")
    return 1.0 if value == "ema" else 0.0


@dataclass(frozen=True, slots=True)
class Param:
    """One strategy parameter: its default, kernel slot (p0, p1, p2) and validator."""

    name: str
    default: Any
    slot: int
    check: Callable[[Any, str], float]


@dataclass(frozen=True, slots=True)
class Strategy:
    """A registered strategy: kernel code, parameters and the constraint between them.

    ``ordered`` names two parameters that must be strictly increasing
    (``short_window < long_window``); grid combinations violating it are skipped.
    ``renamed`` pairs deprecated parameter names with the current ones: :meth:`resolve`
    accepts them with a ``DeprecationWarning``.
    """

    name: str
    code: int
    params: tuple[Param, ...] = ()
    ordered: tuple[str, str] | None = None
    renamed: tuple[tuple[str, str], ...] = ()

    @property
    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def check_names(self, names: Any) -> None:
        """Raise a ValueError naming parameters this strategy does not have.

        A deprecated name is refused here too (saying its new name): callers pass
        their parameters through :meth:`resolve`, which renames it.
        """
        unknown = sorted(set(names) - set(self.defaults))
        if unknown:
            allowed = ", ".join(self.defaults) or "none"
            hint = "".join(
                f"; {old!r} is now {new!r}" for old, new in self.renamed if old in unknown
            )
            raise ValueError(
                f"unknown parameter(s) {', '.join(map(str, unknown))} for strategy "
                f"{self.name!r} (allowed: {allowed}){hint}"
            )

    def resolve(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` with deprecated names renamed (each warns), checked with :meth:`check_names`.

        A mapping (a parameter set, or a sweep's grid of values) goes in; a new
        dict comes out, the caller's mapping is left alone.
        """
        out = dict(params)
        for old, new in self.renamed:
            if old in out:
                if new in out:
                    raise ValueError(f"give {new!r} or its deprecated name {old!r}, not both")
                warn_renamed(f"the {self.name} parameter {old!r}", repr(new), stacklevel=4)
                out[new] = out.pop(old)
        self.check_names(out)
        return out

    def encode(self, params: Mapping[str, Any]) -> tuple[float, float, float]:
        """Validate one parameter set (defaults filled in) as the kernel's ``(p0, p1, p2)``."""
        params = self.resolve(params)
        merged = {**self.defaults, **params}
        slots = [0.0, 0.0, 0.0]
        for p in self.params:
            slots[p.slot] = p.check(merged[p.name], p.name)
        if self.ordered is not None:
            lo, hi = self.ordered
            if not merged[lo] < merged[hi]:
                raise ValueError(f"{lo} must be < {hi}, got {merged[lo]!r} and {merged[hi]!r}")
        return slots[0], slots[1], slots[2]


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("buy_hold", STRATEGY_BUY_HOLD),
        Strategy(
            "moving_average",
            STRATEGY_MOVING_AVERAGE,
            (
                Param("short_window", 10, 0, _window(1)),
                Param("long_window", 50, 1, _window(2)),
                Param("ma_type", "sma", 2, _ma_type),
            ),
            ordered=("short_window", "long_window"),
        ),
        Strategy(
            "momentum",
            STRATEGY_MOMENTUM,
            (Param("window", 20, 0, _window(1)), Param("threshold", 0.0, 1, _non_negative)),
            renamed=(("lookback", "window"),),
        ),
        Strategy(
            "mean_reversion",
            STRATEGY_MEAN_REVERSION,
            (Param("window", 20, 0, _window(2)), Param("num_std", 2.0, 1, _positive)),
        ),
        Strategy(
            "rsi",
            STRATEGY_RSI,
            (
                Param("window", 14, 0, _window(2)),
                Param("oversold", 30.0, 1, _percent),
                Param("overbought", 70.0, 2, _percent),
            ),
            ordered=("oversold", "overbought"),
        ),
    )
}


def get_strategy(name: Any) -> Strategy:
    """Look a strategy up by name (ValueError listing the known names)."""
    if not isinstance(name, str) or name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {name!r}")
    return STRATEGIES[name]


def encode_params(name: str, params: Mapping[str, Any]) -> tuple[float, float, float]:
    """Validate a strategy's parameters and encode them as the kernel's ``(p0, p1, p2)``."""
    return get_strategy(name).encode(params)


def generate(name: str, prices: Any, params: Mapping[str, Any]) -> Signals:
    """Entry and exit signals of the registered strategy ``name`` with registry parameters.

    ``params`` are named as in :data:`STRATEGIES` (omitted ones take their defaults);
    the strategy functions of this module are this with keyword arguments.

    Examples
    --------
    >>> e, x = generate("momentum", np.array([1.0, 2.0, 1.5, 1.0]), {"window": 1})
    >>> e.tolist(), x.tolist()
    ([False, True, False, False], [False, False, True, True])
    """
    strategy = get_strategy(name)
    p0, p1, p2 = strategy.encode(params)
    data = load_prices(prices, "close", allow_gaps=False)
    close = data.close
    first = first_valid(close)
    n, k = close.shape
    entries = np.zeros((n, k), dtype=np.bool_)
    exits = np.zeros((n, k), dtype=np.bool_)
    for j in range(k):
        col = np.array(close[:, j], dtype=np.float64)  # writable: the type the sweeps pass
        entries[:, j], exits[:, j] = signals_1d(strategy.code, col, int(first[j]), p0, p1, p2)
    w = data.wrapper
    if w.kind == "ndarray1":
        return entries[:, 0], exits[:, 0]
    if w.kind == "ndarray2":
        return entries, exits
    if w.kind == "series":
        return (
            pd.Series(entries[:, 0], index=w.index, name="entries"),
            pd.Series(exits[:, 0], index=w.index, name="exits"),
        )
    return (
        pd.DataFrame(entries, index=w.index, columns=w.columns),
        pd.DataFrame(exits, index=w.index, columns=w.columns),
    )


def buy_hold(prices: Any) -> Signals:
    """Enter at each asset's first price and never exit.

    Parameters
    ----------
    prices : Series, DataFrame or ndarray
        Closes (an OHLC frame's ``Close`` is used).

    Returns
    -------
    entries, exits
        Boolean signals of the kind given.

    Examples
    --------
    >>> e, x = buy_hold(np.array([np.nan, 1.0, 2.0]))
    >>> e.tolist(), x.tolist()
    ([False, True, False], [False, False, False])
    """
    return generate("buy_hold", prices, {})


def moving_average(
    prices: Any, *, short_window: int = 10, long_window: int = 50, ma_type: str = "sma"
) -> Signals:
    """Moving-average crossover: long while the fast average is above the slow one.

    Parameters
    ----------
    prices : Series, DataFrame or ndarray
        Closes.
    short_window, long_window : int
        Windows of the fast and slow averages; ``short_window < long_window``.
    ma_type : {"sma", "ema"}
        Simple, or exponential seeded with the SMA of the first window (TA-Lib).

    Returns
    -------
    entries, exits

    Notes
    -----
    With ``f`` the fast and ``s`` the slow average (backtesting.py's ``crossover``):

    .. math:: \\text{entry}_t = f_{t-1} < s_{t-1} \\wedge f_t > s_t, \\qquad
              \\text{exit}_t = f_{t-1} > s_{t-1} \\wedge f_t < s_t

    Examples
    --------
    >>> close = np.array([5.0, 4.0, 3.0, 4.0, 6.0, 7.0, 3.0, 2.0])
    >>> e, x = moving_average(close, short_window=1, long_window=3)
    >>> np.flatnonzero(e).tolist(), np.flatnonzero(x).tolist()
    ([3], [6])
    """
    params = {"short_window": short_window, "long_window": long_window, "ma_type": ma_type}
    return generate("moving_average", prices, params)


def momentum(
    prices: Any, *, window: int = 20, threshold: float = 0.0, lookback: int | None = None
) -> Signals:
    """Time-series momentum: enter when the return over ``window`` bars exceeds ``threshold``.

    Parameters
    ----------
    prices : Series, DataFrame or ndarray
        Closes.
    window : int, default 20
        Bars between the two closes compared (``L`` below).
    threshold : float, default 0.0
        Entry above ``threshold``, exit below ``-threshold`` (``>= 0``).
    lookback : int, optional
        Deprecated spelling of ``window`` (warns with a ``DeprecationWarning``).

    Returns
    -------
    entries, exits

    Notes
    -----
    :math:`m_t = p_t / p_{t-L} - 1`; entry when :math:`m_t > \\theta`, exit when
    :math:`m_t < -\\theta` (``threshold >= 0``). :data:`STRATEGIES` and so
    :func:`quantcore.backtest.run_strategy` and :func:`quantcore.backtest.sweep` name
    it ``window`` too; ``lookback`` still works there, with a ``DeprecationWarning``.

    Examples
    --------
    >>> e, x = momentum(np.array([1.0, 2.0, 1.5, 1.0]), window=1)
    >>> e.tolist(), x.tolist()
    ([False, True, False, False], [False, False, True, True])
    """
    if lookback is not None:
        warn_renamed("momentum(lookback=...)", "momentum(window=...)")
        window = lookback
    check_int(window, "window", minimum=1)
    return generate("momentum", prices, {"window": window, "threshold": threshold})


def mean_reversion(prices: Any, *, window: int = 20, num_std: float = 2.0) -> Signals:
    """Bollinger mean reversion: enter below the lower band, exit at the middle band.

    Notes
    -----
    :math:`m_t` is the SMA and :math:`\\sigma_t` the population standard deviation
    of the last ``window`` closes; entry when :math:`p_t < m_t - k \\sigma_t`,
    exit when :math:`p_t \\ge m_t`.

    Examples
    --------
    >>> e, x = mean_reversion(np.array([10.0, 10.0, 10.0, 7.0, 10.0]), window=3, num_std=1.0)
    >>> np.flatnonzero(e).tolist(), np.flatnonzero(x).tolist()
    ([3], [2, 4])
    """
    return generate("mean_reversion", prices, {"window": window, "num_std": num_std})


def rsi(
    prices: Any, *, window: int = 14, oversold: float = 30.0, overbought: float = 70.0
) -> Signals:
    """RSI reversal: enter when RSI is below ``oversold``, exit above ``overbought``.

    Notes
    -----
    Wilder's RSI as TA-Lib computes it: the first average gain and loss are the
    means of the first ``window`` changes, then
    :math:`g_t = (g_{t-1} (w - 1) + u_t) / w`; :math:`RSI = 100 g / (g + l)`.

    Examples
    --------
    >>> e, x = rsi(np.array([5.0, 4.0, 3.0, 4.0, 6.0]), window=2)
    >>> np.flatnonzero(e).tolist(), np.flatnonzero(x).tolist()
    ([2], [4])
    """
    params = {"window": window, "oversold": oversold, "overbought": overbought}
    return generate("rsi", prices, params)
