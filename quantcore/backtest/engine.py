"""The signal backtest engine: entries and exits in, a :class:`BacktestResult` out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from quantcore._kernels.backtest import equity_stats_nb, simulate_nb
from quantcore._kernels.backtest_orders import (
    DIRECTION_BOTH,
    DIRECTION_LONG,
    DIRECTION_SHORT,
    SIZE_AMOUNT,
    SIZE_PERCENT,
    SIZE_TARGET_PERCENT,
    SIZE_UNITS,
)
from quantcore._records import TRADE_CLOSED, trade_dt
from quantcore._validation import Wrapper, as_float64_2d, check_positive
from quantcore.backtest.result import BacktestResult

__all__ = [
    "EngineOptions",
    "PriceData",
    "as_signal",
    "benchmark_metrics",
    "close_part",
    "first_valid",
    "load_prices",
    "price_parts",
    "run",
    "simulate",
]

_DIRECTIONS = {"long": DIRECTION_LONG, "short": DIRECTION_SHORT, "both": DIRECTION_BOTH}
_SIZE_TYPES = {
    "percent": SIZE_PERCENT,
    "amount": SIZE_AMOUNT,
    "units": SIZE_UNITS,
    "target_percent": SIZE_TARGET_PERCENT,
}
_FILLS = ("close", "next_open")
#: What :func:`price_parts` hands back untouched when it is not an OHLC frame.
P = TypeVar("P")
_NAN = float("nan")


def _stop(value: Any, name: str, *, below_one: bool) -> float:
    """A stop option as a float (NaN: off); ValueError naming it when out of range."""
    if value is None:
        return _NAN
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"{name} must be a number or None, got {value!r}")
    v = float(value)
    if not (np.isfinite(v) and v > 0.0) or (below_one and v >= 1.0):
        bound = "in (0, 1)" if below_one else "finite and > 0"
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return v


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """Validated engine options (the keyword arguments of :func:`run`)."""

    initial_capital: float = 100_000.0
    fees: float = 0.0
    slippage: float = 0.0
    size_type: str = "percent"
    size: float | None = None
    leverage: float = 1.0
    borrow_rate: float = 0.0
    sl_stop: float | None = None
    tp_stop: float | None = None
    trail_stop: float | None = None
    time_stop: int | None = None
    fill: str = "close"
    direction: str = "long"
    integer_shares: bool = False
    periods_per_year: float = 252.0
    max_position_size: float | None = None

    def __post_init__(self) -> None:
        check_positive(self.initial_capital, "initial_capital")
        if self.max_position_size is not None:
            # The original name of the percent size: kept so that existing code runs unchanged.
            mps = check_positive(self.max_position_size, "max_position_size")
            if mps > 1.0:
                raise ValueError(f"max_position_size must be in (0, 1], got {mps!r}")
            if self.size_type != "percent" or (self.size is not None and self.size != mps):
                raise ValueError("max_position_size is the percent size: give it or size, not both")
            object.__setattr__(self, "size", mps)
        for name in ("fees", "slippage"):
            v = check_positive(getattr(self, name), name, allow_zero=True)
            if v >= 1.0:
                raise ValueError(f"{name} is a fraction of traded value and must be < 1, got {v!r}")
        if self.size_type not in _SIZE_TYPES:
            raise ValueError(
                f"size_type must be one of {', '.join(_SIZE_TYPES)}, got {self.size_type!r}"
            )
        lev = check_positive(self.leverage, "leverage")
        if self.size is None:
            if self.size_type != "percent":
                raise ValueError(f"size is required with size_type={self.size_type!r}")
        else:
            size = check_positive(self.size, "size")
            if self.size_type in ("percent", "target_percent") and size > lev:
                raise ValueError(
                    f"size with size_type={self.size_type!r} is a fraction of equity and "
                    f"must be in (0, leverage={lev!r}], got {size!r}"
                )
        check_positive(self.borrow_rate, "borrow_rate", allow_zero=True)
        _stop(self.sl_stop, "sl_stop", below_one=True)
        _stop(self.tp_stop, "tp_stop", below_one=False)
        _stop(self.trail_stop, "trail_stop", below_one=True)
        ts = self.time_stop
        if ts is not None and (
            isinstance(ts, (bool, np.bool_)) or not isinstance(ts, (int, np.integer)) or ts < 1
        ):
            raise ValueError(f"time_stop must be a whole number of bars >= 1 or None, got {ts!r}")
        if self.fill not in _FILLS:
            raise ValueError(f"fill must be 'close' or 'next_open', got {self.fill!r}")
        if self.direction not in _DIRECTIONS:
            raise ValueError(f"direction must be 'long', 'short' or 'both', got {self.direction!r}")
        if not isinstance(self.integer_shares, (bool, np.bool_)):
            raise ValueError(f"integer_shares must be True or False, got {self.integer_shares!r}")
        check_positive(self.periods_per_year, "periods_per_year")

    @property
    def direction_code(self) -> int:
        return _DIRECTIONS[self.direction]

    @property
    def size_code(self) -> int:
        return _SIZE_TYPES[self.size_type]

    @property
    def size_value(self) -> float:
        """``size``, 1.0 (all of equity) when not given."""
        return 1.0 if self.size is None else float(self.size)

    @property
    def has_stops(self) -> bool:
        return any(
            getattr(self, n) is not None for n in ("sl_stop", "tp_stop", "trail_stop", "time_stop")
        )

    def stops(self) -> tuple[float, float, float, float]:
        """``(sl, tp, trail, time)`` for the kernels, NaN where off."""
        ts = _NAN if self.time_stop is None else float(self.time_stop)
        return (
            _stop(self.sl_stop, "sl_stop", below_one=True),
            _stop(self.tp_stop, "tp_stop", below_one=False),
            _stop(self.trail_stop, "trail_stop", below_one=True),
            ts,
        )

    @property
    def borrow_per_bar(self) -> float:
        return float(self.borrow_rate) / float(self.periods_per_year)

    def kernel_scalars(self) -> tuple[float, float, int, float, float, int, bool, float]:
        """The scalar options of the fused sweep kernels, in their argument order."""
        return (
            float(self.initial_capital), float(self.slippage), self.size_code, float(self.leverage),
            self.borrow_per_bar, self.direction_code, bool(self.integer_shares),
            float(self.periods_per_year),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class PriceData:
    """Close (and open, high, low) prices as (n, k) float64 arrays plus the input's wrapper."""

    close: np.ndarray
    open: np.ndarray | None
    wrapper: Wrapper
    high: np.ndarray | None = None
    low: np.ndarray | None = None

    def ohlc(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(open, high, low)`` for the stops: closes only stand for all three; with
        opens but no highs and lows a bar spans its open and close."""
        c = self.close
        if self.open is None:
            return c, c, c
        if self.high is None or self.low is None:  # the bar spans its open and close
            return self.open, np.fmax(self.open, c), np.fmin(self.open, c)
        return self.open, self.high, self.low

    def fortran_ohlc(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(open, high, low, close)`` as Fortran arrays (columns contiguous) for the kernels."""
        o, h, lo = self.ohlc()
        return (
            np.asfortranarray(o), np.asfortranarray(h), np.asfortranarray(lo),
            np.asfortranarray(self.close),
        )  # fmt: skip


def _ohlc_column(frame: pd.DataFrame, name: str) -> pd.Series | None:
    for col in frame.columns:
        if isinstance(col, str) and col.lower() == name:
            return frame[col]
    return None


def load_prices(
    prices: Any, fill: str = "close", *, allow_gaps: bool = True, intrabar: bool = False
) -> PriceData:
    """Validate prices: closes, plus opens for ``"next_open"``, plus highs and lows if given.

    Accepted: a close Series/DataFrame/array (columns are assets); a one-asset OHLC
    DataFrame (``Open``/``High``/``Low``/``Close`` columns, any case); or a mapping
    with ``"close"`` and optional ``"open"``, ``"high"``, ``"low"`` entries of the
    same shape (several assets). Prices must be positive where given; NaN means no
    price. With ``allow_gaps=False`` (strategies and sweeps, whose rolling
    indicators need every bar) NaN is allowed only before an asset's first price.
    With ``intrabar`` (stops are on) opens are loaded when given, highs and lows
    when both are; a high below the bar's open, low or close is an error.
    """
    parts: dict[str, Any] = {}
    if isinstance(prices, Mapping):
        keys = {str(k).lower(): k for k in prices}
        if "close" not in keys:
            raise ValueError("prices mapping must have a 'close' entry")
        close_in = prices[keys["close"]]
        parts = {name: prices[keys[name]] for name in ("open", "high", "low") if name in keys}
    elif isinstance(prices, pd.DataFrame) and _ohlc_column(prices, "close") is not None:
        close_in = _ohlc_column(prices, "close")
        for name in ("open", "high", "low"):
            col = _ohlc_column(prices, name)
            if col is not None:
                parts[name] = col
    else:
        close_in = prices
    open_in = parts.get("open")
    close, wrapper = as_float64_2d(close_in, "prices")
    if close.shape[0] == 0:
        raise ValueError("prices must have at least one bar")
    _check_price_values(close, "prices (close)", allow_gaps)
    loaded: dict[str, np.ndarray] = {}
    bars = intrabar and "high" in parts and "low" in parts
    if open_in is not None and (intrabar or fill == "next_open"):
        wanted = ("open", "high", "low") if bars else ("open",)
        for name in wanted:
            arr, _ = as_float64_2d(parts[name], f"prices ({name})")
            if arr.shape != close.shape:
                raise ValueError(
                    f"{name} prices must have the shape of the closes {close.shape}, "
                    f"got {arr.shape}"
                )
            _check_price_values(arr, f"prices ({name})", allow_gaps)
            loaded[name] = arr
    elif fill == "next_open":
        raise ValueError(
            "fill='next_open' needs open prices: an OHLC frame with an 'Open' column "
            "or a mapping {'open': ..., 'close': ...}"
        )
    high, low = loaded.get("high"), loaded.get("low")
    if high is not None and low is not None:
        with np.errstate(invalid="ignore"):
            bad = (high < low) | (high < loaded["open"]) | (high < close)
            bad |= (low > loaded["open"]) | (low > close)
        if bad.any():
            t, j = np.argwhere(bad)[0]
            raise ValueError(
                f"prices: bar {t}, column {j} has a high below its low, open or close "
                "(or a low above them)"
            )
    return PriceData(close, loaded.get("open"), wrapper, high, low)


def price_parts(prices: P) -> P | dict[str, pd.Series]:
    """An OHLC frame as ``{"close": ..., "open": ..., "high": ..., "low": ...}``, taken out once.

    Anything else is returned as it is. The strategy and the engine both read the
    closes; pulling a column out of a frame costs more than the rest of a
    one-asset run's validation.
    """
    if isinstance(prices, pd.DataFrame) and (close := _ohlc_column(prices, "close")) is not None:
        parts = {"close": close}
        for name in ("open", "high", "low"):
            if (col := _ohlc_column(prices, name)) is not None:
                parts[name] = col
        return parts
    return prices


def close_part(prices: object) -> object:
    """The close part of ``prices`` (a mapping's ``close``, else ``prices`` itself)."""
    if isinstance(prices, Mapping):
        for key, value in prices.items():
            if str(key).lower() == "close":
                return value
        raise ValueError("prices mapping must have a 'close' entry")
    return prices


def _check_price_values(values: np.ndarray, name: str, allow_gaps: bool) -> None:
    if np.isinf(values).any():
        raise ValueError(f"{name} must be finite, got inf")
    valid = ~np.isnan(values)
    if (values[valid] <= 0).any():
        raise ValueError(f"{name} must be > 0")
    if allow_gaps:
        return
    started = np.maximum.accumulate(valid, axis=0)
    gaps = started & ~valid
    if gaps.any():
        t, j = np.argwhere(gaps)[0]
        raise ValueError(
            f"{name} has a NaN at row {t}, column {j} after the first price; "
            "strategies need every bar: fill or drop it"
        )


def first_valid(close: np.ndarray) -> np.ndarray:
    """Index of each column's first non-NaN price (``n`` when it has none)."""
    valid = ~np.isnan(close)
    first: np.ndarray = np.argmax(valid, axis=0).astype(np.int64)
    first[~valid.any(axis=0)] = close.shape[0]
    return first


def as_signal(x: Any, name: str, shape: tuple[int, int]) -> np.ndarray:
    """Entry or exit signals as a C-contiguous bool array of ``shape`` (a column broadcasts).

    0/1 numbers are accepted; anything else raises a ValueError naming ``name``.
    """
    arr = x.to_numpy() if isinstance(x, (pd.Series, pd.DataFrame)) else np.asarray(x)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got {arr.ndim} dimensions")
    if arr.shape[0] != shape[0]:
        raise ValueError(f"{name} must have {shape[0]} rows like prices, got {arr.shape[0]}")
    if arr.shape[1] not in (1, shape[1]):
        raise ValueError(
            f"{name} must have 1 or {shape[1]} columns like prices, got {arr.shape[1]}"
        )
    if arr.dtype != np.bool_:
        if arr.dtype.kind not in "iuf" or not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must be boolean (or 0/1), got dtype {arr.dtype}")
        arr = arr.astype(np.bool_)
    return np.ascontiguousarray(np.broadcast_to(arr, shape))


def benchmark_metrics(
    equity: np.ndarray, benchmark: Any, n: int, initial_capital: float, ppy: float
) -> tuple[float, float, float]:
    """The benchmark's total return, and the equity's alpha and beta against it.

    ``benchmark`` is one price series of length ``n``; the equity's first return is
    measured from ``initial_capital``. The engine and the rebalancer share it.
    """
    from quantcore import risk

    bench, _ = as_float64_2d(benchmark, "benchmark")
    if bench.shape != (n, 1):
        raise ValueError(
            f"benchmark must be one price series of length {n}, got shape {bench.shape}"
        )
    b = bench[:, 0]
    valid = b[~np.isnan(b)]
    if (valid <= 0).any() or np.isinf(valid).any():
        raise ValueError("benchmark prices must be finite and > 0")
    bench_total = float(valid[-1] / valid[0] - 1.0) if valid.size else float("nan")
    b_ret = np.full(n, np.nan)
    b_ret[1:] = b[1:] / b[:-1] - 1.0
    r = np.empty(n)
    r[0] = equity[0] / initial_capital - 1.0
    r[1:] = equity[1:] / equity[:-1] - 1.0
    alpha = float(risk.alpha(r, b_ret, periods_per_year=ppy))
    beta = float(risk.beta(r, b_ret))
    return bench_total, alpha, beta


def simulate(
    data: PriceData, entries: np.ndarray, exits: np.ndarray, opts: EngineOptions
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run the kernel on validated arrays: ``(equity, positions, trades)``."""
    close = data.close
    if opts.fill == "next_open":
        assert data.open is not None
        fill_px = data.open
        shifted = np.zeros_like(entries)
        shifted[1:] = entries[:-1]
        entries = shifted
        shifted = np.zeros_like(exits)
        shifted[1:] = exits[:-1]
        exits = shifted
    else:
        fill_px = close
    d = opts.direction_code
    cap = int(np.count_nonzero(entries)) if d != DIRECTION_BOTH else 0
    if d == DIRECTION_BOTH:
        cap = int(np.count_nonzero(entries) + np.count_nonzero(exits))
    trades = np.empty(cap, dtype=trade_dt)
    o, h, lo = data.ohlc()
    sl, tp, trail, time_stop = opts.stops()
    equity, _cash, positions, n_trades = simulate_nb(
        np.ascontiguousarray(o), np.ascontiguousarray(h), np.ascontiguousarray(lo),
        np.ascontiguousarray(close), np.ascontiguousarray(fill_px), entries, exits,
        opts.fill == "next_open", float(opts.initial_capital), float(opts.fees),
        float(opts.slippage), opts.size_code, opts.size_value, float(opts.leverage),
        opts.borrow_per_bar, d, bool(opts.integer_shares), sl, tp, trail, time_stop, trades,
    )  # fmt: skip
    return equity, positions, trades[:n_trades].copy()


def run(
    prices: Any,
    entries: Any,
    exits: Any,
    *,
    initial_capital: float = 100_000.0,
    fees: float = 0.0,
    slippage: float = 0.0,
    size_type: str = "percent",
    size: float | None = None,
    leverage: float = 1.0,
    borrow_rate: float = 0.0,
    sl_stop: float | None = None,
    tp_stop: float | None = None,
    trail_stop: float | None = None,
    time_stop: int | None = None,
    fill: str = "close",
    direction: str = "long",
    integer_shares: bool = False,
    benchmark: Any = None,
    periods_per_year: float = 252,
    max_position_size: float | None = None,
) -> BacktestResult:
    """Backtest entry and exit signals on one or several assets sharing one cash pool.

    Parameters
    ----------
    prices : Series, DataFrame, ndarray or mapping
        Closes (one column per asset). With ``fill="next_open"``: a one-asset OHLC
        frame (``Open`` and ``Close`` columns) or ``{"open": ..., "close": ...}``.
    entries, exits : array-like of bool
        Signals, shape (n,) or (n, k); one column is broadcast to every asset.
    initial_capital : float, default 100_000.0
        Starting cash.
    fees : float, default 0.0
        Fee as a fraction of traded value, paid on entry and on exit.
    slippage : float, default 0.0
        Fraction by which a fill price moves against the trader.
    size_type : {"percent", "amount", "units", "target_percent"}, default "percent"
        How ``size`` sizes an entry: a fraction of equity spent (fees included), an
        amount of cash spent (fees included), a number of units, or the position's
        value as a fraction of equity (fees on top).
    size : float, optional
        The size; default 1.0 (all of equity) with ``"percent"``, required otherwise.
        Fractions of equity may go up to ``leverage``.
    leverage : float, default 1.0
        Cap on gross exposure / equity at an entry: the spend is at most
        ``cash + (leverage - 1) * equity`` (cash may go negative above 1).
    borrow_rate : float, default 0.0
        Annual rate a short pays on its value at the last close, accrued each bar
        held after the entry bar (``borrow_rate / periods_per_year`` per bar).
    sl_stop, tp_stop : float, optional
        Stop loss / take profit as fractions of the entry's order price: a long exits
        when the low reaches ``p (1 - sl_stop)`` or the high ``p (1 + tp_stop)``.
    trail_stop : float, optional
        Fraction below the highest high since the entry (above the lowest low for
        shorts), the entry price included.
    time_stop : int, optional
        Exit ``time_stop`` bars after the entry bar, at that bar's order price.
    fill : {"close", "next_open"}, default "close"
        Fill at the signal bar's close, or at the next bar's open.
    direction : {"long", "short", "both"}, default "long"
        "long": entries buy, exits sell. "short": entries short, exits cover.
        "both": entries go long and exits go short, reversing an open position.
    integer_shares : bool, default False
        Round entry sizes down to whole units.
    benchmark : Series or ndarray, optional
        Benchmark prices on the same bars, for ``benchmark_return``, ``alpha``, ``beta``.
    periods_per_year : float, default 252
        Bars per year, for the annualized metrics.
    max_position_size : float, optional
        The earlier name of the ``"percent"`` size, in (0, 1]; same as ``size``.

    Returns
    -------
    BacktestResult

    Notes
    -----
    With ``size_type="percent"`` an entry buys ``B / (p (1 + s) (1 + f))`` units
    (floored with ``integer_shares``) at ``p (1 + s)`` for ``B = min(size * equity,
    cash + (leverage - 1) equity)``, equity valued at the bar's fill prices; an
    exit sells at ``p (1 - s)`` and pays ``f`` of the value (mirrored for shorts).
    Each bar, in order: shorts pay a bar of borrow; exits (with ``fill="next_open"``
    signal exits and due time stops at the open; then price stops from the bar after
    the entry bar on, checked against the high and low when ``prices`` has
    open/high/low, filled at the stop level or at the open when the bar opens
    through it, the loss level before the profit level; then, with ``fill="close"``,
    due time stops and signal exits at the close); then entries. Stop fills pay fees
    but no slippage; a bar on which a stop closed a position opens nothing on that
    asset. Assets go in column order. An entry while in a position and an exit while
    flat are ignored; an entry and an exit on the same bar cancel; a signal on a
    bar without a price is ignored, as is a ``"next_open"`` signal on the last bar.
    Open positions are marked to market at the last close, not closed, and count
    in ``total_trades``; ``win_rate`` and ``profit_factor`` use closed trades.

    Examples
    --------
    >>> close = np.array([10.0, 11.0, 12.0, 11.0, 13.0])
    >>> res = run(close, [True, False, False, False, False],
    ...           [False, False, True, False, False], initial_capital=1000.0)
    >>> round(res.total_return, 12), res.total_trades, res.win_rate
    (0.2, 1, 1.0)
    """
    opts = EngineOptions(
        initial_capital, fees, slippage, size_type, size, leverage, borrow_rate, sl_stop,
        tp_stop, trail_stop, time_stop, fill, direction, integer_shares, periods_per_year,
        max_position_size,
    )  # fmt: skip
    data = load_prices(prices, opts.fill, intrabar=opts.has_stops)
    shape = data.close.shape
    e = as_signal(entries, "entries", shape)
    x = as_signal(exits, "exits", shape)
    equity, positions, trades = simulate(data, e, x, opts)
    exposed = (positions != 0.0).any(axis=1)
    stats = equity_stats_nb(
        equity, exposed, trades["pnl"].copy(), trades["status"] == TRADE_CLOSED,
        float(opts.initial_capital), float(opts.periods_per_year),
    )  # fmt: skip
    nan = float("nan")
    bench_ret, alpha, beta = nan, nan, nan
    if benchmark is not None:
        bench_ret, alpha, beta = benchmark_metrics(
            equity, benchmark, shape[0], float(opts.initial_capital), float(opts.periods_per_year)
        )
    w = data.wrapper
    return BacktestResult(
        total_return=float(stats[0]),
        annualized_return=float(stats[1]),
        sharpe_ratio=float(stats[2]),
        sortino_ratio=float(stats[3]),
        max_drawdown=float(stats[4]),
        win_rate=float(stats[5]),
        total_trades=int(stats[6]),
        profit_factor=float(stats[7]),
        exposure=float(stats[8]),
        benchmark_return=bench_ret,
        alpha=alpha,
        beta=beta,
        equity=pd.Series(equity, index=w.index, name="equity") if w.index is not None else equity,
        trades=trades,
        positions=w.wrap(positions),
    )
