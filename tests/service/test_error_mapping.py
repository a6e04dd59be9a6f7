"""msgspec / Litestar validation messages map to the documented ``details.field`` and ``details.code``."""

from __future__ import annotations

import pytest

from service.errors import validation_from_message


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
