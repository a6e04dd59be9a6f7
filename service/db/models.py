"""ORM models. The transaction ledger is the source of truth; ``positions`` is derived.

``positions`` caches, per (portfolio, asset), the quantity and cost basis implied by
the ledger under the average-cost method. It is only ever written in the same
database transaction as the ledger row that changes it (see
:mod:`service.transactions.services`), so the two cannot disagree.

Tables for the analytics/backtesting/tax features (strategies, backtests,
tax_records, tax_reports, user_tax_settings) are created by the first migration
so that those features can add columns in their own migrations.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from service.db.types import ExactDecimal, UTCDateTime

__all__ = [
    "ApiKey",
    "Asset",
    "AuthToken",
    "Backtest",
    "Base",
    "LedgerVersion",
    "Portfolio",
    "Position",
    "Strategy",
    "TaxRecord",
    "TaxReport",
    "Transaction",
    "User",
    "UserSession",
    "UserTaxSettings",
    "username_key",
    "utcnow",
]


def utcnow() -> dt.datetime:
    """The current time, timezone-aware UTC."""
    return dt.datetime.now(dt.UTC)


class Base(DeclarativeBase):
    type_annotation_map = {  # noqa: RUF012 - SQLAlchemy reads this class attribute
        Decimal: ExactDecimal(),
        dt.datetime: UTCDateTime(),
        dict[str, Any]: JSON(),
    }


def _user_fk() -> ForeignKey:
    return ForeignKey("users.id", ondelete="CASCADE")


def username_key(username: str) -> str:
    """What makes two usernames one: NFKC, trimmed, case-folded (full Unicode, not the
    database's ``lower``, which on SQLite folds ASCII only), NFKC again.

    >>> username_key(" \uff22ob ") == username_key("BOB") == username_key("bob") == "bob"
    True
    >>> username_key("\u00c9lise") == username_key("\u00e9lise")
    True
    """
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", username).strip().casefold())


def _username_key_default(context: Any) -> str:
    return username_key(context.get_current_parameters()["username"])


class User(Base):
    """A user; usernames are unique whatever their Unicode form or case: ``username_key``
    (:func:`username_key` of ``username``, set on insert) is unique."""

    __tablename__ = "users"
    __table_args__ = (Index("uq_users_username_key", "username_key", unique=True),)
    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(150), unique=True)
    username_key: Mapped[str] = mapped_column(
        String(600), default=_username_key_default, server_default=""
    )
    password_hash: Mapped[str] = mapped_column(String(255))
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class LedgerVersion(Base):
    """A per-user counter that every write of the user's portfolios or ledger bumps.

    Bumped in the write's own transaction by
    :func:`service.ledger.positions.lock_user_ledger` (no database triggers since
    migration 0008): readers compare it to decide whether rows they keep in memory
    are still current.
    """

    __tablename__ = "ledger_versions"
    user_id: Mapped[int] = mapped_column(_user_fk(), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger, default=0)


class AuthToken(Base):
    """An API token (``Authorization: Token <key>``); only its SHA-256 is stored."""

    __tablename__ = "auth_tokens"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(_user_fk(), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(12))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime | None] = mapped_column(default=None)  # None: never


class ApiKey(Base):
    """A service-to-service key (``X-API-Key``); only its SHA-256 is stored."""

    __tablename__ = "api_keys"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(_user_fk(), index=True)
    name: Mapped[str] = mapped_column(String(100))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(12))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    scopes: Mapped[str] = mapped_column(String(200), default="")  # space separated


class UserSession(Base):
    """A browser session: the cookie carries the key, the row its SHA-256 and CSRF token."""

    __tablename__ = "user_sessions"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(_user_fk(), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column()


class Asset(Base):
    __tablename__ = "assets"
    id: Mapped[int] = mapped_column(primary_key=True)
    symbol: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    asset_type: Mapped[str] = mapped_column(String(16), index=True)
    sector: Mapped[str] = mapped_column(String(100), default="")
    market_cap: Mapped[Decimal | None] = mapped_column(default=None)
    data_source: Mapped[str] = mapped_column(String(32), default="simulated")
    currency: Mapped[str] = mapped_column(String(3), default="USD", server_default="USD")  # ISO 4217
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Portfolio(Base):
    __tablename__ = "portfolios"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(_user_fk(), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    benchmark_symbol: Mapped[str] = mapped_column(String(32), default="SPY")
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    lot_method: Mapped[str] = mapped_column(String(16), default="fifo")
    base_currency: Mapped[str] = mapped_column(String(3), default="USD", server_default="USD")
    # "track": cash may go negative; "strict": a write that would make it negative is a 400
    cash_policy: Mapped[str] = mapped_column(String(8), default="track", server_default="track")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Transaction(Base):
    """One ledger entry, as entered. ``total_amount`` = quantity x price (+ fees on buys, - on sells).

    ``lot_id`` (sells only, optional) is the id of the buy whose tax lot the sell relieves.
    """

    __tablename__ = "transactions"
    __table_args__ = (
        Index("ix_transactions_portfolio_date", "portfolio_id", "transaction_date"),
        Index("uq_transactions_portfolio_source", "portfolio_id", "source_id", unique=True),
        # partial (migration 0012): most rows name no lot and no target, and an index of
        # their NULLs costs every insert; a lookup ``= x`` implies NOT NULL and uses these
        Index(
            "ix_transactions_lot_id", "lot_id",
            sqlite_where=text("lot_id IS NOT NULL"), postgresql_where=text("lot_id IS NOT NULL"),
        ),
        Index(
            "ix_transactions_target_asset_id", "target_asset_id",
            sqlite_where=text("target_asset_id IS NOT NULL"),
            postgresql_where=text("target_asset_id IS NOT NULL"),
        ),
    )  # fmt: skip
    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    # NULL on a cash row (deposit, withdrawal, interest, fee: migration 0009)
    asset_id: Mapped[int | None] = mapped_column(
        ForeignKey("assets.id", ondelete="RESTRICT"), index=True
    )
    transaction_type: Mapped[str] = mapped_column(String(32))
    quantity: Mapped[Decimal] = mapped_column()
    price: Mapped[Decimal] = mapped_column()
    fees: Mapped[Decimal] = mapped_column()
    transaction_date: Mapped[dt.date] = mapped_column(Date)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # a sell's named lot: the buy it relieves (migration 0003). NO ACTION, not RESTRICT:
    # a portfolio delete cascades to the sell and its buy in one statement.
    lot_id: Mapped[int | None] = mapped_column(
        ForeignKey("transactions.id", ondelete="NO ACTION", name="fk_transactions_lot_id"),
        default=None,
    )
    # where an imported row came from (OFX FITID, hash of a CSV row); NULL when typed.
    # Compared bytewise ("C", migration 0012: SQLite's default): an opaque key, and its
    # unique index is checked on every imported row
    source_id: Mapped[str | None] = mapped_column(
        String(128).with_variant(String(128, collation="C"), "postgresql"), default=None
    )
    # corporate actions (migration 0007): a split's multiplier or new shares per old share,
    # the asset a spin-off or merger delivers (no FK: see the migration), the basis fraction
    # a spin-off moves, cash in lieu (a total) or a merger's cash per old share
    ratio: Mapped[Decimal | None] = mapped_column(default=None)
    target_asset_id: Mapped[int | None] = mapped_column(Integer, default=None)
    basis_allocation: Mapped[Decimal | None] = mapped_column(default=None)
    cash: Mapped[Decimal | None] = mapped_column(default=None)
    # a cash row's currency (migration 0009); NULL on a security row: its asset's currency
    currency: Mapped[str | None] = mapped_column(String(3), default=None)


class Position(Base):
    """A cache of the ledger: the open lots' quantity and cost basis under the portfolio's
    lot method, wash-sale adjustments included (re-derived by ``service.ledger.positions``
    in every ledger write)."""

    __tablename__ = "positions"
    __table_args__ = (UniqueConstraint("portfolio_id", "asset_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    asset_id: Mapped[int] = mapped_column(ForeignKey("assets.id", ondelete="RESTRICT"))
    quantity: Mapped[Decimal] = mapped_column()
    cost_basis: Mapped[Decimal] = mapped_column()
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Strategy(Base):
    """Owned by the backtesting feature."""

    __tablename__ = "strategies"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(_user_fk(), index=True)
    name: Mapped[str] = mapped_column(String(200))
    strategy_type: Mapped[str] = mapped_column(String(64))
    description: Mapped[str] = mapped_column(Text, default="")
    parameters: Mapped[dict[str, Any]] = mapped_column(default=dict)
    initial_capital: Mapped[Decimal] = mapped_column()
    max_position_size: Mapped[Decimal] = mapped_column()
    asset_symbols: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Backtest(Base):
    """Owned by the backtesting feature. ``result``: metrics, equity curve, trades."""

    __tablename__ = "backtests"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(_user_fk(), index=True)
    strategy_id: Mapped[int] = mapped_column(
        ForeignKey("strategies.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    start_date: Mapped[dt.date] = mapped_column(Date)
    end_date: Mapped[dt.date] = mapped_column(Date)
    benchmark_symbol: Mapped[str] = mapped_column(String(32), default="SPY")
    transaction_costs: Mapped[Decimal] = mapped_column()
    slippage: Mapped[Decimal] = mapped_column()
    status: Mapped[str] = mapped_column(String(16), default="pending")
    error: Mapped[str] = mapped_column(Text, default="")
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    execution_time: Mapped[float | None] = mapped_column(Float, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class UserTaxSettings(Base):
    """Owned by the tax feature: per-user rates, as fractions."""

    __tablename__ = "user_tax_settings"
    user_id: Mapped[int] = mapped_column(_user_fk(), primary_key=True)
    short_term_rate: Mapped[Decimal] = mapped_column()
    long_term_rate: Mapped[Decimal] = mapped_column()
    qualified_dividend_rate: Mapped[Decimal] = mapped_column()
    ordinary_dividend_rate: Mapped[Decimal] = mapped_column()
    niit: Mapped[bool] = mapped_column(Boolean, default=False)  # migration 0002
    loss_limit: Mapped[Decimal] = mapped_column(default=Decimal(3000))  # migration 0002
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class TaxRecord(Base):
    """Owned by the tax feature: a stored calculation for (user, portfolio, year)."""

    __tablename__ = "tax_records"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(_user_fk(), index=True)
    portfolio_id: Mapped[int | None] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE"), default=None
    )
    tax_year: Mapped[int] = mapped_column(Integer)
    summary: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class TaxReport(Base):
    """Owned by the tax feature: a generated report and its content."""

    __tablename__ = "tax_reports"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(_user_fk(), index=True)
    tax_year: Mapped[int] = mapped_column(Integer)
    report_type: Mapped[str] = mapped_column(String(32))
    content: Mapped[dict[str, Any]] = mapped_column(default=dict)
    size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
