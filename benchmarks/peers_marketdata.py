"""service.marketdata beside the pandas code a user would otherwise write, in one process.

No issue sets a goal here; the ratios show what the market-data layer costs:

* hourly bars from 5-minute bars: ``aggregate_hourly`` (NumPy ``reduceat``) vs
  ``DataFrame.resample("1h").agg(...)``;
* a one-month read from 12 years of daily bars: ``PriceStore.read`` (pyarrow
  predicate pushdown) vs ``pandas.read_parquet`` of the whole file and a ``.loc``
  slice;
* importing the real GOOG CSV (backtesting.py's 2004-2013 daily bars):
  ``read_price_file`` (every row validated) vs ``pandas.read_csv`` (no checks);
* the whole simulated universe, 41 assets from 2015 to today (no peer).

    python benchmarks/vs_peers.py -k marketdata
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

try:
    from _harness import Case  # run by benchmarks/vs_peers.py
except ModuleNotFoundError:  # collected by pytest --doctest-modules from the repository root
    from benchmarks._harness import Case

__all__ = ["CASES"]

NOW = dt.datetime(2026, 11, 20, 22, tzinfo=dt.UTC)
_AGG = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}


def _five_minute(quick: bool) -> Any:
    from service.marketdata._daily import simulate_daily
    from service.marketdata._intraday import five_minute_bars
    from service.marketdata.simulated import SimulatedMarket
    from service.marketdata.universe import START_DATE, spec_for

    spec = spec_for("BTC-USD")
    n_days = 30 if quick else 365
    horizon = (NOW.date() - START_DATE).days + 1
    daily = simulate_daily(SimulatedMarket().seed, (spec,), horizon)["BTC-USD"]
    sl = slice(len(daily) - n_days, len(daily))
    bars = five_minute_bars(
        42,
        spec,
        daily.days[sl],
        (daily.open[sl], daily.high[sl], daily.low[sl], daily.close[sl]),
        daily.volume[sl],
    )
    stamps = (
        pd.to_datetime(daily.days[sl], unit="D", origin=pd.Timestamp(START_DATE))
        .values[:, None]
        .astype("datetime64[m]")
        + bars.offsets[None, :].astype("timedelta64[m]")
    ).ravel()
    frame = pd.DataFrame(
        {k: getattr(bars, k).ravel() for k in ("open", "high", "low", "close", "volume")},
        index=pd.DatetimeIndex(stamps),
    )
    return bars, frame


def _ours_hourly(data: Any) -> Any:
    from service.marketdata._intraday import aggregate_hourly

    return aggregate_hourly(data[0])


def _pandas_hourly(data: Any) -> Any:
    return data[1].resample("1h").agg(_AGG)


def _stored_daily(quick: bool) -> Any:
    from service.marketdata import PriceStore, SimulatedMarket

    market = SimulatedMarket(clock=lambda: NOW)
    store = PriceStore(tempfile.mkdtemp(prefix="qc-bench-"))
    start = dt.date(2024, 1, 1) if quick else dt.date(2015, 1, 1)
    store.write("SPY", market.history("SPY", start, NOW.date()))
    return store, (dt.date(2026, 6, 1), dt.date(2026, 6, 30))


def _ours_read(data: Any) -> Any:
    store, (start, end) = data
    return store.read("SPY", "1d", start, end)


def _pandas_read(data: Any) -> Any:
    store, (start, end) = data
    frame = pd.read_parquet(store.path("SPY")).set_index("timestamp")
    return frame.loc[str(start) : str(end)]


def _goog_csv(quick: bool) -> Path:
    from backtesting.test import GOOG

    frame = GOOG.iloc[:250] if quick else GOOG
    out = frame[["Open", "High", "Low", "Close"]].copy()
    out["Adj Close"] = frame["Close"]
    out["Volume"] = frame["Volume"].astype(np.int64)
    out.index.name = "Date"
    path = Path(tempfile.mkdtemp(prefix="qc-bench-")) / "GOOG.csv"
    out.to_csv(path, date_format="%Y-%m-%d")
    return path


def _ours_import(path: Path) -> Any:
    from service.marketdata.importers import read_price_file

    return read_price_file(path)


def _pandas_import(path: Path) -> Any:
    return pd.read_csv(path, index_col="Date", parse_dates=True)


def _universe(quick: bool) -> int:
    return (NOW.date() - dt.date(2015, 1, 2)).days + 1


def _ours_universe(n_days: int) -> Any:
    from service.marketdata._daily import simulate_daily
    from service.marketdata.universe import UNIVERSE

    return simulate_daily(42, UNIVERSE, n_days)


CASES: list[Case] = [
    Case(
        name="marketdata 5m->1h bars, BTC-USD 1 year (105k bars)",
        setup=_five_minute,
        ours=_ours_hourly,
        peer=_pandas_hourly,
        peer_name="pandas resample",
        notes="quick: 30 days",
    ),
    Case(
        name="marketdata store read 1 month of 12y daily",
        setup=_stored_daily,
        ours=_ours_read,
        peer=_pandas_read,
        peer_name="pandas read_parquet+loc",
        notes="quick: 3 years stored",
    ),
    Case(
        name="marketdata import GOOG CSV 2,148 rows (validated)",
        setup=_goog_csv,
        ours=_ours_import,
        peer=_pandas_import,
        peer_name="pandas read_csv",
        notes="peer does no validation; quick: 250 rows",
    ),
    Case(
        name="marketdata simulate 41 assets 2015-2026 daily",
        setup=_universe,
        ours=_ours_universe,
        peer=None,
        peer_name="-",
        quick=False,
    ),
]
