"""Corporate actions over HTTP (``split``, ``stock_dividend``, ``return_of_capital``,
``spin_off``, ``merger``) on SQLite and PostgreSQL: positions, validation, edits, Form 8949.

Rules: IRS Publication 550 (stock splits and stock dividends keep basis and holding
period; a return of capital lowers basis, beyond zero it is a capital gain; cash for a
fractional share is a sale of it) and the issuer's Form 8937 (a spin-off's ratio and
basis allocation). The numbers are checked against ``quantcore.tax`` in
``tests/unit/test_tax_corporate_actions.py``.
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select

from service.db.models import Transaction
from tests.service.conftest import Api


def _post(api: Api, h: dict[str, str], body: dict):
    return api.client.post("/api/transactions/", json=body, headers=h)


def _ok(r) -> dict:
    assert r.status_code == 201, r.text
    return r.json()


def _portfolio(api: Api, h: dict[str, str]) -> int:
    return int(api.client.post("/api/portfolios/", json={"name": "ca"}, headers=h).json()["id"])


def _buy(pid: int, sym: str, qty: str, price: str, date: str) -> dict:
    return {"portfolio": pid, "asset_symbol": sym, "transaction_type": "buy", "quantity": qty,
            "price": price, "transaction_date": date}  # fmt: skip


def _sell(pid: int, sym: str, qty: str, price: str, date: str) -> dict:
    return {**_buy(pid, sym, qty, price, date), "transaction_type": "sell"}


def _action(pid: int, sym: str, kind: str, date: str, **fields: str) -> dict:
    return {"portfolio": pid, "asset_symbol": sym, "transaction_type": kind, "transaction_date": date,
            **fields}  # fmt: skip


def _basis(api: Api, h: dict[str, str], pid: int) -> dict[str, tuple[Decimal, Decimal]]:
    """Quantity and cost basis by symbol, from the positions table itself."""
    return api.call(_position_rows, api.db, pid)


async def _position_rows(db, pid: int) -> dict[str, tuple[Decimal, Decimal]]:
    from service.db.models import Asset, Position

    async with db.read() as s:
        q = select(Asset.symbol, Position.quantity, Position.cost_basis).join(
            Asset, Asset.id == Position.asset_id
        ).where(Position.portfolio_id == pid)
        return {sym: (qty, basis) for sym, qty, basis in (await s.execute(q)).tuples()}


async def _count(db, pid: int) -> int:
    async with db.read() as s:
        q = select(func.count()).where(Transaction.portfolio_id == pid)
        return int((await s.execute(q)).scalar_one())


def _refused(api: Api, r, pid: int, before: int, field: str, code: str) -> None:
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"] == "validation_error"
    assert (body["details"]["field"], body["details"]["code"]) == (field, code), body
    assert api.call(_count, api.db, pid) == before


def _form_8949(api: Api, h: dict[str, str], year: int, pid: int) -> dict:
    r = api.client.post(
        "/api/tax/reports/generate/",
        json={"year": year, "report_type": "all", "portfolio_id": pid}, headers=h,
    )  # fmt: skip
    assert r.status_code == 201, r.text
    got = api.client.get(f"/api/tax/reports/{r.json()['id']}/download/?format=json", headers=h)
    return got.json()["form_8949"]


def test_split_then_sale_is_one_long_term_row(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    _ok(_post(api, h, _buy(pid, "AAPL", "100", "40", "2020-01-02")))
    split = _ok(_post(api, h, _action(pid, "AAPL", "split", "2021-06-01", split_ratio="4")))
    assert (split["split_ratio"], split["total_amount"], split["quantity"]) == ("4", "0.00", "0.00000000")
    assert "target_symbol" not in split
    assert _basis(api, h, pid) == {"AAPL": (Decimal(400), Decimal(4000))}
    # 400 post-split shares may be sold; the quantity check counts the split
    _refused(api, _post(api, h, _sell(pid, "AAPL", "401", "15", "2022-03-01")), pid, 2,
             "quantity", "insufficient_quantity")  # fmt: skip
    _ok(_post(api, h, _sell(pid, "AAPL", "400", "15", "2022-03-01")))
    assert _basis(api, h, pid) == {}
    form = _form_8949(api, h, 2022, pid)
    assert form["part_i"]["rows"] == []
    (row,) = form["part_ii"]["rows"]
    assert (row["description"], row["date_acquired"], row["proceeds"], row["cost_basis"], row["gain_or_loss"]) == (
        "400 sh. AAPL", "2020-01-02", "6000.00", "4000.00", "2000.00")


def test_reverse_split_with_cash_in_lieu(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    _ok(_post(api, h, _buy(pid, "MSFT", "105", "10", "2020-01-02")))
    _ok(_post(api, h, _action(pid, "MSFT", "split", "2021-01-04", split_ratio="0.1", cash_in_lieu="7.50")))
    assert _basis(api, h, pid) == {"MSFT": (Decimal(10), Decimal(1000))}
    (row,) = _form_8949(api, h, 2021, pid)["part_ii"]["rows"]
    assert (row["description"], row["proceeds"], row["cost_basis"], row["gain_or_loss"]) == (
        "0.5 sh. MSFT", "7.50", "50.00", "-42.50")


def test_spin_off_and_merger_move_basis_to_the_target(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    _ok(_post(api, h, _buy(pid, "GE", "100", "50", "2020-01-02")))
    spin = _ok(_post(api, h, _action(pid, "GE", "spin_off", "2024-03-01", target_symbol="HON", ratio="0.5",
                                     basis_allocation="0.2")))  # fmt: skip
    assert (spin["target_symbol"], spin["ratio"], spin["basis_allocation"]) == ("HON", "0.5", "0.2")
    assert _basis(api, h, pid) == {"GE": (Decimal(100), Decimal(4000)), "HON": (Decimal(50), Decimal(1000))}
    merger = _ok(_post(api, h, _action(pid, "HON", "merger", "2024-06-03", target_symbol="CAT", ratio="2",
                                       cash_per_share="10", price="20")))  # fmt: skip
    assert (merger["cash_per_share"], merger["price"]) == ("10.00", "20.00")
    # cash 10 of 2 x 20 + 10 = 50 per share: 1/5 of the lot sold (proceeds 500, basis 200)
    assert _basis(api, h, pid) == {"GE": (Decimal(100), Decimal(4000)), "CAT": (Decimal(100), Decimal(800))}
    (row,) = _form_8949(api, h, 2024, pid)["part_ii"]["rows"]
    assert (row["description"], row["date_acquired"], row["proceeds"], row["cost_basis"]) == (
        "10 sh. HON", "2020-01-02", "500.00", "200.00")
    # deleting the spin-off is refused: the merger would leave nothing to merge
    _refused(api, api.client.delete(f"/api/transactions/{spin['id']}/", headers=h), pid, 3,
             "quantity", "insufficient_quantity")  # fmt: skip
    # deleting the merger, then the spin-off, restores the old position
    assert api.client.delete(f"/api/transactions/{merger['id']}/", headers=h).status_code == 204
    assert api.client.delete(f"/api/transactions/{spin['id']}/", headers=h).status_code == 204
    assert _basis(api, h, pid) == {"GE": (Decimal(100), Decimal(5000))}


def test_return_of_capital_and_stock_dividend(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    _ok(_post(api, h, _buy(pid, "KO", "10", "10", "2020-01-02")))
    _ok(_post(api, h, _action(pid, "KO", "stock_dividend", "2021-01-04", split_ratio="1.1")))
    _ok(_post(api, h, _action(pid, "KO", "return_of_capital", "2022-01-04", price="10")))
    # 11 shares x $10 = $110 against a $100 basis: basis 0 and a $10 long-term gain
    assert _basis(api, h, pid) == {"KO": (Decimal(11), Decimal(0))}
    (row,) = _form_8949(api, h, 2022, pid)["part_ii"]["rows"]
    assert (row["description"], row["gain_or_loss"]) == ("KO nondividend distribution in excess of basis", "10.00")


def test_edit_a_split_re_derives_positions(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    _ok(_post(api, h, _buy(pid, "JPM", "10", "30", "2020-01-02")))
    split = _ok(_post(api, h, _action(pid, "JPM", "split", "2021-01-04", split_ratio="2")))
    r = api.client.put(f"/api/transactions/{split['id']}/",
                       json=_action(pid, "JPM", "split", "2021-01-04", split_ratio="3"), headers=h)  # fmt: skip
    assert r.status_code == 200, r.text
    assert _basis(api, h, pid) == {"JPM": (Decimal(30), Decimal(300))}
    _ok(_post(api, h, _sell(pid, "JPM", "30", "20", "2021-02-01")))
    # back to 2-for-1 would leave the sale of 30 short
    r = api.client.put(f"/api/transactions/{split['id']}/",
                       json=_action(pid, "JPM", "split", "2021-01-04", split_ratio="2"), headers=h)  # fmt: skip
    assert r.status_code == 400 and r.json()["details"]["field"] == "quantity", r.text
    assert _basis(api, h, pid) == {}


def test_bad_corporate_actions_are_400s_naming_the_field(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    _ok(_post(api, h, _buy(pid, "XOM", "10", "30", "2020-01-02")))
    cases = [
        (_action(pid, "XOM", "split", "2021-01-04"), "split_ratio", "required"),
        (_action(pid, "XOM", "split", "2021-01-04", split_ratio="0"), "split_ratio", "min_value"),
        (_action(pid, "XOM", "split", "2021-01-04", split_ratio="x"), "split_ratio", "invalid"),
        (_action(pid, "XOM", "split", "2021-01-04", split_ratio="2", quantity="10"), "quantity", "invalid"),
        (_action(pid, "XOM", "split", "2021-01-04", split_ratio="2", cash_in_lieu="5"), "cash_in_lieu", "invalid"),
        (_action(pid, "XOM", "split", "2021-01-04", ratio="2"), "ratio", "invalid"),
        (_action(pid, "XOM", "split", "2019-01-04", split_ratio="2"), "asset_symbol", "not_held"),
        (_action(pid, "CVX", "split", "2021-01-04", split_ratio="2"), "asset_symbol", "not_held"),
        (_action(pid, "XOM", "return_of_capital", "2021-01-04"), "price", "required"),
        (_action(pid, "XOM", "spin_off", "2021-01-04", ratio="1", basis_allocation="0.1"),
         "target_symbol", "required"),
        (_action(pid, "XOM", "spin_off", "2021-01-04", ratio="1", basis_allocation="0.1", target_symbol="NOPE1"),
         "target_symbol", "not_found"),
        (_action(pid, "XOM", "spin_off", "2021-01-04", ratio="1", basis_allocation="1.5", target_symbol="CVX"),
         "basis_allocation", "max_value"),
        (_action(pid, "XOM", "spin_off", "2021-01-04", basis_allocation="0.5", target_symbol="CVX"),
         "ratio", "required"),
        (_action(pid, "XOM", "merger", "2021-01-04", target_symbol="CVX"), "ratio", "required"),
        (_action(pid, "XOM", "merger", "2021-01-04", target_symbol="CVX", ratio="1", cash_per_share="2"),
         "price", "required"),
        (_action(pid, "XOM", "merger", "2021-01-04", target_symbol="XOM", ratio="1"), "target_symbol", "invalid"),
        ({**_buy(pid, "XOM", "1", "1", "2021-01-04"), "split_ratio": "2"}, "split_ratio", "invalid"),
        (_action(pid, "XOM", "buy", "2021-01-04", price="1"), "quantity", "required"),
    ]
    for body, field, code in cases:
        _refused(api, _post(api, h, body), pid, 1, field, code)


def test_openapi_documents_the_corporate_action_fields(api: Api) -> None:
    spec = api.client.get("/schema/openapi.json").json()
    schemas = spec["components"]["schemas"]
    create = next(v for k, v in schemas.items() if k.endswith("TransactionCreate"))
    assert {"split_ratio", "cash_in_lieu", "ratio", "target_symbol", "basis_allocation", "cash_per_share"} <= set(
        create["properties"]
    )
    kinds = create["properties"]["transaction_type"]
    assert "spin_off" in str(kinds) and "return_of_capital" in str(kinds)


def test_entry_order_never_changes_the_positions(api: Api) -> None:
    _, h = api.user()
    rows = {
        "b1": _buy(0, "PG", "10", "10", "2024-01-02"),
        "b2": _buy(0, "PG", "5", "16", "2024-02-01"),
        "split": _action(0, "PG", "split", "2024-03-01", split_ratio="2"),
        "sell": _sell(0, "PG", "8", "9", "2024-04-01"),
        "spin": _action(0, "PG", "spin_off", "2024-05-01", target_symbol="MCD", ratio="0.25",
                        basis_allocation="0.1"),
    }  # fmt: skip
    got = []
    for order in (["b1", "b2", "split", "sell", "spin"], ["b1", "split", "spin", "b2", "sell"]):
        pid = _portfolio(api, h)
        for name in order:
            _ok(_post(api, h, {**rows[name], "portfolio": pid}))
        got.append(_basis(api, h, pid))
    # 30 shares after the split (basis 180), FIFO sells 8 of the first lot (20 @ 5): 22 left,
    # basis 140; the spin-off moves 10 % to MCD (22 x 0.25 = 5.5 shares)
    assert got[0] == got[1] == {"PG": (Decimal(22), Decimal(126)), "MCD": (Decimal("5.5"), Decimal(14))}
