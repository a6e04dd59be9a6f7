"""What an import writes is what the file says, on every database and insert path.

PostgreSQL takes the rows as CSV text of one ``COPY`` and SQLite as parameters, so the
stored rows are read back here, column by column, and compared with the file: source
ids holding the characters CSV and ``COPY`` treat specially (quotes, commas, line
breaks, a backslash, ``\\.``, non-ASCII, one id too long to keep), amounts at the
ledger's smallest and largest, cash rows without an asset. The same file again adds
nothing: the stored ids are the ones the import computes.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from service.db.models import Portfolio, Position, Transaction
from service.errors import ValidationError
from service.imports import write
from service.imports.services import ImportOptions, import_statement
from service.imports.write import source_id
from tests.service.conftest import Api

D = Decimal
IDS = ['q"uote', "a,b", "two\nlines", "back\\slash", "\\.", "é€ü", "x" * 140, "plain"]


def _csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["date", "type", "symbol", "quantity", "price", "fees", "amount", "id", "lot_id"])
    writer.writerows(rows)
    return out.getvalue().encode()


async def _stored(api: Api, pid: int) -> list[tuple[Any, ...]]:
    async with api.db.read() as s:
        result = await s.execute(
            select(
                Transaction.source_id, Transaction.transaction_type, Transaction.transaction_date,
                Transaction.quantity, Transaction.price, Transaction.fees, Transaction.currency,
                Transaction.asset_id.is_(None), Transaction.lot_id.is_not(None),
            ).where(Transaction.portfolio_id == pid).order_by(Transaction.id)
        )  # fmt: skip
        return [tuple(r) for r in result.all()]


def _portfolio(api: Api, headers: dict[str, str]) -> int:
    r = api.client.post("/api/portfolios/", json={"name": "written"}, headers=headers)
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


def _import(api: Api, pid: int, headers: dict[str, str], data: bytes) -> Any:
    r = api.client.post(
        f"/api/portfolios/{pid}/import/",
        files={"file": ("statement.csv", data)},
        data={"create_assets": "true"},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    return r.json()


def _check(api: Api, rows: list[list[str]], expected: list[tuple[Any, ...]]) -> None:
    """Import ``rows`` into a fresh portfolio: the stored rows are ``expected`` (each with
    its file id, turned into the stored source id here); the same file again adds none."""
    _, headers = api.user("written")
    pid = _portfolio(api, headers)
    data = _csv(rows)
    assert _import(api, pid, headers, data)["added"] == len(expected)
    want = [(source_id(f"csv:generic:{e[0]}"), *e[1:]) for e in expected]
    assert api.call(_stored, api, pid) == want
    again = _import(api, pid, headers, data)
    assert (again["added"], again["skipped_duplicates"]) == (0, len(expected))
    assert api.call(_stored, api, pid) == want


@pytest.mark.parametrize("chunks", [None, (2, 3)])
def test_plain_rows_are_stored_as_the_file_says(
    api: Api, monkeypatch: pytest.MonkeyPatch, chunks: tuple[int, int] | None
) -> None:
    """The columnar plan's rows (buys, sells, dividends, cash rows); ``COPY`` data in one
    chunk, or in chunks of 2, 3, 3 rows (each formatted from a slice of the columns)."""
    if chunks is not None:
        monkeypatch.setattr(write, "_FIRST_CHUNK", chunks[0])
        monkeypatch.setattr(write, "_COPY_CHUNK", chunks[1])
    day = dt.date(2024, 3, 1)
    big = "9999999999.99999999"  # the largest amount a row's int64 units hold, about
    tiny = "0.00000001"
    rows = [
        ["2024-03-01", "deposit", "", "", "", "0", "1000000000.12345678", IDS[0], ""],
        ["2024-03-01", "buy", "zzwa", tiny, big, "0", "", IDS[1], ""],
        ["2024-03-01", "buy", "ZZWB", "12.5", "100", "1.25", "", IDS[2], ""],
        ["2024-03-01", "sell", "ZZWB", "2.5", "101.5", "0.5", "", IDS[3], ""],
        ["2024-03-04", "dividend", "ZZWB", "", "", "0", "3.21", IDS[4], ""],
        ["2024-03-01", "withdrawal", "", "", "", "1", "10", IDS[5], ""],
        ["2024-03-01", "interest", "", "", "", "0", "0.07", IDS[6], ""],
        ["2024-03-01", "fee", "", "", "", "0", "2", IDS[7], ""],
    ]
    one = D("1.00000000")
    _check(api, rows, [
        (IDS[0], "deposit", day, one, D("1000000000.12345678"), D(0), "USD", True, False),
        (IDS[1], "buy", day, D(tiny), D(big), D(0), None, False, False),
        (IDS[2], "buy", day, D("12.5"), D(100), D("1.25"), None, False, False),
        (IDS[3], "sell", day, D("2.5"), D("101.5"), D("0.5"), None, False, False),
        (IDS[4], "dividend", dt.date(2024, 3, 4), one, D("3.21"), D(0), None, False, False),
        (IDS[5], "withdrawal", day, one, D(9), D(1), "USD", True, False),
        (IDS[6], "interest", day, one, D("0.07"), D(0), "USD", True, False),
        (IDS[7], "fee", day, one, D(2), D(0), "USD", True, False),
    ])  # fmt: skip


def test_ids_needing_no_quotes_are_sent_as_they_are(api: Api) -> None:
    """Source ids none of which holds a delimiter, quote or line break go to ``COPY``
    unquoted: a backslash, ``\\.``, a space inside and non-ASCII stay as they are."""
    day = dt.date(2024, 3, 1)
    ids = ["back\\slash", "\\.", "sp ace", "é€ü", "y" * 140]
    rows = [["2024-03-01", "deposit", "", "", "", "0", str(k + 1), i, ""] for k, i in enumerate(ids)]
    _check(api, rows, [
        (i, "deposit", day, D(1), D(k + 1), D(0), "USD", True, False) for k, i in enumerate(ids)
    ])  # fmt: skip


def test_rows_planned_one_by_one_are_stored_as_the_file_says(api: Api) -> None:
    """A sale naming its lot takes the row-by-row plan and its insert of entries; the lot is
    linked after the insert."""
    day = dt.date(2024, 3, 4)
    rows = [
        ["2024-03-04", "deposit", "", "", "", "0", "5000", IDS[0], ""],
        ["2024-03-04", "buy", "ZZWC", "3", "10.12345678", "0.01", "", IDS[1], ""],
        ["2024-03-04", "sell", "ZZWC", "1", "11", "0", "", IDS[2], IDS[1]],
    ]
    _check(api, rows, [
        (IDS[0], "deposit", day, D(1), D(5000), D(0), "USD", True, False),
        (IDS[1], "buy", day, D(3), D("10.12345678"), D("0.01"), None, False, False),
        (IDS[2], "sell", day, D(1), D(11), D(0), None, False, True),
    ])  # fmt: skip


async def _positions(api: Api, pid: int) -> list[tuple[Any, ...]]:
    async with api.db.read() as s:
        result = await s.execute(
            select(Position.asset_id, Position.quantity, Position.cost_basis)
            .where(Position.portfolio_id == pid).order_by(Position.asset_id)
        )  # fmt: skip
        return [tuple(r) for r in result.all()]


async def _import_in_one_write(api: Api, pid: int, data: bytes) -> None:
    """The import in a write session of its own, as a request runs it (an error rolls back)."""
    async with api.db.write() as s:
        user_id = (await s.execute(select(Portfolio.user_id).where(Portfolio.id == pid))).scalar_one()
        await import_statement(s, user_id, pid, data, ImportOptions(format="csv", create_assets=True))


@pytest.mark.parametrize("failing", ["insert", "match"])
def test_a_failed_write_leaves_nothing(api: Api, monkeypatch: pytest.MonkeyPatch, failing: str) -> None:
    """The insert and the lot match run side by side: when either fails, the other is over
    before the error is raised, and the rollback leaves no row and no position; the same
    statement imports afterwards."""
    _, headers = api.user("written")
    pid = _portfolio(api, headers)
    first = [
        ["2024-03-01", "deposit", "", "", "", "0", "5000", "a", ""],
        ["2024-03-01", "buy", "ZZWD", "4", "10", "0", "", "b", ""],
    ]
    _import(api, pid, headers, _csv(first))
    stored, held = api.call(_stored, api, pid), api.call(_positions, api, pid)
    more = _csv([
        ["2024-03-04", "buy", "ZZWD", "2", "11", "0", "", "c", ""],
        ["2024-03-05", "sell", "ZZWD", "5", "12", "0", "", "d", ""],
        ["2024-03-05", "buy", "ZZWE", "1", "7", "0", "", "e", ""],
    ])  # fmt: skip
    reserved = write._reserved_ids

    async def taken_id(conn: Any, n: int) -> Any:
        ids = await reserved(conn, n)
        ids[-1] = ids[0] - 1  # the id of a row written before: the insert fails on its key
        return ids

    def refused(after: Any, asset_ids: Any) -> Any:
        raise ValidationError("lot_method", "invalid", "refused by the test")

    if failing == "insert":
        monkeypatch.setattr(write, "_reserved_ids", taken_id)
        error: Any = (IntegrityError, asyncpg.UniqueViolationError)
    else:
        monkeypatch.setattr(write, "match_written", refused)
        error = ValidationError
    with pytest.raises(error):
        api.call(_import_in_one_write, api, pid, more)
    assert api.call(_stored, api, pid) == stored
    assert api.call(_positions, api, pid) == held
    monkeypatch.undo()
    assert _import(api, pid, headers, more)["added"] == 3
    assert len(api.call(_stored, api, pid)) == 5
    assert api.call(_positions, api, pid) != held
