"""Any window on metrics and performance: named periods up to ``max``, or ``start_date``/``end_date``.

Figures are checked against ``quantcore`` on the plain-Python twin of
``tests/service/test_analytics.py``.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

import quantcore as qc
from tests.service.conftest import Api
from tests.service.test_analytics import TODAY, _portfolio, close, twin


def _metrics(api: Api, h: dict[str, str], pid: int, query: str) -> dict:
    r = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/?{query}", headers=h)
    assert r.status_code == 200, r.text
    return r.json()


def _check(m: dict, keep: np.ndarray) -> None:
    dates, _, rets, b_ret = twin()
    keep = keep & np.isfinite(rets)
    x, b = rets[keep], b_ret[keep]
    assert m["observations"] == int(keep.sum())
    assert m["start_date"] == dates[keep][0].isoformat()
    assert m["end_date"] == dates[keep][-1].isoformat()
    assert close(m["total_return"], qc.returns.total_return(x))
    assert close(m["volatility"], qc.risk.volatility(x))
    assert close(m["max_drawdown"], qc.drawdown.max_drawdown(x))
    assert close(m["beta"], qc.risk.beta(x, b), 1.5e-4)
    assert close(m["benchmark_return"], qc.returns.total_return(b))


@pytest.mark.parametrize("period", ["3y", "5y", "max"])
def test_a_period_longer_than_the_history_gives_the_whole_history(api: Api, period: str) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    m = _metrics(api, h, pid, f"period={period}")
    assert m["period"] == period
    dates, *_ = twin()
    _check(m, np.ones(len(dates), dtype=bool))


def test_ytd_starts_after_the_last_day_of_last_year(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    m = _metrics(api, h, pid, "period=ytd")
    assert m["period"] == "ytd"
    dates, *_ = twin()
    _check(m, np.array([d > dt.date(TODAY.year - 1, 12, 31) for d in dates]))


def test_start_and_end_dates_choose_any_window(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    m = _metrics(api, h, pid, "start_date=2025-03-01&end_date=2025-09-30")
    assert m["period"] == "2025-03-01/2025-09-30"
    dates, *_ = twin()
    _check(m, np.array([dt.date(2025, 3, 1) <= d <= dt.date(2025, 9, 30) for d in dates]))
    # only an end: from the first transaction; only a start: up to the market's day
    m = _metrics(api, h, pid, "end_date=2025-06-30")
    assert m["period"] == "2025-01-10/2025-06-30"
    _check(m, np.array([d <= dt.date(2025, 6, 30) for d in dates]))
    m = _metrics(api, h, pid, "start_date=2026-01-01&end_date=2030-01-01")
    assert m["period"] == f"2026-01-01/{TODAY.isoformat()}"
    _check(m, np.array([d >= dt.date(2026, 1, 1) for d in dates]))


def test_performance_takes_the_same_windows(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    base = f"/api/analytics/portfolio/{pid}/performance/"
    p = api.client.get(f"{base}?start_date=2025-03-01&end_date=2025-09-30", headers=h).json()
    dates, values, _, _ = twin()
    keep = [dt.date(2025, 3, 1) <= d <= dt.date(2025, 9, 30) for d in dates]
    assert p["period"] == "2025-03-01/2025-09-30"
    assert [s["date"] for s in p["series"]] == [d.isoformat() for d in dates[keep]]
    assert [s["value"] for s in p["series"]] == [f"{v:.2f}" for v in values[keep]]
    assert p["series"][0]["cumulative_return"] is not None
    whole = api.client.get(f"{base}?period=max", headers=h).json()
    assert whole["period"] == "max" and len(whole["series"]) == len(dates)


@pytest.mark.parametrize("path", ["metrics", "performance"])
@pytest.mark.parametrize(
    ("query", "field", "code"),
    [
        ("period=1y&start_date=2025-01-01", "start_date", "conflict"),
        ("period=max&end_date=2025-01-01", "end_date", "conflict"),
        ("start_date=2025-06-01&end_date=2025-05-31", "start_date", "invalid"),
        ("start_date=2027-01-01", "start_date", "empty_window"),
        ("period=10y", "period", "invalid_choice"),
    ],
)
def test_bad_windows_are_400_naming_the_field(
    api: Api, path: str, query: str, field: str, code: str
) -> None:
    _, h = api.user()
    pid = _portfolio(api, h, ledger=[])
    r = api.client.get(f"/api/analytics/portfolio/{pid}/{path}/?{query}", headers=h)
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"] == "validation_error"
    assert body["details"]["field"] == field and body["details"]["code"] == code


def test_a_date_that_is_not_a_date_names_its_field(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h, ledger=[])
    r = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/?start_date=2025-13-01", headers=h)
    assert r.status_code == 400 and r.json()["details"]["field"] == "start_date"


def test_an_end_before_the_history_names_end_date(api: Api) -> None:
    """Only ``end_date``, before the first transaction: the window is empty, and the
    field named is the one the request gave."""
    _, h = api.user()
    pid = _portfolio(api, h)
    for path in ("metrics", "performance", "income"):
        r = api.client.get(
            f"/api/analytics/portfolio/{pid}/{path}/?end_date=2025-01-09", headers=h
        )
        assert r.status_code == 400, r.text
        assert (r.json()["details"]["field"], r.json()["details"]["code"]) == (
            "end_date", "empty_window"), r.text  # fmt: skip
