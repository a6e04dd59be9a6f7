"""A deleted row's id is never handed to a new row (SQLite ``AUTOINCREMENT``, migration 0010)."""

from __future__ import annotations

from sqlalchemy import text

from service.db import Database
from tests.service.conftest import Api

TABLES = ("users", "auth_tokens", "api_keys", "user_sessions", "assets", "portfolios",
          "transactions", "positions", "strategies", "backtests", "tax_records", "tax_reports")  # fmt: skip


def _create(api: Api, h: dict[str, str]) -> int:
    r = api.client.post("/api/portfolios/", json={"name": "p"}, headers=h)
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


def test_a_deleted_portfolios_id_goes_to_no_one_else(api: Api) -> None:
    _, first = api.user()
    _, second = api.user()
    old = _create(api, first)
    txn = api.client.post(
        "/api/transactions/",
        json={"portfolio": old, "asset_symbol": "AAPL", "transaction_type": "buy",
              "quantity": "1", "price": "10", "transaction_date": "2025-01-02"},
        headers=first,
    ).json()["id"]  # fmt: skip
    assert api.client.delete(f"/api/portfolios/{old}/", headers=first).status_code == 204
    new = _create(api, second)
    assert new > old
    again = api.client.post(
        "/api/transactions/",
        json={"portfolio": new, "asset_symbol": "AAPL", "transaction_type": "buy",
              "quantity": "1", "price": "10", "transaction_date": "2025-01-02"},
        headers=second,
    ).json()["id"]  # fmt: skip
    assert again > txn
    assert api.client.get(f"/api/portfolios/{old}/", headers=second).status_code == 404


async def _schema(db: Database) -> dict[str, str]:
    async with db.engine.connect() as conn:
        rows = await conn.execute(text("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        return {name: sql for name, sql in rows.tuples()}


async def _indexes(db: Database) -> set[str]:
    async with db.engine.connect() as conn:
        rows = await conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'index'"))
        return {name for (name,) in rows.tuples()}


def test_every_id_table_is_autoincrement_on_sqlite(api: Api) -> None:
    if api.db.engine.dialect.name != "sqlite":
        return  # PostgreSQL sequences never hand out a value twice
    schema = api.call(_schema, api.db)
    assert {t for t in TABLES if "AUTOINCREMENT" not in schema[t].upper()} == set()
    assert "uq_users_username_key" in api.call(_indexes, api.db)


async def _counts(db: Database) -> dict[str, int]:
    async with db.engine.connect() as conn:
        return {
            t: int((await conn.execute(text(f"SELECT count(*) FROM {t}"))).scalar_one())
            for t in TABLES
        }


async def _cycle_with_rows(url: str) -> tuple[dict[str, int], dict[str, int], int, int]:
    """Rows in every table survive 0010's rebuilds (down and up); foreign keys stay on."""
    import datetime as dt
    from decimal import Decimal

    from alembic import command

    from service.db import migrate
    from service.db.models import Asset, Portfolio, Transaction, User
    from service.db.session import alembic_config

    db = Database(url)
    try:
        await migrate(db)
        async with db.write() as s:
            user = User(username="keep", password_hash="x")
            asset = Asset(symbol="KEEP", name="Keep", asset_type="stock")
            s.add_all([user, asset])
            await s.flush()
            p = Portfolio(user_id=user.id, name="kept")
            s.add(p)
            await s.flush()
            s.add(Transaction(portfolio_id=p.id, asset_id=asset.id, transaction_type="buy",
                              quantity=Decimal(1), price=Decimal(2), fees=Decimal(0),
                              transaction_date=dt.date(2025, 1, 2)))  # fmt: skip
        before = await _counts(db)

        def _down_up(connection) -> None:  # type: ignore[no-untyped-def]
            cfg = alembic_config(url)
            cfg.attributes["connection"] = connection
            command.downgrade(cfg, "0009")
            command.upgrade(cfg, "head")

        async with db.engine.begin() as conn:
            await conn.run_sync(_down_up)
        after = await _counts(db)
        async with db.engine.connect() as conn:
            fk = int((await conn.execute(text("PRAGMA foreign_keys"))).scalar_one())
            seq = int(
                (
                    await conn.execute(
                        text("SELECT seq FROM sqlite_sequence WHERE name = 'portfolios'")
                    )
                ).scalar_one()
            )
        return before, after, fk, seq
    finally:
        await db.dispose()


def test_the_rebuild_keeps_every_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    before, after, fk, seq = asyncio.run(
        _cycle_with_rows(f"sqlite+aiosqlite:///{tmp_path / 'keep.db'}")
    )
    assert before == after and before["transactions"] == 1 and before["portfolios"] == 1
    assert fk == 1 and seq == 1
