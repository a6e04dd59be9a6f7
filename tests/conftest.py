"""Shared fixtures: real price data shipped in PyPI packages, seeded RNGs, service availability,
and server processes.

Two helpers every test uses, written once here:

* :func:`skip_or_fail`, the one guard for what a test needs from the machine
  (PostgreSQL, Redis, an oracle library, a browser, the docs tools): it skips with
  the reason on a developer's machine and fails under ``CI=true``, where everything
  must be there (``.ci/run`` starts PostgreSQL and Redis);
* :func:`start_process`, which starts a server process with its output in a log
  file and polls a URL until it answers (or fails the test with the log).
"""

from __future__ import annotations

import importlib
import os
import socket
import subprocess
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import httpx
import numpy as np
import pandas as pd
import pytest
from hypothesis import settings

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _own_numba_cache(worker: str) -> None:
    """Give this pytest-xdist worker a numba cache of its own, seeded with the warm one.

    numba's on-disk cache numbers each kernel's entries in an index file without a lock:
    two processes compiling new specializations of one kernel at once can write one
    entry's machine code under the other's signature, and a later load of it crashes.
    The workers of one run therefore never share a cache directory; each starts from a
    copy of the cache ``python -m quantcore warm`` left beside the sources, laid out the
    way numba looks for it under ``NUMBA_CACHE_DIR``.
    """
    import atexit
    import hashlib
    import shutil
    import tempfile
    from pathlib import Path

    root = Path(tempfile.gettempdir()) / f"quantcore-numba-{os.getpid()}-{worker}"
    package = Path(__file__).resolve().parents[1] / "quantcore"
    for cached in package.rglob("__pycache__"):
        source_dir = str(cached.parent)
        key = f"{cached.parent.name}_{hashlib.sha1(source_dir.encode()).hexdigest()}"
        files = [*cached.glob("*.nbi"), *cached.glob("*.nbc")]
        if files:
            (root / key).mkdir(parents=True, exist_ok=True)
            for f in files:
                shutil.copy2(f, root / key / f.name)
    os.environ["NUMBA_CACHE_DIR"] = str(root)
    atexit.register(shutil.rmtree, root, ignore_errors=True)


# Before anything imports numba, which reads NUMBA_CACHE_DIR once.
if os.environ.get("PYTEST_XDIST_WORKER") and "NUMBA_CACHE_DIR" not in os.environ:
    _own_numba_cache(os.environ["PYTEST_XDIST_WORKER"])
ROOT = Path(__file__).resolve().parents[1]

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
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def skip_or_fail(message: str) -> NoReturn:
    """The one guard: skip on a developer's machine, fail under ``CI=true``.

    Usable at module level (a module that cannot run at all) and in fixtures.
    """
    if IN_CI:
        pytest.fail(f"{message}; CI must run these tests (see .ci/run)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_service(name: str, host: str, port: int) -> None:
    """Skip (locally) or fail (in CI) when a real backing service is not answering."""
    if not _port_open(host, port):
        skip_or_fail(f"{name} is not answering on {host}:{port}")


def require_oracle(module: str) -> ModuleType:
    """Import a reference library (TA-Lib, vectorbt, dask.distributed ...) or skip/fail.

    Use at module level instead of ``pytest.importorskip``, which would skip in CI too:
    ``vbt = require_oracle("vectorbt")``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        skip_or_fail(f"{module} cannot be imported ({exc})")


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


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServerProcess:
    """A server started by :func:`launch_process`, its output in ``log``."""

    proc: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        """Terminate (SIGTERM, then SIGKILL after 15 s) and reap the process."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def launch_process(
    command: Sequence[str],
    *,
    log: Path,
    env: Mapping[str, str],
    cwd: Path = ROOT,
    start_new_session: bool = False,
    append: bool = False,
) -> ServerProcess:
    """Start ``command`` with stdout and stderr going to ``log`` (see :func:`wait_until_ready`).

    ``append``: keep what earlier processes wrote there (a server restarted in a test).
    """
    with log.open("ab" if append else "wb") as out:
        proc = subprocess.Popen(
            list(command),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            start_new_session=start_new_session,
        )
    return ServerProcess(proc, log)


def wait_until_ready(
    server: ServerProcess,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    statuses: Collection[int] = (200,),
    timeout: float = 60.0,
) -> ServerProcess:
    """Poll ``url`` until it answers one of ``statuses``; stop the server and fail the test
    (with its log) if it exits or does not answer within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url, headers=dict(headers or {}), timeout=5).status_code in statuses:
                return server
        except httpx.TransportError:
            pass
        if server.proc.poll() is not None or time.monotonic() > deadline:
            server.stop()
            pytest.fail(f"server did not start ({url}):\n{server.log.read_text()}", pytrace=False)
        time.sleep(0.1)


def start_process(
    command: Sequence[str],
    *,
    log: Path,
    env: Mapping[str, str],
    url: str,
    headers: Mapping[str, str] | None = None,
    statuses: Collection[int] = (200,),
    timeout: float = 60.0,
    cwd: Path = ROOT,
    append: bool = False,
) -> ServerProcess:
    """:func:`launch_process` then :func:`wait_until_ready`: a server that answers ``url``."""
    server = launch_process(command, log=log, env=env, cwd=cwd, append=append)
    return wait_until_ready(server, url, headers=headers, statuses=statuses, timeout=timeout)
