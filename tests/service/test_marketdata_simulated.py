"""The simulated market: determinism, calendars, exact intraday aggregation, factor structure, quotes."""

from __future__ import annotations

import datetime as dt
import threading

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.marketdata import MarketDataProvider, SimulatedMarket
from service.marketdata._intraday import split_volume
from service.marketdata._random import _mix, _mix_int, normals, uniforms
from service.marketdata.universe import START_DATE, UNIVERSE

NOW = dt.datetime(2026, 11, 20, 18, 2, 30, tzinfo=dt.UTC)  # a Friday, mid-session
SYMBOLS = [spec.symbol for spec in UNIVERSE]


def fixed(moment: dt.datetime) -> SimulatedMarket:
    return SimulatedMarket(clock=lambda: moment)


@pytest.fixture(scope="module")
def market() -> SimulatedMarket:
    return fixed(NOW)


@pytest.fixture(scope="module")
def closes(market: SimulatedMarket) -> pd.DataFrame:
    """Daily closes of every asset, 2015 to NOW (business days; crypto resampled onto them)."""
    frames = {s: market.history(s, START_DATE, NOW.date())["close"] for s in SYMBOLS}
    return pd.DataFrame(frames).dropna()


# -- random numbers ---------------------------------------------------------------------


def test_splitmix64_matches_the_reference_outputs() -> None:
    # Rosetta Code, "Pseudo-random numbers/Splitmix64": first five outputs for seed 1234567
    # (the generator adds 0x9E3779B97F4A7C15 to its state, then applies the finalizer).
    expected = [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
        4593380528125082431,
        16408922859458223821,
    ]
    states = [(1234567 + k * 0x9E3779B97F4A7C15) % 2**64 for k in range(1, 6)]
    assert [_mix_int(s) for s in states] == expected
    assert _mix(np.array(states, dtype=np.uint64)).tolist() == expected


def test_draws_depend_only_on_their_coordinates() -> None:
    days = np.arange(100, 160, dtype=np.int64)
    full = normals(7, "AAPL", 0, days, 5)
    np.testing.assert_array_equal(normals(7, "AAPL", 0, days[::-1], 5), full[::-1])
    np.testing.assert_array_equal(normals(7, "AAPL", 0, days[10:11], 5), full[10:11])
    assert not np.array_equal(normals(8, "AAPL", 0, days, 5), full)
    assert not np.array_equal(normals(7, "MSFT", 0, days, 5), full)
    assert not np.array_equal(normals(7, "AAPL", 1, days, 5), full)


def test_uniforms_are_in_the_open_unit_interval_and_roughly_uniform() -> None:
    u = uniforms(1, "x", 0, np.arange(20_000, dtype=np.int64), 5).ravel()
    assert u.min() > 0.0 and u.max() < 1.0
    counts = np.histogram(u, bins=10, range=(0.0, 1.0))[0]
    assert np.all(np.abs(counts - 10_000) < 500)  # about 5 sd of a binomial(100000, 0.1)


# -- determinism and stability ----------------------------------------------------------


def test_implements_the_provider_protocol(market: SimulatedMarket) -> None:
    assert isinstance(market, MarketDataProvider)
    assert market.tick("SPY", NOW) == market.tick(["SPY"], NOW)  # a lone symbol is accepted


def test_two_instances_give_identical_bars_and_quotes(market: SimulatedMarket) -> None:
    other = fixed(NOW)
    for interval in ("1d", "1h", "5m"):
        pd.testing.assert_frame_equal(
            market.history("JPM", dt.date(2026, 10, 1), NOW.date(), interval),
            other.history("JPM", dt.date(2026, 10, 1), NOW.date(), interval),
        )
    assert market.tick(["ETH-USD"], NOW) == other.tick(["ETH-USD"], NOW)


def test_a_different_seed_gives_a_different_market() -> None:
    a = SimulatedMarket(seed=1, clock=lambda: NOW).history("SPY", START_DATE, NOW.date())
    b = SimulatedMarket(seed=2, clock=lambda: NOW).history("SPY", START_DATE, NOW.date())
    assert not np.allclose(a["close"].to_numpy(), b["close"].to_numpy())


def test_history_does_not_change_when_today_advances() -> None:
    earlier = fixed(dt.datetime(2019, 6, 3, 12, tzinfo=dt.UTC))
    later = fixed(dt.datetime(2031, 2, 1, tzinfo=dt.UTC))  # a longer simulated horizon
    for interval in ("1d", "5m"):
        a = earlier.history("NVDA", dt.date(2019, 1, 1), dt.date(2019, 6, 1), interval)
        b = later.history("NVDA", dt.date(2019, 1, 1), dt.date(2019, 6, 1), interval)
        assert len(a) > 0
        pd.testing.assert_frame_equal(a, b)


