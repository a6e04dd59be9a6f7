"""Asset queries and the price views built on :class:`~service.assets.market.MarketData`."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

import numpy as np
from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service import formatting as fmt
from service.assets.directory import AssetDirectory, AssetRow
from service.assets.market import IntervalUnavailable, MarketData
from service.assets.schemas import (
    AssetRead,
    BulkPrice,
    BulkPricesRead,
    Interval,
    PriceBar,
    PriceHistoryRead,
)
from service.db import Database
from service.db.models import Asset
from service.errors import NotFoundError, ValidationError
from service.marketdata.importers import ImportResult
from service.pagination import PageParams

__all__ = [
    "MAX_DAYS",
    "AssetReads",
    "CurrencyConflict",
    "asset_read",
    "bulk_prices",
    "check_import_currency",
    "get_asset",
    "list_assets",
    "price_history",
    "upsert_imported_asset",
]

#: Largest ``days`` per interval (5m bars: 78 per equity day, 288 per crypto day).
MAX_DAYS: dict[str, int] = {"1d": 5000, "1h": 365, "5m": 60}


def asset_read(asset: Asset | AssetRow, market: MarketData) -> AssetRead:
    quote = market.quote(asset.symbol)
    return AssetRead(
        id=asset.id,
        symbol=asset.symbol,
        name=asset.name,
        asset_type=asset.asset_type,
        sector=asset.sector,
        current_price=fmt.price(quote.price) if quote else None,
        price_change=fmt.price(quote.change) if quote else None,
        price_change_percent=fmt.percent(quote.change_percent) if quote else None,
        volume=quote.volume if quote else None,
        market_cap=fmt.money(asset.market_cap) if asset.market_cap is not None else None,
        data_source=asset.data_source,
        currency=asset.currency,
        last_updated=quote.timestamp if quote else asset.updated_at,
    )


async def list_assets(
    session: AsyncSession,
    market: MarketData,
    page: PageParams,
    *,
    symbol: str | None,
    asset_type: str | None,
    sector: str | None,
    search: str | None,
) -> tuple[list[AssetRead], int]:
    """Assets ordered by symbol, filtered (case-insensitive) and paginated."""
    query = select(Asset)
    if symbol:
        query = query.where(func.upper(Asset.symbol) == symbol.upper())
    if asset_type:
        query = query.where(Asset.asset_type == asset_type)
    if sector:
        query = query.where(func.lower(Asset.sector) == sector.lower())
    if search:
        # a substring, literally: ``%`` and ``_`` are characters, not wildcards
        text = search.lower()
        query = query.where(
            or_(
                func.lower(Asset.symbol).contains(text, autoescape=True),
                func.lower(Asset.name).contains(text, autoescape=True),
            )
        )
    count = (await session.execute(select(func.count()).select_from(query.subquery()))).scalar_one()
    rows = (
        await session.execute(query.order_by(Asset.symbol).limit(page.limit).offset(page.offset))
    ).scalars()
    return [asset_read(a, market) for a in rows], int(count)


async def get_asset(assets: AssetDirectory, asset_id: int) -> AssetRow:
    """The asset with ``asset_id`` (from the in-process directory), else 404."""
    asset = await assets.by_id(asset_id)
    if asset is None:
        raise NotFoundError(f"Asset {asset_id} not found.")
    return asset


def price_history(
    asset: Asset | AssetRow, market: MarketData, days: int, interval: Interval, today: dt.date
) -> PriceHistoryRead:
    """The last ``days`` trading days of bars (``days`` counts daily bars, also for 1h/5m).

    Raises:
        ValidationError: ``days`` above :data:`MAX_DAYS` for the interval; ``interval``
            ``unavailable`` for an intraday interval of an asset with imported daily bars only.
    """
    if days > MAX_DAYS[interval]:
        raise ValidationError(
            "days", "max_value", f"days must be <= {MAX_DAYS[interval]} for interval {interval}."
        )
    span = dt.timedelta(days=math.ceil(days * 7 / 5) + 10)
    try:
        daily = market.history(asset.symbol, today - span, today, "1d").iloc[-days:]
    except KeyError:
        return PriceHistoryRead(symbol=asset.symbol, interval=interval, data=[])
    if interval == "1d" or daily.empty:
        bars, intraday = daily, False
    else:
        start = daily.index[0].date()
        try:
            bars, intraday = market.history(asset.symbol, start, today, interval), True
        except IntervalUnavailable:
            raise ValidationError(
                "interval",
                "unavailable",
                f"{asset.symbol} has imported daily bars only; use interval=1d.",
            ) from None
    o, h, lo, c = (bars[k].to_numpy(dtype=np.float64) for k in ("open", "high", "low", "close"))
    vol = bars["volume"].to_numpy(dtype=np.int64)
    stamps = [
        (ts.isoformat().replace("+00:00", "Z") if intraday else ts.date().isoformat())
        for ts in bars.index
    ]
    columns = zip(*(fmt.price_column(x.tolist()) for x in (o, h, lo, c)), strict=True)
    data = [
        PriceBar(date=day, open=op, high=hi, low=lw, close=cl, volume=v)
        for day, (op, hi, lw, cl), v in zip(stamps, columns, vol.tolist(), strict=True)
    ]
    return PriceHistoryRead(symbol=asset.symbol, interval=interval, data=data)


async def bulk_prices(
    assets: AssetDirectory, market: MarketData, symbols: Sequence[str]
) -> BulkPricesRead:
    """Latest prices by symbol; any unknown symbol is a 400 naming it."""
    wanted = list(dict.fromkeys(s.upper() for s in symbols))
    missing = [s for s in wanted if await assets.by_symbol(s) is None]
    if missing:
        raise ValidationError(
            "symbols", "not_found", f"Unknown symbols: {', '.join(missing)}.", values=missing
        )
    prices: dict[str, BulkPrice] = {}
    for symbol in wanted:
        quote = market.quote(symbol)
        prices[symbol] = BulkPrice(
            price=fmt.price(quote.price) if quote else None,
            change=fmt.price(quote.change) if quote else None,
            change_percent=fmt.percent(quote.change_percent) if quote else None,
            timestamp=quote.timestamp if quote else dt.datetime.now(dt.UTC),
        )
    return BulkPricesRead(prices=prices)


class AssetReads:
    """Asset reads over the in-process directory and the market (one dependency per request)."""

    __slots__ = ("directory", "market")

    def __init__(self, directory: AssetDirectory, market: MarketData) -> None:
        self.directory = directory
        self.market = market

    async def get(self, asset_id: int) -> AssetRead:
        """The asset with its live quote, else 404."""
        return asset_read(await get_asset(self.directory, asset_id), self.market)

    async def price_history(
        self, asset_id: int, days: int, interval: Interval, today: dt.date
    ) -> PriceHistoryRead:
        """:func:`price_history` of the asset with ``asset_id`` (404 when unknown)."""
        asset = await get_asset(self.directory, asset_id)
        return price_history(asset, self.market, days, interval, today)

    async def bulk_prices(self, symbols: Sequence[str]) -> BulkPricesRead:
        """:func:`bulk_prices` of ``symbols``."""
        return await bulk_prices(self.directory, self.market, symbols)


class CurrencyConflict(ValueError):
    """An import gives a provider's asset another currency than the provider's."""


async def check_import_currency(db: Database, symbol: str, currency: str | None) -> None:
    """Refuse a ``currency`` that contradicts the provider's for one of its assets.

    The provider owns the currency of its assets (the startup sync writes it), so an
    import may state it again but not change it; an imported asset's is the import's.

    Raises:
        CurrencyConflict: ``symbol`` is a provider's asset in another currency.
    """
    if currency is None:
        return
    async with db.read() as s:
        row = (
            await s.execute(select(Asset.data_source, Asset.currency).where(Asset.symbol == symbol))
        ).one_or_none()
    if row is not None and row.data_source != "import" and row.currency != currency:
        raise CurrencyConflict(
            f"{symbol} is a {row.data_source} asset in {row.currency}; "
            f"its currency cannot be changed to {currency}"
        )


async def upsert_imported_asset(db: Database, result: ImportResult) -> tuple[Asset, bool]:
    """Attach an ``import-prices`` result to its asset; ``(asset, created)``.

    A new symbol becomes an asset (``data_source="import"``, named by its ticker unless
    a name is given, in USD unless a currency is given). An existing asset keeps its
    name, type, sector, currency and source unless the import gives them: its imported
    bars replace the provider's series (:class:`~service.assets.market.MarketData`).

    Raises:
        ValueError: The result is an FX pair (it has no asset).
        CurrencyConflict: See :func:`check_import_currency`.
    """
    if result.fx_pair:
        raise ValueError(f"{result.symbol} is an FX pair: it has no asset")
    await check_import_currency(db, result.symbol, result.currency)
    async with db.write() as s:
        asset = (
            await s.execute(select(Asset).where(Asset.symbol == result.symbol))
        ).scalar_one_or_none()
        created = asset is None
        if asset is None:
            asset = Asset(
                symbol=result.symbol,
                name=result.name or result.symbol,
                asset_type=result.asset_type or "stock",
                sector=result.sector or "",
                data_source="import",
                currency=result.currency or "USD",
            )
            s.add(asset)
        else:
            if result.name is not None:
                asset.name = result.name
            if result.asset_type is not None:
                asset.asset_type = result.asset_type
            if result.sector is not None:
                asset.sector = result.sector
            if result.currency is not None:
                asset.currency = result.currency
    return asset, created
