"""Startup data: the asset table synced from the provider, and the optional demo user."""

from __future__ import annotations

import datetime as dt
import logging
from decimal import Decimal
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from service.auth.services import create_token, create_user
from service.db import Database
from service.db.models import Asset, Portfolio, User
from service.ledger.positions import lock_user_ledger
from service.marketdata.provider import MarketDataProvider
from service.transactions.services import LedgerEntry, record

__all__ = ["DEMO_PASSWORD", "DEMO_USER", "seed_demo", "sync_assets"]

log = logging.getLogger("service")

DEMO_USER = "demo"
DEMO_PASSWORD = "walkthrough-2026"
_DEMO_BUYS = [("SPY", "25"), ("AAPL", "40"), ("MSFT", "20"), ("TLT", "30"), ("BTC-USD", "0.5")]


async def sync_assets(db: Database, provider: MarketDataProvider) -> int:
    """Insert the provider's assets missing from the table; returns how many were added.

    The provider owns the currency of its assets: an existing row of the same source
    whose currency differs (a row from before currencies) is given the provider's.
    """
    infos = provider.assets()
    async with db.read() as s:
        known = {
            r.symbol: (r.data_source, r.currency)
            for r in await s.execute(select(Asset.symbol, Asset.data_source, Asset.currency))
        }
    missing = [a for a in infos if a.symbol not in known]
    stale = [
        a
        for a in infos
        if a.symbol in known and known[a.symbol][0] == a.data_source
        and known[a.symbol][1] != a.currency
    ]  # fmt: skip
    if stale:
        async with db.write() as s:
            for a in stale:
                await s.execute(
                    update(Asset)
                    .where(Asset.symbol == a.symbol, Asset.data_source == a.data_source)
                    .values(currency=a.currency)
                )
    if not missing:
        return 0
    try:
        async with db.write() as s:
            for a in missing:
                s.add(
                    Asset(
                        symbol=a.symbol,
                        name=a.name,
                        asset_type=a.asset_type,
                        sector=a.sector,
                        market_cap=Decimal(str(round(a.market_cap, 2))),
                        data_source=a.data_source,
                        currency=a.currency,
                    )
                )
    except IntegrityError:  # another worker inserted them first
        return 0
    return len(missing)


async def seed_demo(
    db: Database, provider: MarketDataProvider, data_dir: Path
) -> tuple[str, str] | None:
    """Create the demo user, a token and a demo portfolio once.

    The token is written to ``<data_dir>/demo-token.txt`` (mode 600) so that later
    starts can print it again. Returns ``(username, token)``, or ``None`` when the
    demo user exists but its token file is gone.
    """
    token_file = data_dir / "demo-token.txt"
    async with db.read() as s:
        exists = (
            await s.execute(select(User.id).where(User.username == DEMO_USER))
        ).scalar_one_or_none()
    if exists is not None:
        return (DEMO_USER, token_file.read_text().strip()) if token_file.exists() else None
    user = await create_user(db, DEMO_USER, DEMO_PASSWORD)
    token = await create_token(db, user.id)
    data_dir.mkdir(parents=True, exist_ok=True)
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    async with db.write() as s:
        portfolio = Portfolio(
            user_id=user.id, name="Demo portfolio", description="Seeded on first start."
        )
        s.add(portfolio)
        await lock_user_ledger(s, user.id)
    known = {a.symbol for a in provider.assets()}
    day = dt.date.today() - dt.timedelta(days=365)
    buys = []
    for symbol, qty in _DEMO_BUYS:
        if symbol not in known:
            continue
        bars = provider.history(symbol, day - dt.timedelta(days=7), day, "1d")
        price = Decimal(f"{float(bars['close'].iloc[-1]):.2f}")
        buys.append(LedgerEntry(symbol, "buy", Decimal(qty), price, Decimal("1"), day))
    # the money the buys spend, deposited first (rounded up to the thousand): cash stays positive
    spent = sum((b.quantity * b.price + b.fees for b in buys), Decimal(0))
    deposit = (spent / 1000).to_integral_value(rounding="ROUND_CEILING") * 1000
    async with db.write() as s:  # the deposit and the buys: one unit of work
        if buys:
            await record(s, user.id, portfolio.id, LedgerEntry(None, "deposit", None, deposit, 0, day))
        for entry in buys:
            await record(s, user.id, portfolio.id, entry)
    log.info("demo data seeded: user %r, portfolio %d", DEMO_USER, portfolio.id)
    return DEMO_USER, token
