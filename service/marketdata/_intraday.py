"""Intraday bars (5 minutes, 1 hour) that aggregate exactly to the daily bars.

Five-minute bars are built first, for all requested days at once:

1. a Brownian bridge in log price from the daily open to the daily close; its
   upward and downward excursions are scaled into the room the daily high and low
   leave (a random 55-95 % of it), so the path stays inside ``[low, high]``;
2. each bar opens where the previous one closed; the first open and the last close
   are set to the daily open and close exactly;
3. wicks stretch each bar's high and low by a random amount, clipped to the daily
   range; the bar with the highest (lowest) raw wick gets the daily high (low)
   exactly, so ``max(high) == daily high`` and ``min(low) == daily low``;
4. the daily volume is split over the bars by an intraday profile (U-shaped for
   equities, a mild daily cycle for crypto) with noise, using cumulative rounding
   so the integer volumes sum exactly to the daily volume.

Hourly bars aggregate the five-minute bars (first open, max high, min low, last
close, summed volume), so all three intervals agree exactly with each other.

Sessions: equities trade 14:30-21:00 UTC on business days (US regular hours at
EST; daylight saving time and exchange holidays are not modelled), 78 five-minute
bars and 7 hourly bars (the last one covers 30 minutes); crypto trades
00:00-24:00 UTC every day, 288 and 24 bars.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtr

from service.marketdata._random import normals
from service.marketdata.universe import AssetSpec

__all__ = ["IntradayBars", "aggregate_hourly", "five_minute_bars", "session_bounds"]

BAR_MINUTES = 5
_EQUITY_OPEN = 14 * 60 + 30
_EQUITY_BARS = 78
_CHUNK_DAYS = 64


@dataclass(frozen=True, slots=True)
class IntradayBars:
    """Bars of shape ``(days, bars per day)``; ``offsets`` are minutes after midnight UTC."""

    offsets: NDArray[np.int64]  # (bars,) bar start, minutes after midnight
    minutes: NDArray[np.int64]  # (bars,) bar length in minutes
    open: NDArray[np.float64]
    high: NDArray[np.float64]
    low: NDArray[np.float64]
    close: NDArray[np.float64]
    volume: NDArray[np.int64]


def session_bounds(spec: AssetSpec) -> tuple[int, int]:
    """Session open and close in minutes after midnight UTC."""
    if spec.trades_weekends:
        return 0, 24 * 60
    return _EQUITY_OPEN, _EQUITY_OPEN + _EQUITY_BARS * BAR_MINUTES


def five_minute_bars(
    seed: int,
    spec: AssetSpec,
    days: NDArray[np.int64],
    daily: tuple[NDArray[np.float64], ...],
    volume: NDArray[np.int64],
) -> IntradayBars:
    """Five-minute bars of ``spec`` on ``days``.

    Args:
        seed: Market seed.
        spec: The asset.
        days: Day numbers (trading days of the asset).
        daily: Daily ``(open, high, low, close)`` on those days.
        volume: Daily volume on those days.

    Returns:
        The bars; they aggregate exactly to the daily bars.
    """
    if len(days) > _CHUNK_DAYS:  # bound the temporaries (about 40 floats per bar)
        parts = [
            five_minute_bars(
                seed,
                spec,
                days[i : i + _CHUNK_DAYS],
                tuple(a[i : i + _CHUNK_DAYS] for a in daily),
                volume[i : i + _CHUNK_DAYS],
            )
            for i in range(0, len(days), _CHUNK_DAYS)
        ]
        return IntradayBars(
            offsets=parts[0].offsets,
            minutes=parts[0].minutes,
            **{
                name: np.concatenate([getattr(p, name) for p in parts])
                for name in ("open", "high", "low", "close", "volume")
            },
        )
    start, end = session_bounds(spec)
    n = (end - start) // BAR_MINUTES
    o_d, h_d, l_d, c_d = (np.asarray(a, dtype=np.float64)[:, None] for a in daily)
    z = normals(seed, spec.symbol, 1, days, 4 * n + 2)
    steps = np.concatenate((np.zeros((len(days), 1)), np.cumsum(z[:, :n], axis=1)), axis=1)
    frac = np.arange(n + 1, dtype=np.float64)[None, :] / n
    bridge = steps - frac * steps[:, -1:]
    a, hh, ll, c = np.log(o_d), np.log(h_d), np.log(l_d), np.log(c_d)
    line = a + (c - a) * frac
    up, down = np.maximum(bridge, 0.0), np.minimum(bridge, 0.0)
    reach_up = 0.55 + 0.4 * ndtr(z[:, 4 * n : 4 * n + 1])
    reach_down = 0.55 + 0.4 * ndtr(z[:, 4 * n + 1 : 4 * n + 2])
    scale_up = _safe_ratio(reach_up * (hh - np.maximum(a, c)), up.max(axis=1, keepdims=True))
    scale_down = _safe_ratio(reach_down * (np.minimum(a, c) - ll), -down.min(axis=1, keepdims=True))
    path = np.clip(np.exp(line + scale_up * up + scale_down * down), l_d, h_d)
    path[:, :1] = o_d
    path[:, -1:] = c_d
    open_, close = path[:, :-1], path[:, 1:]
    wick = 0.25 * (hh - ll) / np.sqrt(n)
    raw_high = np.maximum(open_, close) * np.exp(wick * np.abs(z[:, n : 2 * n]))
    raw_low = np.minimum(open_, close) * np.exp(-wick * np.abs(z[:, 2 * n : 3 * n]))
    high = np.minimum(raw_high, h_d)
    low = np.maximum(raw_low, l_d)
    rows = np.arange(len(days))
    high[rows, np.argmax(raw_high, axis=1)] = h_d[:, 0]
    low[rows, np.argmin(raw_low, axis=1)] = l_d[:, 0]
    weights = _profile(spec, n)[None, :] * np.exp(0.4 * z[:, 3 * n : 4 * n])
    offsets = start + BAR_MINUTES * np.arange(n, dtype=np.int64)
    return IntradayBars(
        offsets=offsets,
        minutes=np.full(n, BAR_MINUTES, dtype=np.int64),
        open=np.ascontiguousarray(open_),
        high=high,
        low=low,
        close=np.ascontiguousarray(close),
        volume=split_volume(np.asarray(volume, dtype=np.int64), weights),
    )


def aggregate_hourly(bars: IntradayBars) -> IntradayBars:
    """Hourly bars from five-minute bars (first open, max high, min low, last close, sum volume)."""
    per_hour = 60 // BAR_MINUTES
    n = bars.open.shape[1]
    starts = np.arange(0, n, per_hour)
    ends = np.minimum(starts + per_hour, n)
    return IntradayBars(
        offsets=bars.offsets[starts],
        minutes=(ends - starts) * BAR_MINUTES,
        open=bars.open[:, starts],
        high=np.maximum.reduceat(bars.high, starts, axis=1),
        low=np.minimum.reduceat(bars.low, starts, axis=1),
        close=bars.close[:, ends - 1],
        volume=np.add.reduceat(bars.volume, starts, axis=1),
    )


def split_volume(total: NDArray[np.int64], weights: NDArray[np.float64]) -> NDArray[np.int64]:
    """Split integer ``total[d]`` over row ``d`` of ``weights`` so that the parts sum exactly.

    Cumulative rounding: the running sums of the ideal (fractional) shares are
    rounded, the last one is pinned to the total, and the parts are their
    differences. Every part is a non-negative integer within 1 of its share.
    """
    share = weights / weights.sum(axis=1, keepdims=True) * total[:, None].astype(np.float64)
    running = np.floor(np.cumsum(share, axis=1) + 0.5).astype(np.int64)
    running[:, -1] = total
    np.minimum(running, total[:, None], out=running)
    parts: NDArray[np.int64] = np.diff(running, axis=1, prepend=0)
    return parts


def _profile(spec: AssetSpec, n: int) -> NDArray[np.float64]:
    q = (np.arange(n) + 0.5) / n
    if spec.trades_weekends:
        return 1.0 + 0.3 * np.cos(2.0 * np.pi * (q - 0.6))
    return 0.6 + 3.2 * (q - 0.5) ** 2


def _safe_ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.zeros(np.broadcast_shapes(num.shape, den.shape))
    np.divide(num, den, out=out, where=den > 0)
    return out
