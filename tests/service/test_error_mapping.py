"""msgspec / Litestar validation messages map to the documented ``details.field`` and ``details.code``."""

from __future__ import annotations

import pytest

from service.errors import validation_from_message
from tests.service.conftest import Api


@pytest.mark.parametrize(
    ("message", "key", "field", "code"),
    [
        ("Missing required query parameter 'year' for path /x", None, "year", "required"),
        ("Missing required header parameter 'x-api-key' for path /x", None, "x-api-key", "required"),
        ("Object missing required field `name`", "data", "name", "required"),
        ("Expected `int` >= 1", "limit", "limit", "min_value"),
        ("Expected `int` <= 100", "limit", "limit", "max_value"),
        ("Expected `int`, got `str`", "year", "year", "invalid"),
    ],
)
def test_validation_message_mapping(message: str, key: str | None, field: str, code: str) -> None:
    err = validation_from_message(message, key)
    assert err.details["field"] == field
    assert err.details["code"] == code


def test_pattern_failures_are_said_in_words_not_as_a_regex(api: Api) -> None:
    """A declared pattern (service.patterns) is named by its meaning in the 400's message."""
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "p"}, headers=h).json()["id"]
    buy = {"portfolio": pid, "asset_symbol": "KO", "transaction_type": "buy",
           "quantity": "ten", "price": "1", "transaction_date": "2026-01-05"}  # fmt: skip
    r = api.client.post("/api/transactions/", json=buy, headers=h)
    assert r.status_code == 400, r.text
    body = r.json()
    assert (body["details"]["field"], body["details"]["code"]) == ("quantity", "invalid")
    assert body["message"] == 'quantity must be a decimal number written as a string, such as "10" or "12.5".'
    r = api.client.post("/api/portfolios/", json={"name": " \t "}, headers=h)
    assert r.status_code == 400, r.text
    assert "regex" not in r.json()["message"] and r.json()["details"]["field"] == "name"
