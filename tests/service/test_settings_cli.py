"""Settings from QC_* variables and the ``python -m service`` commands (in process, on SQLite)."""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path

import pytest
from sqlalchemy import select

from service.cli import main
from service.db import Database
from service.db.models import Asset
from service.settings import RateLimit, Settings, parse_rate


def test_settings_defaults_and_env(tmp_path: Path) -> None:
    s = Settings.from_env({})
    assert (s.rate_limit_authenticated, s.rate_limit_anonymous, s.rate_limit_realtime) == (
        "1000/hour",
        "100/hour",
        "10/minute",
    )
    assert s.database.startswith("sqlite+aiosqlite:///") and s.database.endswith("var/quantcore.db")
    env = {
        "QC_DATA_DIR": str(tmp_path),
        "QC_DEMO_DATA": "true",
        "QC_RATE_LIMIT_ANONYMOUS": "5/minute",
        "QC_DATABASE_URL": "postgresql+asyncpg://x/y",
    }
    s = Settings.from_env(env)
    assert (
        s.demo_data is True
        and s.anonymous_rate == RateLimit(5, 60)
        and s.database == "postgresql+asyncpg://x/y"
    )
    assert s.prices_dir == tmp_path / "prices"
    # docs/service_analytics.md: backtest workers default to min(4, cpu count); 0 = a thread
    assert Settings.from_env({}).backtest_workers == min(4, os.cpu_count() or 1)
    assert Settings.from_env({"QC_BACKTEST_WORKERS": "0"}).backtest_workers == 0
    assert Settings.from_env({"QC_BACKTEST_WORKERS": "7"}).backtest_workers == 7


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"QC_RATE_LIMIT_ANONYMOUS": "lots"}, "QC_RATE_LIMIT_ANONYMOUS"),
        ({"QC_RATE_LIMIT_REALTIME": "0/minute"}, "QC_RATE_LIMIT_REALTIME"),
        ({"QC_DB_POOL_SIZE": "zero"}, "db_pool_size"),
        ({"QC_DEMO_DATA": "maybe"}, "demo_data"),
        ({"QC_BACKTEST_WORKERS": "-1"}, "backtest_workers"),
        ({"QC_BACKTEST_WORKERS": "many"}, "backtest_workers"),
        ({"QC_BACKTEST_WORKERS": ""}, "backtest_workers"),
    ],
)
def test_settings_errors_name_the_variable(env: dict[str, str], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        Settings.from_env(env)


def test_bad_setting_stops_the_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("QC_BACKTEST_WORKERS", "-1")
    assert main(["migrate"]) == 2
    assert "backtest_workers" in capsys.readouterr().err


def test_parse_rate() -> None:
    assert parse_rate("1000/hour") == RateLimit(1000, 3600)
    assert parse_rate(" 7 / day ") == RateLimit(7, 86400)
    with pytest.raises(ValueError, match="rate"):
        parse_rate("10 per minute")


async def _assets(url: str) -> dict[str, tuple[str, str, str]]:
    db = Database(url)
    try:
        async with db.read() as s:
            return {
                a.symbol: (a.name, a.sector, a.data_source)
                for a in (await s.execute(select(Asset))).scalars()
            }
    finally:
        await db.dispose()


def test_cli_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("QC_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("QC_DATABASE_URL", raising=False)
    assert main(["migrate"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("long enough password\n"))
    assert main(["createuser", "carol", "--password-stdin"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("long enough password\n"))
    assert main(["createuser", "carol", "--password-stdin"]) == 1
    assert "already exists" in capsys.readouterr().err
    for name in ("carol", " CAROL", "\uff43arol"):  # as sign-in compares names
        assert main(["token", name]) == 0
        assert capsys.readouterr().out.strip().startswith("qct_")
    assert main(["token", "nobody"]) == 1

    good = tmp_path / "xyz.csv"
    good.write_text(
        "Date,Open,High,Low,Close,Adj Close,Volume\n2024-01-02,10,11,9,10.5,10.5,1000\n"
        "2024-01-03,10.5,12,10,11,11,2000\n"
    )
    assert main(["import-prices", str(good), "--sector", "Tech", "--name", "Xyz Corp"]) == 0
    assert "XYZ: 2 rows" in capsys.readouterr().out
    url = Settings.from_env().database
    assert asyncio.run(_assets(url))["XYZ"] == ("Xyz Corp", "Tech", "import")
    bad = tmp_path / "bad.csv"
    bad.write_text("Date,Open\n2024-01-02,10\n")
    assert main(["import-prices", str(good), str(bad)]) == 1
    assert "bad.csv" in capsys.readouterr().err
