"""Asset currencies: the simulated listings, the asset table and API, and imports."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import delete, select, update

from service.assets.services import CurrencyConflict, check_import_currency, upsert_imported_asset
from service.db.models import Asset
from service.demo import sync_assets
from service.marketdata import PriceImportError, PriceStore, import_prices
from service.marketdata.fx import CURRENCIES
from service.marketdata.simulated import SimulatedMarket
from service.marketdata.universe import UNIVERSE
from tests.service.conftest import Api, shared_market

NEW_LISTINGS = {
    "SAP.DE": "EUR",
    "SIE.DE": "EUR",
    "HSBA.L": "GBP",
    "AZN.L": "GBP",
    "7203.T": "JPY",
    "6758.T": "JPY",
}
#: The universe before the non-US listings were added: its first 41 assets.
OLD_UNIVERSE = UNIVERSE[:41]
MID_SESSION = dt.datetime(2026, 11, 20, 18, 2, 30, tzinfo=dt.UTC)


def test_universe_currencies() -> None:
    currencies = {spec.symbol: spec.currency for spec in UNIVERSE}
    assert {s: currencies[s] for s in NEW_LISTINGS} == NEW_LISTINGS
    assert [spec.symbol for spec in UNIVERSE[41:]] == list(NEW_LISTINGS)  # appended
    assert all(spec.currency == "USD" for spec in OLD_UNIVERSE)
    assert all(spec.currency == "USD" for spec in UNIVERSE if spec.asset_type == "crypto")
    assert set(currencies.values()) == set(CURRENCIES)
    infos = {a.symbol: a for a in shared_market().assets()}
    assert {a.currency for a in infos.values() if a.asset_type == "crypto"} == {"USD"}
    assert infos["7203.T"].currency == "JPY" and infos["AAPL"].currency == "USD"
    # market cap in the asset's own currency (shares times the latest yen price)
    toyota = shared_market().quote("7203.T").price
    assert 500 < toyota < 10_000  # a yen-sized price
    assert infos["7203.T"].market_cap == pytest.approx(16_300e6 * toyota)


@pytest.mark.parametrize("symbol", ["AAPL", "SPY", "TLT", "XLK", "BTC-USD", "ETH-USD"])
def test_existing_assets_bars_are_unchanged(symbol: str) -> None:
    old = SimulatedMarket(clock=lambda: MID_SESSION, universe=OLD_UNIVERSE)
    new = SimulatedMarket(clock=lambda: MID_SESSION)
    day = MID_SESSION.date()
    daily = new.history(symbol, dt.date(2015, 1, 1), day)
    pd.testing.assert_frame_equal(daily, old.history(symbol, dt.date(2015, 1, 1), day))
    for interval in ("1h", "5m"):
        start = day - dt.timedelta(days=3)
        pd.testing.assert_frame_equal(
            new.history(symbol, start, day, interval),
            old.history(symbol, start, day, interval),
        )
    assert new.quote(symbol) == old.quote(symbol)  # the live price inside the bar too


def test_prices_match_the_ones_before_the_listings() -> None:
    # Computed with the code at commit d51b564 (41 assets, before the non-US listings):
    # the daily close of 2026-11-19 (docs/marketdata.md lists it rounded: SPY 539.88,
    # TLT 157.93, AAPL 34.70, BTC-USD 21023.90), the 18:00 five-minute close and the
    # live quote of Friday 2026-11-20 18:02:30 UTC.
    before = {
        "SPY": (539.8842304473949, 539.488585829719, 539.5559102372915),
        "TLT": (157.9324042743475, 158.2285717077714, 158.22773459343284),
        "AAPL": (34.70068585953342, 34.85731318251161, 34.87153827975764),
        "BTC-USD": (21023.901261254494, 20645.768892935783, 20617.4612066292),
    }
    market = SimulatedMarket(clock=lambda: MID_SESSION)
    day, today = dt.date(2026, 11, 19), MID_SESSION.date()
    for symbol, (close, five, live) in before.items():
        got = (
            float(market.history(symbol, day, day)["close"].iloc[-1]),
            float(market.history(symbol, today, today, "5m")["close"].iloc[-1]),
            market.quote(symbol).price,
        )
        assert got == pytest.approx((close, five, live), rel=1e-14), symbol


def _asset(api: Api, symbol: str) -> dict[str, Any]:
    (row,) = api.client.get(f"/api/assets/?symbol={symbol}").json()["results"]
    return dict(row)


def test_api_reads_show_the_currency(api: Api) -> None:
    rows = api.client.get("/api/assets/?limit=100").json()["results"]
    by_symbol = {a["symbol"]: a for a in rows}
    assert {s: by_symbol[s]["currency"] for s in NEW_LISTINGS} == NEW_LISTINGS
    assert {a["currency"] for a in rows if a["asset_type"] == "crypto"} == {"USD"}
    assert by_symbol["AAPL"]["currency"] == "USD"
    sap = by_symbol["SAP.DE"]
    detail = api.client.get(f"/api/assets/{sap['id']}/").json()
    assert (detail["symbol"], detail["currency"], detail["sector"]) == (
        "SAP.DE",
        "EUR",
        "Technology",
    )
    assert detail["current_price"] == f"{shared_market().quote('SAP.DE').price:.4f}"


async def _set_currency(api: Api, symbol: str, currency: str) -> None:
    async with api.db.write() as s:
        await s.execute(update(Asset).where(Asset.symbol == symbol).values(currency=currency))


async def _currency(api: Api, symbol: str) -> str:
    async with api.db.read() as s:
        return str(
            (await s.execute(select(Asset.currency).where(Asset.symbol == symbol))).scalar_one()
        )


@pytest.fixture
def new_symbols(api: Api) -> Iterator[list[str]]:
    """Symbols a test adds as assets, deleted afterwards (other modules count the assets)."""
    symbols: list[str] = []
    yield symbols
    api.call(_delete_assets, api, symbols)


async def _delete_assets(api: Api, symbols: list[str]) -> None:
    async with api.db.write() as s:
        await s.execute(delete(Asset).where(Asset.symbol.in_(symbols)))
    api.client.app.state.resources.assets.invalidate()


def test_sync_writes_the_provider_currency_on_existing_rows(
    api: Api, new_symbols: list[str]
) -> None:
    # a row from before currencies (migration 0009 gave every row USD)
    api.call(_set_currency, api, "HSBA.L", "USD")
    assert api.call(sync_assets, api.db, shared_market()) == 0  # nothing to add
    assert api.call(_currency, api, "HSBA.L") == "GBP"
    # an imported asset's currency is the import's: the provider does not touch it
    symbol = f"CUR{uuid.uuid4().hex[:5].upper()}"
    new_symbols.append(symbol)
    api.call(_insert_imported, api, symbol)
    api.call(sync_assets, api.db, shared_market())
    assert api.call(_currency, api, symbol) == "JPY"


async def _insert_imported(api: Api, symbol: str) -> None:
    async with api.db.write() as s:
        s.add(
            Asset(
                symbol=symbol, name=symbol, asset_type="stock", data_source="import", currency="JPY"
            )
        )


def _csv(path: Path) -> Path:
    path.write_text(
        "Date,Open,High,Low,Close,Adj Close,Volume\n2024-01-02,10,11,9,10.5,10.5,1000\n"
        "2024-01-03,10.5,13,10,12.6,12.6,2000\n"
    )
    return path


def test_imported_assets_are_usd_unless_told(
    api: Api, tmp_path: Path, new_symbols: list[str]
) -> None:
    store = PriceStore(api.settings.prices_dir)
    plain, euro = (f"IMP{uuid.uuid4().hex[:5].upper()}" for _ in range(2))
    new_symbols += [plain, euro]
    result = import_prices(_csv(tmp_path / f"{plain}.csv"), store=store)
    assert result.currency is None
    api.call(upsert_imported_asset, api.db, result)
    assert _asset(api, plain)["currency"] == "USD"
    result = import_prices(_csv(tmp_path / f"{euro}.csv"), currency="eur", store=store)
    assert result.currency == "EUR"
    _, created = api.call(upsert_imported_asset, api.db, result)
    assert created and _asset(api, euro)["currency"] == "EUR"
    # re-importing without a currency keeps it; with one, an imported asset takes it
    api.call(upsert_imported_asset, api.db, import_prices(tmp_path / f"{euro}.csv", store=store))
    assert _asset(api, euro)["currency"] == "EUR"
    again = import_prices(tmp_path / f"{euro}.csv", currency="GBP", store=store)
    api.call(upsert_imported_asset, api.db, again)
    assert _asset(api, euro)["currency"] == "GBP"
    with pytest.raises(PriceImportError, match="currency must be one of USD, EUR, GBP, JPY"):
        import_prices(tmp_path / f"{euro}.csv", currency="CHF", store=store)


def test_a_provider_asset_keeps_the_provider_currency(api: Api) -> None:
    api.call(check_import_currency, api.db, "SAP.DE", "EUR")  # stating it again is fine
    api.call(check_import_currency, api.db, "SAP.DE", None)
    with pytest.raises(CurrencyConflict, match=r"SAP\.DE is a simulated asset in EUR"):
        api.call(check_import_currency, api.db, "SAP.DE", "USD")
    assert _asset(api, "SAP.DE")["currency"] == "EUR"


def test_cli_currency_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    monkeypatch.setenv("QC_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("QC_DATABASE_URL", raising=False)
    path = _csv(tmp_path / "xyz.csv")
    assert main(["import-prices", str(path), "--currency", "chf"]) == 2
    assert "--currency must be one of USD, EUR, GBP, JPY" in capsys.readouterr().err
    assert main(["import-prices", str(path), "--currency", "gbp", "--name", "Xyz plc"]) == 0
    assert "XYZ: 2 rows 2024-01-02..2024-01-03 (new asset)" in capsys.readouterr().out
    assert main(["import-prices", str(path)]) == 0  # not given: kept
    assert asyncio.run(_cli_asset("XYZ")) == ("Xyz plc", "import", "GBP")


async def _cli_asset(symbol: str) -> tuple[str, str, str]:
    from service.db import Database
    from service.settings import Settings

    db = Database(Settings.from_env().database)
    try:
        async with db.read() as s:
            a = (await s.execute(select(Asset).where(Asset.symbol == symbol))).scalar_one()
            return a.name, a.data_source, a.currency
    finally:
        await db.dispose()