def test_a_sub_range_equals_the_slice_of_a_longer_range(market: SimulatedMarket) -> None:
    long = market.history("XOM", dt.date(2026, 5, 1), dt.date(2026, 11, 1), "1h")  # > 64 days
    short = market.history("XOM", dt.date(2026, 10, 5), dt.date(2026, 10, 9), "1h")
    pd.testing.assert_frame_equal(short, long.loc["2026-10-05":"2026-10-09"])


# -- calendars and completeness ---------------------------------------------------------


def test_equities_trade_business_days_and_crypto_every_day(market: SimulatedMarket) -> None:
    start, end = dt.date(2026, 10, 1), dt.date(2026, 10, 31)
    stock = market.history("KO", start, end)
    coin = market.history("BTC-USD", start, end)
    assert (stock.index.day_of_week < 5).all()
    assert len(stock) == len(pd.bdate_range(start, end))
    assert len(coin) == 31
    assert (stock.index == stock.index.normalize()).all()
    assert str(stock.index.tz) == "UTC"
    assert stock.dtypes.to_dict() == {
        "open": np.float64, "high": np.float64, "low": np.float64,
        "close": np.float64, "volume": np.int64,
    }  # fmt: skip


def test_only_completed_bars_are_served(market: SimulatedMarket) -> None:
    daily = market.history(
        "AAPL", NOW.date() - dt.timedelta(days=7), NOW.date() + dt.timedelta(days=30)
    )
    assert daily.index[-1].date() == NOW.date() - dt.timedelta(days=1)  # today's session is open
    bars = market.history("AAPL", NOW.date(), NOW.date(), "5m")
    assert bars.index[0] == pd.Timestamp("2026-11-20 14:30", tz="UTC")
    assert bars.index[-1] == pd.Timestamp("2026-11-20 17:55", tz="UTC")  # ends 18:00 <= NOW
    hours = market.history("AAPL", NOW.date(), NOW.date(), "1h")
    assert hours.index[-1] == pd.Timestamp("2026-11-20 16:30", tz="UTC")  # 17:30-18:30 is open
    assert market.history("AAPL", dt.date(2010, 1, 1), dt.date(2014, 12, 31)).empty


def test_bad_arguments_raise_clear_errors(market: SimulatedMarket) -> None:
    with pytest.raises(KeyError, match="NOPE"):
        market.history("NOPE", START_DATE, NOW.date())
    with pytest.raises(ValueError, match="interval"):
        market.history("SPY", START_DATE, NOW.date(), "1w")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="after end"):
        market.history("SPY", dt.date(2020, 1, 2), dt.date(2020, 1, 1))
    with pytest.raises(ValueError, match="timezone-aware"):
        market.tick(["SPY"], dt.datetime(2026, 1, 1))
    with pytest.raises(KeyError):
        market.quote("NOPE")


# -- exact intraday aggregation ---------------------------------------------------------


