"""The one skip/fail guard of tests/conftest.py: skip on a laptop, fail under CI=true."""

from __future__ import annotations

import json

import pytest

import tests.conftest as guard


def test_present_oracle_is_returned() -> None:
    assert guard.require_oracle("json") is json


@pytest.mark.parametrize(("in_ci", "outcome"), [(False, pytest.skip.Exception), (True, pytest.fail.Exception)])
def test_missing_oracle_skips_locally_and_fails_in_ci(
    monkeypatch: pytest.MonkeyPatch, in_ci: bool, outcome: type[BaseException]
) -> None:
    monkeypatch.setattr(guard, "IN_CI", in_ci)
    with pytest.raises(outcome, match="no_such_oracle_module cannot be imported"):
        guard.require_oracle("no_such_oracle_module")


@pytest.mark.parametrize(("in_ci", "outcome"), [(False, pytest.skip.Exception), (True, pytest.fail.Exception)])
def test_missing_service_skips_locally_and_fails_in_ci(
    monkeypatch: pytest.MonkeyPatch, in_ci: bool, outcome: type[BaseException]
) -> None:
    monkeypatch.setattr(guard, "IN_CI", in_ci)
    monkeypatch.setattr(guard, "_port_open", lambda host, port: False)
    with pytest.raises(outcome, match=r"Redis is not answering on 127\.0\.0\.1:1"):
        guard.require_service("Redis", "127.0.0.1", 1)
