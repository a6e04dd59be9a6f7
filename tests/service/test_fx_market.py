"""FX rates through MarketData: as-of dates, inverses and crosses, live quotes, imported pairs."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select

from service.assets.market import FxQuote, MarketData
from service.cli import main
from service.db import Database
from service.db.models import Asset
from service.marketdata import PriceImportError, PriceStore, SimulatedFX, import_prices
from service.marketdata.simulated import SimulatedMarket
from service.settings import Settings
from tests.service.conftest import MARKET_NOW

FRIDAY = MARKET_NOW.date()  # 2026-11-20, after the US close
WEEK = [FRIDAY - dt.timedelta(days=7 - k) for k in range(7)]  # Fri 13 .. Thu 19


def _market(
    tmp_path: Path, clock: Callable[[], dt.datetime] = lambda: MARKET_NOW
) -> tuple[MarketData, PriceStore]:
    store = PriceStore(tmp_path / "prices")
    return MarketData(SimulatedMarket(clock=clock), store), store


@pytest.fixture(scope="module")
def closes() -> pd.DataFrame:
    """Daily closes of the simulated pairs (same seed and clock as the markets below)."""
    fx = SimulatedFX(clock=lambda: MARKET_NOW)
    start = FRIDAY - dt.timedelta(days=30)
    frame = pd.DataFrame({p: fx.history(p, start, FRIDAY)["close"] for p in fx.pairs})
    frame.index = pd.DatetimeIndex(frame.index).tz_localize(None)
    return frame


def _close(closes: pd.DataFrame, pair: str, day: dt.date) -> float:
    return float(closes[pair].loc[: pd.Timestamp(day)].iloc[-1])


def test_rates_as_of_dates_take_the_last_close(tmp_path: Path, closes: pd.DataFrame) -> None:
    market, _ = _market(tmp_path)
    got = market.fx_rates("EUR", "USD", WEEK)
    friday = _close(closes, "EURUSD", WEEK[0])
    # Friday, Saturday and Sunday are Friday's close; Monday on are their own
    assert got[:3].tolist() == [friday, friday, friday]
    assert got[3:].tolist() == [_close(closes, "EURUSD", d) for d in WEEK[3:]]
    assert len(set(got[2:].tolist())) == 5  # the rate moves
    # a DatetimeIndex, tz-aware or not, gives the same
    aware = pd.DatetimeIndex(WEEK).tz_localize("UTC")
    assert market.fx_rates("eur", "usd", aware).tolist() == got.tolist()
    assert np.isnan(market.fx_rates("EUR", "USD", [dt.date(2014, 12, 31)])).all()
    empty = market.fx_rates("EUR", "GBP", [])
    assert empty.dtype == np.float64 and empty.shape == (0,)


def test_identity_inverse_and_crosses_equal_the_pair_closes(
    tmp_path: Path, closes: pd.DataFrame
) -> None:
    market, _ = _market(tmp_path)
    days = pd.DatetimeIndex([pd.Timestamp(d) for d in WEEK if d.weekday() < 5])
    eur, gbp, jpy = (closes[p].loc[days].to_numpy() for p in ("EURUSD", "GBPUSD", "USDJPY"))
    assert market.fx_rates("usd", "USD", days).tolist() == [1.0] * len(days)
    assert market.fx_rates("JPY", "jpy", days).tolist() == [1.0] * len(days)
    expected = {
        ("EUR", "USD"): eur,
        ("USD", "EUR"): 1.0 / eur,
        ("USD", "JPY"): jpy,
        ("JPY", "USD"): 1.0 / jpy,
        ("EUR", "GBP"): eur * (1.0 / gbp),
        ("GBP", "EUR"): gbp * (1.0 / eur),
        ("EUR", "JPY"): eur * jpy,
        ("JPY", "EUR"): (1.0 / jpy) * (1.0 / eur),
        ("GBP", "JPY"): gbp * jpy,
    }
    for (cur, base), want in expected.items():
        got = market.fx_rates(cur, base, days)
        np.testing.assert_allclose(got, want, rtol=1e-15, err_msg=f"{cur}{base}")
        assert (got > 0).all()


def test_unsupported_currencies_have_no_rates(tmp_path: Path) -> None:
    market, _ = _market(tmp_path)
    assert market.currencies() == ("USD", "EUR", "GBP", "JPY")
    for cur, base in [("CHF", "USD"), ("USD", "XYZ"), ("EURO", "USD"), ("", "USD")]:
        with pytest.raises(KeyError):
            market.fx_rates(cur, base, WEEK)
        assert market.fx_quote(cur, base) is None  # no rate, like a pair nothing connects


def test_quote_after_the_close_is_the_close_against_the_previous_one(
    tmp_path: Path, closes: pd.DataFrame
) -> None:
    market, _ = _market(tmp_path)
    thursday = FRIDAY - dt.timedelta(days=1)
    eur_fri, eur_thu = _close(closes, "EURUSD", FRIDAY), _close(closes, "EURUSD", thursday)
    quote = market.fx_quote("eur", "usd")
    assert isinstance(quote, FxQuote) and quote.timestamp == MARKET_NOW
    assert (quote.rate, quote.previous_close) == (eur_fri, eur_thu)
    inverse = market.fx_quote("USD", "EUR")
    assert inverse is not None
    assert (inverse.rate, inverse.previous_close) == (1.0 / eur_fri, 1.0 / eur_thu)
    cross = market.fx_quote("GBP", "JPY")
    assert cross is not None
    gbp_jpy = (_close(closes, "GBPUSD", thursday), _close(closes, "USDJPY", thursday))
    assert cross.previous_close == pytest.approx(gbp_jpy[0] * gbp_jpy[1], rel=1e-15)
    same = market.fx_quote("JPY", "JPY")
    assert same == FxQuote(1.0, 1.0, MARKET_NOW)


def test_live_rate_moves_in_the_session_and_is_reused_for_five_minutes(
    tmp_path: Path, closes: pd.DataFrame
) -> None:
    now = [dt.datetime(2026, 11, 20, 18, 2, 30, tzinfo=dt.UTC)]  # Friday, mid-session
    market, _ = _market(tmp_path, lambda: now[0])
    first = market.fx_quote("EUR", "USD")
    assert first is not None and first.timestamp == now[0]
    thursday = _close(closes, "EURUSD", FRIDAY - dt.timedelta(days=1))
    assert first.previous_close == thursday
    now[0] += dt.timedelta(minutes=4, seconds=59)
    assert market.fx_quote("eur", "USD") is first  # cached, like a quote under 5 minutes old
    now[0] += dt.timedelta(seconds=1)
    second = market.fx_quote("EUR", "USD")
    assert second is not None and second.timestamp == now[0]
    assert second.rate != first.rate and second.previous_close == thursday
    bars = SimulatedFX(clock=lambda: MARKET_NOW).history("EURUSD", FRIDAY, FRIDAY).iloc[0]
    assert bars["low"] <= first.rate <= bars["high"] and bars["low"] <= second.rate <= bars["high"]
    # the inverse is the same tick, inverted
    inverse = market.fx_quote("USD", "EUR")
    assert inverse is not None and inverse.rate == 1.0 / second.rate


def _pair_csv(path: Path, closes: list[float], end: dt.date) -> Path:
    days = pd.bdate_range(end=end, periods=len(closes))
    lines = ["Date,Open,High,Low,Close,Volume"]
    lines += [
        f"{d.date()},{c},{c * 1.01},{c * 0.99},{c},0" for d, c in zip(days, closes, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_imported_pair_replaces_the_simulated_one(tmp_path: Path, closes: pd.DataFrame) -> None:
    market, store = _market(tmp_path)
    before = market.fx_quote("EUR", "USD")
    assert before is not None and before.rate == _close(closes, "EURUSD", FRIDAY)
    path = _pair_csv(tmp_path / "eurusd.csv", [1.25, 1.5, 1.75], WEEK[-1])  # Tue 17 .. Thu 19
    result = import_prices(path, store=store)
    assert (result.symbol, result.fx_pair) == ("EURUSD", True)

    # Monday 16 is before the first imported bar: unknown; Friday takes Thursday's close
    rates = market.fx_rates("EUR", "USD", [*WEEK[3:], FRIDAY])
    assert np.isnan(rates[0]) and rates[1:].tolist() == [1.25, 1.5, 1.75, 1.75]
    assert market.fx_rates("USD", "EUR", [FRIDAY]).tolist() == [1.0 / 1.75]
    gbp = _close(closes, "GBPUSD", FRIDAY)
    assert market.fx_rates("EUR", "GBP", [FRIDAY]).tolist() == [1.75 * (1.0 / gbp)]
    # the quote follows at once (the import changed the store): last close against the one before
    quote = market.fx_quote("EUR", "USD")
    assert quote == FxQuote(1.75, 1.5, dt.datetime(2026, 11, 19, tzinfo=dt.UTC))
    cross = market.fx_quote("EUR", "GBP")
    assert cross is not None and cross.rate == 1.75 * (1.0 / gbp)
    assert cross.timestamp == quote.timestamp  # as of its oldest leg
    # the other pairs stay simulated
    assert market.fx_rates("GBP", "USD", [FRIDAY]).tolist() == [gbp]


def test_imported_pair_in_the_other_orientation_replaces_it_too(
    tmp_path: Path, closes: pd.DataFrame
) -> None:
    market, store = _market(tmp_path)
    import_prices(_pair_csv(tmp_path / "USDEUR.csv", [0.8], FRIDAY), store=store)
    assert market.fx_rates("EUR", "USD", [FRIDAY]).tolist() == [1.0 / 0.8]
    assert market.fx_rates("USD", "EUR", [FRIDAY]).tolist() == [0.8]
    quote = market.fx_quote("EUR", "USD")
    assert quote is not None and (quote.rate, quote.previous_close) == (1.0 / 0.8, 1.0 / 0.8)


def test_without_a_simulated_provider_only_imported_pairs_have_rates(tmp_path: Path) -> None:
    class Feed:  # a provider that is not the simulated market
        def quote(self, symbol: str) -> object:
            raise KeyError(symbol)

    store = PriceStore(tmp_path / "prices")
    market = MarketData(Feed(), store)  # type: ignore[arg-type]
    assert market.fx is None
    assert np.isnan(market.fx_rates("EUR", "USD", [FRIDAY])).all()
    assert market.fx_quote("EUR", "USD") is None
    assert market.fx_quote("USD", "USD") is not None
    import_prices(_pair_csv(tmp_path / "GBPUSD.csv", [1.2, 1.3], FRIDAY), store=store)
    assert market.fx_rates("USD", "GBP", [FRIDAY]).tolist() == [1.0 / 1.3]
    quote = market.fx_quote("GBP", "USD")
    assert quote is not None and (quote.rate, quote.previous_close) == (1.3, 1.2)
    assert market.fx_quote("EUR", "GBP") is None  # no EUR pair


def test_pair_imports_refuse_asset_options(tmp_path: Path) -> None:
    store = PriceStore(tmp_path / "prices")
    path = _pair_csv(tmp_path / "EURGBP.csv", [0.85], FRIDAY)
    with pytest.raises(PriceImportError, match="FX pair"):
        import_prices(path, store=store, name="Euro")
    with pytest.raises(PriceImportError, match="FX pair"):
        import_prices(path, store=store, currency="GBP")
    assert store.symbols() == []
    # six letters that are not two supported codes are an ordinary symbol
    assert not import_prices(path, symbol="EURCHF", store=store).fx_pair


async def _asset_symbols(url: str) -> set[str]:
    db = Database(url)
    try:
        async with db.read() as s:
            return set((await s.execute(select(Asset.symbol))).scalars())
    finally:
        await db.dispose()


def test_cli_imports_a_pair_as_rates_not_an_asset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("QC_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("QC_DATABASE_URL", raising=False)
    path = _pair_csv(tmp_path / "file.csv", [150.0, 155.5], FRIDAY)
    assert main(["import-prices", str(path), "--symbol", "usdjpy", "--name", "Yen"]) == 2
    assert "for assets only" in capsys.readouterr().err
    assert main(["import-prices", str(path), "--symbol", "usdjpy"]) == 0
    assert "USDJPY: 2 rows 2026-11-19..2026-11-20 (FX pair: rates, no asset)" in (
        capsys.readouterr().out
    )
    settings = Settings.from_env()
    assert "USDJPY" not in asyncio.run(_asset_symbols(settings.database))
    market = MarketData(SimulatedMarket(clock=lambda: MARKET_NOW), PriceStore(settings.prices_dir))
    assert market.fx_rates("USD", "JPY", [FRIDAY - dt.timedelta(days=1), FRIDAY]).tolist() == [
        150.0,
        155.5,
    ]
    quote = market.fx_quote("JPY", "USD")
    assert quote is not None and (quote.rate, quote.previous_close) == (1.0 / 155.5, 1.0 / 150.0)
