"""Start-up compiles what the endpoints use: after it, no request makes numba compile.

A fresh process (so no earlier test has compiled anything in it) builds the app, whose
start-up runs :func:`quantcore.warmup.warm`; it then counts the compiled
specializations of every numba dispatcher in ``quantcore``, requests every analytics,
backtest and tax endpoint of a portfolio with buys, a sell and a dividend, and counts
again. Any new specialization is a kernel compiled inside a request (seconds on an
empty cache), which is what the start-up exists to prevent: the test names it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

_SCRIPT = textwrap.dedent(
    """
    import asyncio, datetime as dt, json, sys
    from pathlib import Path

    from litestar.testing import TestClient
    from numba.core.dispatcher import Dispatcher

    from service.app import create_app
    from service.cli import _prepare
    from service.settings import Settings

    _ALL_INDICATORS = "sma_20,ema_20,wma_20,roc,rsi,macd,bollinger,atr,adx,williams_r,cci,stochastic,obv,vwap"

    def compiled():
        out = {}
        for name, module in list(sys.modules.items()):
            if name.startswith("quantcore"):
                for attr, obj in list(vars(module).items()):
                    if isinstance(obj, Dispatcher):
                        name = f"{obj.py_func.__module__}.{obj.py_func.__qualname__}"
                        out[name] = [str(sig) for sig in obj.signatures]
        return out

    data = Path(sys.argv[1])
    settings = Settings.from_env({}, data_dir=str(data), demo_data=True, rate_limit_enabled=False)
    asyncio.run(_prepare(settings))
    token = (data / "demo-token.txt").read_text().strip()
    h = {"Authorization": f"Token {token}"}
    with TestClient(create_app(settings)) as c:
        pid = c.get("/api/portfolios/", headers=h).json()["results"][0]["id"]
        positions = c.get(f"/api/portfolios/{pid}/positions/", headers=h).json()
        held = positions["results"] if isinstance(positions, dict) else positions
        symbol, asset = held[0]["asset"]["symbol"], held[0]["asset"]["id"]
        day = (dt.date.today() - dt.timedelta(days=30)).isoformat()
        for kind, qty, price in (("sell", "1", "100"), ("dividend", "1", "0.5")):
            r = c.post("/api/transactions/", headers=h, json={
                "portfolio": pid, "asset_symbol": symbol, "transaction_type": kind,
                "quantity": qty, "price": price, "fees": "0", "transaction_date": day})
            assert r.status_code == 201, r.text
        before = compiled()
        year = dt.date.today().year
        requests = [
            ("GET", f"/api/portfolios/{pid}/", None),
            ("GET", f"/api/portfolios/{pid}/positions/", None),
            *[("GET", f"/api/analytics/portfolio/{pid}/{what}/", None)
              for what in ("metrics", "performance", "allocation", "risk")],
            ("GET", f"/api/analytics/assets/{asset}/technical/?indicators=" + _ALL_INDICATORS, None),
            ("GET", f"/api/tax/analytics/summary/?year={year}", None),
            ("GET", "/api/tax/loss-harvesting/", None),
            ("POST", "/api/tax/loss-harvesting/analyze/", {}),
            ("POST", "/api/tax/reports/generate/", {"year": year}),
            ("POST", "/api/backtesting/quick-backtest/", {
                "strategy_type": "moving_average", "asset_symbols": [symbol],
                "start_date": "2022-01-03", "end_date": "2024-12-31"}),
        ]
        for method, url, body in requests:
            r = c.request(method, url, headers=h, json=body)
            assert r.status_code < 300, (url, r.status_code, r.text)
        after = compiled()
    new = {k: [sig for sig in sigs if sig not in before.get(k, [])] for k, sigs in after.items()}
    print(json.dumps({k: sigs for k, sigs in new.items() if sigs}))
    """
)


def test_no_request_compiles_a_kernel_after_start_up(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=1500,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0, result.stderr[-4000:]
    compiled_in_requests = json.loads(result.stdout.strip().splitlines()[-1])
    assert compiled_in_requests == {}, "kernels compiled inside requests (add them to quantcore.warmup)"