def _aggregate(bars: pd.DataFrame, rule: str, offset: str | None) -> pd.DataFrame:
    grouped = bars.resample(rule, offset=offset) if offset else bars.resample(rule)
    out = grouped.agg(
        {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
    )
    return out.dropna()


@pytest.mark.parametrize("symbol", ["AAPL", "TLT", "BTC-USD"])
@pytest.mark.parametrize("interval", ["5m", "1h"])
def test_intraday_bars_aggregate_exactly_to_daily_bars(
    market: SimulatedMarket, symbol: str, interval: str
) -> None:
    start, end = dt.date(2026, 9, 1), dt.date(2026, 11, 19)
    daily = market.history(symbol, start, end)
    intraday = market.history(symbol, start, end, interval)  # type: ignore[arg-type]
    agg = _aggregate(intraday, "1D", None)
    agg["volume"] = agg["volume"].astype(np.int64)
    pd.testing.assert_frame_equal(agg, daily, check_exact=True, check_freq=False)


@pytest.mark.parametrize("symbol", ["MSFT", "ETH-USD"])
def test_hourly_bars_aggregate_the_five_minute_bars_exactly(
    market: SimulatedMarket, symbol: str
) -> None:
    start, end = dt.date(2026, 11, 2), dt.date(2026, 11, 13)
    five = market.history(symbol, start, end, "5m")
    hourly = market.history(symbol, start, end, "1h")
    offset = "30min" if symbol == "MSFT" else None  # equity hours start at :30
    agg = _aggregate(five, "1h", offset)
    agg["volume"] = agg["volume"].astype(np.int64)
    pd.testing.assert_frame_equal(agg, hourly, check_exact=True, check_freq=False)


def test_session_shapes(market: SimulatedMarket) -> None:
    day = dt.date(2026, 11, 18)
    assert len(market.history("GS", day, day, "5m")) == 78  # 14:30-21:00 UTC
    assert len(market.history("GS", day, day, "1h")) == 7  # the last hour is 30 minutes
    assert len(market.history("BTC-USD", day, day, "5m")) == 288
    assert len(market.history("BTC-USD", day, day, "1h")) == 24
    assert market.history("GS", dt.date(2026, 11, 21), dt.date(2026, 11, 21), "5m").empty


def test_split_volume_sums_exactly() -> None:
    rng = np.random.default_rng(3)
    totals = rng.integers(0, 10**12, size=200)
    weights = rng.lognormal(size=(200, 78))
    parts = split_volume(totals, weights)
    np.testing.assert_array_equal(parts.sum(axis=1), totals)
    assert parts.min() >= 0
    share = weights / weights.sum(axis=1, keepdims=True) * totals[:, None]
    assert np.abs(parts - share).max() < 1.0 + 1e-6


# -- OHLC invariants (hypothesis) -------------------------------------------------------

_DAYS = (NOW.date() - START_DATE).days
_SHARED = fixed(NOW)  # hypothesis examples share one market (function-scoped fixtures would reset)


@settings(max_examples=60, deadline=None)
@given(
    symbol=st.sampled_from(SYMBOLS),
    day=st.integers(0, _DAYS - 8),
    length=st.integers(0, 7),
    interval=st.sampled_from(["1d", "1h", "5m"]),
)
def test_bars_satisfy_ohlc_invariants(symbol: str, day: int, length: int, interval: str) -> None:
    start = START_DATE + dt.timedelta(days=day)
    bars = _SHARED.history(symbol, start, start + dt.timedelta(days=length), interval)  # type: ignore[arg-type]
    o, h, low, c = (bars[k].to_numpy() for k in ("open", "high", "low", "close"))
    assert np.all(np.isfinite(bars[["open", "high", "low", "close"]].to_numpy()))
    assert np.all(low > 0)
    assert np.all(h >= np.maximum(o, c))
    assert np.all(low <= np.minimum(o, c))
    assert np.all(bars["volume"].to_numpy() >= 0)
    assert bars.index.is_monotonic_increasing and bars.index.is_unique


# -- factor structure -------------------------------------------------------------------


def test_correlation_structure_follows_the_factor_model(closes: pd.DataFrame) -> None:
    r = np.log(closes).diff().dropna()
    corr = r.corr()
    stocks = [s.symbol for s in UNIVERSE if s.asset_type == "stock"]
    assert (corr.loc[stocks, "SPY"] > 0.25).all()
    assert corr.loc["DIA", "SPY"] > 0.9 and corr.loc["QQQ", "SPY"] > 0.8
    assert corr.loc["XLK", "AAPL"] > corr.loc["XLK", "XOM"]  # sector factor
    assert corr.loc["JPM", "BAC"] > corr.loc["JPM", "NEE"]
    assert corr.loc["TLT", "IEF"] > 0.8 and corr.loc["TLT", "SPY"] < 0
    assert corr.loc["BTC-USD", "ETH-USD"] > 0.5


def test_volatilities_are_realistic(closes: pd.DataFrame) -> None:
    vol = np.log(closes).diff().std() * np.sqrt(252)
    spec = {s.symbol: s for s in UNIVERSE}
    for symbol, value in vol.items():
        target = spec[str(symbol)].annual_vol
        if spec[str(symbol)].trades_weekends:  # crypto closes sampled on business days only
            target *= np.sqrt(365 / 252)
        assert 0.75 * target < value < 1.3 * target, symbol
    assert 0.12 < vol["SPY"] < 0.22 and vol["AGG"] < 0.08 and vol["BTC-USD"] > 0.4


def test_assets_describe_the_universe(market: SimulatedMarket) -> None:
    assets = market.assets()
    assert len(assets) == len(UNIVERSE) >= 40
    kinds = {a.asset_type for a in assets}
    assert kinds == {"stock", "etf", "bond", "crypto"}
    assert {a.data_source for a in assets} == {"simulated"}
    assert len({a.sector for a in assets if a.asset_type == "stock"}) >= 7
    assert "SPY" in {a.symbol for a in assets}
    spy = market.asset("spy")
    assert spy.market_cap == pytest.approx(1_000e6 * market.quote("SPY").price)


# -- quotes and ticks -------------------------------------------------------------------


def test_quote_matches_history(market: SimulatedMarket) -> None:
    closed = fixed(dt.datetime(2026, 11, 21, 9, tzinfo=dt.UTC))  # Saturday morning
    daily = closed.history("PG", dt.date(2026, 11, 1), dt.date(2026, 11, 21))
    quote = closed.quote("PG")
    assert quote.price == daily["close"].iloc[-1]
    assert quote.change == pytest.approx(daily["close"].iloc[-1] - daily["close"].iloc[-2])
    assert quote.change_percent == pytest.approx(100 * daily["close"].pct_change().iloc[-1])
    assert quote.volume == daily["volume"].iloc[-1]


def test_live_price_stays_inside_the_current_bar(market: SimulatedMarket) -> None:
    bars = market.history("AAPL", NOW.date(), NOW.date() + dt.timedelta(days=1), "5m")
    later = fixed(NOW + dt.timedelta(hours=4))
    bar = later.history("AAPL", NOW.date(), NOW.date(), "5m").loc["2026-11-20 18:00"]
    prices = [
        later.tick(["AAPL"], NOW + dt.timedelta(seconds=s))[0].price for s in range(1, 120, 7)
    ]
    assert len(set(prices)) > 1
    assert all(bar["low"] <= p <= bar["high"] for p in prices)
    prev_day = market.history("AAPL", dt.date(2026, 11, 19), dt.date(2026, 11, 19))
    quote = later.tick(["AAPL"], NOW)[0]
    assert quote.change == pytest.approx(quote.price - prev_day["close"].iloc[0])
    assert quote.volume >= bars["volume"].sum()  # bars up to 18:00 plus part of the current one
    assert (
        later.tick(["AAPL"], dt.datetime(2026, 11, 20, 18, 5, tzinfo=dt.UTC))[0].price
        == bar["close"]
    )


def test_tick_is_deterministic_remembered_and_thread_safe() -> None:
    a, b = fixed(NOW), fixed(NOW)
    moments = [NOW + dt.timedelta(seconds=i) for i in range(40)]
    first = [a.tick(["BTC-USD", "SPY"], m) for m in moments]
    assert first == [b.tick(["BTC-USD", "SPY"], m) for m in moments]
    market = fixed(NOW)
    threads = [
        threading.Thread(target=lambda m=m: market.tick(["BTC-USD", "SPY"], m)) for m in moments
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latest = market.quote("BTC-USD")  # the newest tick wins, whatever the thread order
    assert latest == first[-1][0]
    assert market.tick(["BTC-USD"], moments[0])[0] == first[0][0]  # an older tick is returned...
    assert market.quote("BTC-USD") == first[-1][0]  # ...but does not replace the newer one


def test_quote_is_refreshed_after_five_minutes() -> None:
    clock = [NOW]
    market = SimulatedMarket(clock=lambda: clock[0])
    first = market.quote("ETH-USD")
    clock[0] = NOW + dt.timedelta(minutes=2)
    assert market.quote("ETH-USD") == first
    clock[0] = NOW + dt.timedelta(minutes=6)
    assert market.quote("ETH-USD").timestamp == clock[0]


def test_batch_quotes_equal_single_quotes() -> None:
    """``quotes`` is ``quote`` for many symbols: same freshness rule, unknown ones left out."""
    clock = [NOW]
    batch = SimulatedMarket(clock=lambda: clock[0])
    single = SimulatedMarket(clock=lambda: clock[0])
    symbols = ["SPY", "aapl", "ETH-USD", "NOPE"]
    for minutes in (0, 2, 6):  # fresh ticks, kept ticks, refreshed ticks
        clock[0] = NOW + dt.timedelta(minutes=minutes)
        if minutes == 2:
            batch.quote("ETH-USD")  # one symbol already held, the others not
        got = batch.quotes(symbols)
        assert set(got) == {"SPY", "aapl", "ETH-USD"}
        assert got == {s: single.quote(s) for s in got}


def test_log_volatility_is_scipy_lfilter_bit_for_bit() -> None:
    """The AR(1) recursion replaced ``scipy.signal.lfilter``: same bits, so the same market."""
    from scipy.signal import lfilter

    from service.marketdata._daily import _ETA, _PHI, _log_volatility

    shocks = normals(42, "factor:market", 0, np.arange(5000, dtype=np.int64), 2)[:, 1]
    assert np.array_equal(_log_volatility(shocks), lfilter([_ETA], [1.0, -_PHI], shocks))
