"""The live price feed: tick the market, publish ``price_update`` and ``portfolio_update``.

Every ``QC_REALTIME_TICK_SECONDS`` the worker holding the feed lease (the only worker
without Redis) advances the market to *now* for every symbol some connection of the
cluster is subscribed to **or some subscribed portfolio holds** (a portfolio
subscriber alone keeps its holdings ticking), and publishes on the channels:

* ``price:<SYMBOL>``: one ``price_update`` per symbol;
* ``portfolio:<id>``: one ``portfolio_update`` per subscribed portfolio that holds
  one of those symbols, valued like ``GET /api/portfolios/{id}/`` (one database
  session per tick, never per stream).

The provider stores the latest quote (``tick`` remembers it, so REST reads agree).
``POST /api/realtime/force_price_update/`` goes through :meth:`PriceFeed.update` too.
The market-data Protocol is the seam: a real feed provider replaces the simulation.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Collection, Sequence

from litestar.channels import ChannelsPlugin
from sqlalchemy import select

from service import formatting as fmt
from service.assets.market import MarketData
from service.db import Database
from service.db.models import Asset, Portfolio, Position
from service.ledger.book import portfolio_reads
from service.marketdata.provider import Quote
from service.realtime.cluster import Cluster
from service.realtime.messages import PortfolioUpdate, PriceUpdate, encode
from service.realtime.registry import asset_channel, portfolio_channel

__all__ = ["PriceFeed", "price_update", "tick"]

log = logging.getLogger("service.realtime")


def price_update(quote: Quote) -> PriceUpdate:
    """The ``price_update`` message of a quote (prices and changes with 4 decimals)."""
    return PriceUpdate(
        symbol=quote.symbol,
        price=fmt.price(quote.price) or "0.0000",
        change=fmt.price(quote.change) or "0.0000",
        change_percent=fmt.percent(quote.change_percent) or "0.00",
        volume=int(quote.volume),
        timestamp=quote.timestamp,
    )


def tick(market: MarketData, symbols: Sequence[str], now: dt.datetime) -> list[Quote]:
    """Advance the market to ``now`` for ``symbols``.

    A symbol with imported daily bars (``import-prices``, even onto a symbol of the
    simulated universe) is quoted from its real series only: its quote is its last
    imported bar (:meth:`MarketData.quote`) and the provider never ticks it, so the
    feed follows the imported series and publishes no simulated move. The other
    symbols tick in the provider; those it does not know get their stored latest
    quote, and symbols nobody knows are left out.
    """
    quotes: list[Quote] = []
    live: list[str] = []
    for symbol in symbols:
        if market.imported(symbol):
            quote = market.quote(symbol)
            if quote is not None:
                quotes.append(quote)
        else:
            live.append(symbol)
    if not live:
        return quotes
    try:
        return quotes + list(market.provider.tick(live, now))
    except KeyError:
        pass
    for symbol in live:
        try:
            quotes.extend(market.provider.tick([symbol], now))
        except KeyError:
            quote = market.quote(symbol)
            if quote is not None:
                quotes.append(quote)
    return quotes


class PriceFeed:
    """Ticks and publishes (see the module docstring).

    Args:
        market: Quotes and the provider to tick.
        db: For the portfolio valuations.
        channels: Where updates are published.
        cluster: Which symbols and portfolios are wanted, and whether to lead.
        interval: Seconds between ticks.
        prefix: Channel name prefix (see :class:`~service.realtime.registry.Registry`).
    """

    def __init__(
        self,
        market: MarketData,
        db: Database,
        channels: ChannelsPlugin,
        cluster: Cluster,
        interval: float,
        prefix: str = "",
    ) -> None:
        self.market = market
        self.db = db
        self.channels = channels
        self.cluster = cluster
        self.interval = interval
        self.prefix = prefix

    async def run(self) -> None:
        """Tick forever (cancel to stop); errors are logged and the next tick tries again."""
        while True:
            await asyncio.sleep(self.interval)
            try:
                if await self.cluster.lead():
                    view = await self.cluster.view()
                    symbols = set(view.symbols) | await self.held_symbols(view.portfolios)
                    if symbols:
                        await self.update(sorted(symbols), view.portfolios)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("realtime: price feed tick failed")

    async def update(
        self, symbols: Sequence[str], portfolios: Collection[int] | None = None
    ) -> list[Quote]:
        """Tick ``symbols`` now and publish their updates.

        Args:
            symbols: Upper-case symbols known to the service.
            portfolios: Subscribed portfolio ids to revalue; ``None``: ask the cluster.

        Returns:
            The new quotes.
        """
        now = dt.datetime.now(dt.UTC)
        quotes = await asyncio.to_thread(tick, self.market, symbols, now)
        await asyncio.gather(
            *(
                self.channels.wait_published(
                    encode(price_update(q)), asset_channel(q.symbol, self.prefix)
                )
                for q in quotes
            )
        )
        if portfolios is None:
            portfolios = (await self.cluster.view()).portfolios
        if portfolios and quotes:
            await self._revalue(portfolios, [q.symbol for q in quotes], now)
        return quotes

    async def held_symbols(self, portfolios: Collection[int]) -> set[str]:
        """The symbols of the positions of ``portfolios`` (one query)."""
        if not portfolios:
            return set()
        async with self.db.read() as s:
            rows = await s.execute(
                select(Asset.symbol)
                .join(Position, Position.asset_id == Asset.id)
                .where(Position.portfolio_id.in_(list(portfolios)))
                .distinct()
            )
            return set(rows.scalars())

    async def _revalue(
        self, portfolios: Collection[int], symbols: Sequence[str], now: dt.datetime
    ) -> None:
        async with self.db.read() as s:
            held = (
                select(Position.portfolio_id)
                .join(Asset, Asset.id == Position.asset_id)
                .where(Position.portfolio_id.in_(list(portfolios)), Asset.symbol.in_(list(symbols)))
                .distinct()
            )
            rows = list(
                (
                    await s.execute(
                        select(Portfolio).where(Portfolio.id.in_(held)).order_by(Portfolio.id)
                    )
                ).scalars()
            )
            reads = await portfolio_reads(s, self.market, rows)
        await asyncio.gather(
            *(
                self.channels.wait_published(
                    encode(
                        PortfolioUpdate(
                            portfolio_id=r.id,
                            total_value=r.total_value,
                            daily_change=r.daily_change,
                            daily_change_percent=r.daily_change_percent,
                            timestamp=now,
                        )
                    ),
                    portfolio_channel(r.id, self.prefix),
                )
                for r in reads
            )
        )
