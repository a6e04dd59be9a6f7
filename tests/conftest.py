"""Shared fixtures: real price data shipped in PyPI packages, seeded RNGs, service availability."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# Hypothesis profiles: "fast" (the default, what `make test` runs) and "thorough"
# (`make test-thorough`, a nightly-style run). A test's own @settings(max_examples=...)
# still wins; the profile sets the default for the rest. "fast" derandomizes, so a run is
# reproducible; "thorough" explores new examples each run.
settings.register_profile("fast", max_examples=50, deadline=None, derandomize=True)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


def _load_arch(name: str) -> pd.DataFrame:
    module = importlib.import_module(f"arch.data.{name}")
    return module.load()


@pytest.fixture(scope="session")
def sp500() -> pd.DataFrame:
    """Daily S&P 500 OHLCV 1999-2018, shipped by ``arch`` (``arch.data.sp500``)."""
    return _load_arch("sp500")


@pytest.fixture(scope="session")
def nasdaq() -> pd.DataFrame:
    """Daily NASDAQ Composite OHLCV 1999-2018, shipped by ``arch`` (``arch.data.nasdaq``)."""
    return _load_arch("nasdaq")


@pytest.fixture(scope="session")
def goog() -> pd.DataFrame:
    """Daily GOOG OHLCV 2004-2013, shipped by ``backtesting`` (``backtesting.test.GOOG``)."""
    from backtesting.test import GOOG

    return GOOG.copy()


@pytest.fixture(scope="session")
def eurusd() -> pd.DataFrame:
    """Hourly EUR/USD OHLCV, shipped by ``backtesting`` (``backtesting.test.EURUSD``)."""
    from backtesting.test import EURUSD

    return EURUSD.copy()


@pytest.fixture(scope="session")
def close_panel(sp500: pd.DataFrame, nasdaq: pd.DataFrame, goog: pd.DataFrame) -> pd.DataFrame:
    """Real closes side by side on one calendar: GOOG starts later, so its column has leading NaNs."""
    return pd.DataFrame(
        {"SP500": sp500["Adj Close"], "NASDAQ": nasdaq["Adj Close"], "GOOG": goog["Close"]}
    ).sort_index()


@pytest.fixture(scope="session")
def returns_panel(close_panel: pd.DataFrame) -> pd.DataFrame:
    """Simple returns of :func:`close_panel` (first row and GOOG's leading rows NaN)."""
    return close_panel.pct_change(fill_method=None)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


def _port_open(host: str, port: int) -> bool:
    import socket

    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def _missing(message: str) -> NoReturn:
    """The one guard: skip on a developer's machine, fail under ``CI=true``."""
    if IN_CI:
        pytest.fail(f"{message}; CI must run these tests (see .ci/run)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_service(name: str, host: str, port: int) -> None:
    """Skip (locally) or fail (in CI) when a real backing service is not answering."""
    if not _port_open(host, port):
        _missing(f"{name} is not answering on {host}:{port}")


def require_oracle(module: str) -> ModuleType:
    """Import a reference library (TA-Lib, vectorbt, dask.distributed ...) or skip/fail.

    Use at module level instead of ``pytest.importorskip``, which would skip in CI too:
    ``vbt = require_oracle("vectorbt")``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        _missing(f"{module} cannot be imported ({exc})")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """An asyncpg URL for the real PostgreSQL server (database ``test``)."""
    require_service("PostgreSQL", "127.0.0.1", 5432)
    return os.environ.get("QC_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


@pytest.fixture(scope="session")
def redis_url() -> str:
    """A URL for the real Redis server."""
    require_service("Redis", "127.0.0.1", 6379)
    return os.environ.get("QC_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
