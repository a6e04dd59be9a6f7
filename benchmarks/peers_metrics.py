"""quantcore returns/risk/drawdown/metrics beside empyrical-reloaded, on the same panels.

Both sides get the same Fortran-ordered float64 ndarray (column-contiguous, what
a DataFrame hands out); empyrical's 2-D fast paths are used where it has them
and it is called column by column where it has none (VaR, CVaR, stability,
tail ratio). Full size is the issue's 2,520 x 1,000 panel (10 years x 1,000 assets).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Case

from quantcore import drawdown, metrics, risk

__all__ = ["CASES"]

CORE = (
    "sharpe_ratio",
    "annualized_return",
    "volatility",
    "max_drawdown",
    "value_at_risk",
    "expected_shortfall",
)


def _panel(quick: bool) -> np.ndarray:
    n, k = (504, 50) if quick else (2520, 1000)
    rng = np.random.default_rng(20261122)
    r = rng.standard_t(4, size=(n, k)) * 0.01 + 0.0003
    r[: n // 10, -1] = np.nan  # one late starter, as in real panels
    return np.asfortranarray(r)


def _empyrical() -> Any:
    warnings.simplefilter("ignore")
    import empyrical

    return empyrical


def _per_column(fn: Any, r: np.ndarray) -> np.ndarray:
    out = np.empty(r.shape[1])
    for j in range(r.shape[1]):
        col = r[:, j]
        out[j] = fn(col[~np.isnan(col)])
    return out


def _peer_core(r: np.ndarray) -> list[Any]:
    ep = _empyrical()
    return [
        ep.sharpe_ratio(r),
        ep.annual_return(r),  # 2-D fast path (counts the late starter's NaN rows as periods)
        ep.annual_volatility(r),
        ep.max_drawdown(r),
        _per_column(lambda c: -ep.value_at_risk(c, 0.05), r),
        _per_column(lambda c: -ep.conditional_value_at_risk(c, 0.05), r),
    ]


def _peer_full(r: np.ndarray) -> list[Any]:
    ep = _empyrical()
    return [
        *_peer_core(r),
        ep.cum_returns_final(r),
        ep.sortino_ratio(r),
        _per_column(ep.calmar_ratio, r),
        _per_column(ep.omega_ratio, r),
        _per_column(ep.stability_of_timeseries, r),
        _per_column(ep.tail_ratio, r),
    ]


def _bench_setup(quick: bool) -> tuple[np.ndarray, np.ndarray]:
    r = _panel(quick)
    return r, np.asfortranarray(r[:, :1] * 0.5 + 0.001 * np.sin(np.arange(r.shape[0]))[:, None])


def _peer_bench(data: tuple[np.ndarray, np.ndarray]) -> list[Any]:
    ep = _empyrical()
    r, b = data
    return [ep.alpha_beta(r[:, j], b[:, 0]) for j in range(r.shape[1])]


CASES: list[Case] = [
    Case(
        name="metrics.summary 6 metrics 2520x1000 (quick: 504x50)",
        setup=_panel,
        ours=lambda r: metrics.summary(r, metrics=CORE),
        peer=_peer_core,
        peer_name="empyrical-reloaded",
        goal=20.0,
        goal_text=">= 20x faster",
        notes="sharpe, CAGR, volatility, max drawdown, VaR 95, ES 95",
    ),
    Case(
        name="metrics.summary 12 metrics 2520x1000 (quick: 504x50)",
        setup=_panel,
        ours=lambda r: metrics.summary(r),
        peer=_peer_full,
        peer_name="empyrical-reloaded",
    ),
    Case(
        name="metrics.sharpe_ratio 2520x1000 (quick: 504x50)",
        setup=_panel,
        ours=metrics.sharpe_ratio,
        peer=lambda r: _empyrical().sharpe_ratio(r),
        peer_name="empyrical-reloaded",
    ),
    Case(
        name="drawdown.max_drawdown 2520x1000 (quick: 504x50)",
        setup=_panel,
        ours=drawdown.max_drawdown,
        peer=lambda r: _empyrical().max_drawdown(r),
        peer_name="empyrical-reloaded",
    ),
    Case(
        name="risk.expected_shortfall 2520x1000 (quick: 504x50)",
        setup=_panel,
        ours=risk.expected_shortfall,
        peer=lambda r: _per_column(lambda c: _empyrical().conditional_value_at_risk(c), r),
        peer_name="empyrical-reloaded",
    ),
    Case(
        name="risk.alpha+beta 2520x1000 (quick: 504x50)",
        setup=_bench_setup,
        ours=lambda d: (risk.beta(d[0], d[1]), risk.alpha(d[0], d[1])),
        peer=_peer_bench,
        peer_name="empyrical-reloaded",
    ),
]
