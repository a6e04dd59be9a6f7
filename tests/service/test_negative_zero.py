"""A signed zero (``"-0"``, ``"-0.000"``) is stored and shown as zero: never ``"-0.00"``."""

from __future__ import annotations

from decimal import Decimal

import pytest

from service import formatting as fmt
from service.db.types import quantize
from tests.service.conftest import Api


def _post(api: Api, h: dict[str, str], body: dict) -> dict:
    r = api.client.post("/api/transactions/", json=body, headers=h)
    assert r.status_code == 201, r.text
    return r.json()


def test_negative_zero_is_stored_and_shown_as_zero(api: Api) -> None:
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "z"}, headers=h).json()["id"]
    buy = _post(api, h, {
        "portfolio": pid, "asset_symbol": "GE", "transaction_type": "buy", "quantity": "100",
        "price": "50", "fees": "-0.00", "transaction_date": "2024-01-02",
    })  # fmt: skip
    assert buy["fees"] == "0.00"
    spin = _post(api, h, {
        "portfolio": pid, "asset_symbol": "GE", "transaction_type": "spin_off", "ratio": "0.5",
        "target_symbol": "HON", "basis_allocation": "-0", "transaction_date": "2024-03-01",
    })  # fmt: skip
    assert spin["basis_allocation"] == "0"
    listed = api.client.get(f"/api/transactions/?portfolio_id={pid}", headers=h).json()["results"]
    assert not [v for r in listed for v in r.values() if str(v).startswith("-0")]
    assert {r["fees"] for r in listed} == {"0.00"}


@pytest.mark.parametrize("text", ["-0", "-0.00", "-0E-8", "-0.000000001", "-0.000000004"])
def test_signed_zeros_format_unsigned(text: str) -> None:
    x = Decimal(text)
    stored = quantize(x)
    assert stored.is_zero() and not stored.is_signed()
    assert fmt.money(x) == "0.00" and fmt.price(x) == "0.0000"
    assert fmt.plain(stored) == "0" and fmt.dec(stored) == "0.00"
    assert fmt.quantity(stored) == "0.00000000"
