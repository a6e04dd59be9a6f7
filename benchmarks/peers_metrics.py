"""quantcore returns/risk/drawdown/metrics beside empyrical-reloaded and numpy, on the same panels.

Every case runs on both memory layouts of the same 2,520 x 1,000 float64 panel
(10 years x 1,000 assets): C order (what numpy hands out) and Fortran order
(what a DataFrame hands out). Both sides get that same array, with no
preprocessing that only one side pays: empyrical uses its 2-D paths where it has
them (``sharpe_ratio``, ``annual_return``, ``annual_volatility``,
``max_drawdown``, ``cum_returns_final``, ``sortino_ratio``, ``downside_risk``)
and is called once per column, on the column as it is, where it has none (VaR,
CVaR, alpha/beta, and the ratios without a 2-D path).

The ``numpy floor`` cases put each single function beside the physical floor of
its work on the same array: one ``numpy.sum(axis=0)`` pass for the moment and
growth reductions, ``numpy.partition`` along the time axis for the percentile
ones. Their goal is to be within 3x of it (``goal = 1/3``).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Case

from quantcore import drawdown, metrics, returns, risk

__all__ = ["CASES"]

CORE = (
    "sharpe_ratio",
    "annualized_return",
    "volatility",
    "max_drawdown",
    "value_at_risk",
    "expected_shortfall",
)
LAYOUTS = ("C", "F")


def _panel(quick: bool, order: str) -> np.ndarray:
    n, k = (504, 50) if quick else (2520, 1000)
    rng = np.random.default_rng(20261122)
    r = rng.standard_t(4, size=(n, k)) * 0.01 + 0.0003
    r[: n // 10, -1] = np.nan  # one late starter, as in real panels
    return np.asarray(r, order=order)


def _with_bench(quick: bool, order: str) -> tuple[np.ndarray, np.ndarray]:
    r = _panel(quick, order)
    return r, r[:, :1] * 0.5 + 0.001 * np.sin(np.arange(r.shape[0]))[:, None]


def _empyrical() -> Any:
    warnings.simplefilter("ignore")
    import empyrical

    return empyrical


def _per_column(fn: Callable[[np.ndarray], float], r: np.ndarray) -> np.ndarray:
    return np.array([fn(r[:, j]) for j in range(r.shape[1])])


def _peer_core(r: np.ndarray) -> list[Any]:
    ep = _empyrical()
    return [
        ep.sharpe_ratio(r),
        ep.annual_return(r),
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


def _peer_bench(data: tuple[np.ndarray, np.ndarray]) -> list[Any]:
    ep = _empyrical()
    r, b = data
    return [ep.alpha_beta(r[:, j], b[:, 0]) for j in range(r.shape[1])]


def _setup(order: str) -> Callable[[bool], np.ndarray]:
    return lambda quick: _panel(quick, order)


def _setup_bench(order: str) -> Callable[[bool], tuple[np.ndarray, np.ndarray]]:
    return lambda quick: _with_bench(quick, order)


SIZE = "2520x1000 (quick: 504x50)"

#: name -> (ours, needs a benchmark, floor): floor "sum" is numpy.sum(axis=0),
#: "partition" numpy.partition at the 5 % rank along axis 0.
SINGLE: dict[str, tuple[Callable[[Any], Any], bool, str]] = {
    "returns.total_return": (returns.total_return, False, "sum"),
    "returns.annualized_return": (returns.annualized_return, False, "sum"),
    "risk.volatility": (risk.volatility, False, "sum"),
    "metrics.sharpe_ratio": (metrics.sharpe_ratio, False, "sum"),
    "metrics.sortino_ratio": (metrics.sortino_ratio, False, "sum"),
    "risk.downside_deviation": (risk.downside_deviation, False, "sum"),
    "drawdown.max_drawdown": (drawdown.max_drawdown, False, "sum"),
    "risk.beta": (lambda d: risk.beta(d[0], d[1]), True, "sum"),
    "risk.alpha": (lambda d: risk.alpha(d[0], d[1]), True, "sum"),
    "risk.value_at_risk": (risk.value_at_risk, False, "partition"),
    "risk.expected_shortfall": (risk.expected_shortfall, False, "partition"),
}


def _floor(kind: str, bench: bool) -> Callable[[Any], Any]:
    def run(data: Any) -> Any:
        r = data[0] if bench else data
        if kind == "sum":
            return r.sum(axis=0)
        return np.partition(r, int(0.05 * (r.shape[0] - 1)), axis=0)

    return run


CASES: list[Case] = []
for _order in LAYOUTS:
    CASES += [
        Case(
            name=f"metrics.summary 6 metrics {_order} {SIZE}",
            setup=_setup(_order),
            ours=lambda r: metrics.summary(r, metrics=CORE),
            peer=_peer_core,
            peer_name="empyrical-reloaded",
            goal=20.0,
            goal_text=">= 20x faster",
            notes="sharpe, CAGR, volatility, max drawdown, VaR 95, ES 95",
        ),
        Case(
            name=f"metrics.summary 12 metrics {_order} {SIZE}",
            setup=_setup(_order),
            ours=lambda r: metrics.summary(r),
            peer=_peer_full,
            peer_name="empyrical-reloaded",
        ),
        Case(
            name=f"metrics.sharpe_ratio {_order} {SIZE}",
            setup=_setup(_order),
            ours=metrics.sharpe_ratio,
            peer=lambda r: _empyrical().sharpe_ratio(r),
            peer_name="empyrical-reloaded",
        ),
        Case(
            name=f"drawdown.max_drawdown {_order} {SIZE}",
            setup=_setup(_order),
            ours=drawdown.max_drawdown,
            peer=lambda r: _empyrical().max_drawdown(r),
            peer_name="empyrical-reloaded",
        ),
        Case(
            name=f"risk.volatility {_order} {SIZE}",
            setup=_setup(_order),
            ours=risk.volatility,
            peer=lambda r: _empyrical().annual_volatility(r),
            peer_name="empyrical-reloaded",
        ),
        Case(
            name=f"returns.annualized_return {_order} {SIZE}",
            setup=_setup(_order),
            ours=returns.annualized_return,
            peer=lambda r: _empyrical().annual_return(r),
            peer_name="empyrical-reloaded",
        ),
        Case(
            name=f"risk.expected_shortfall {_order} {SIZE}",
            setup=_setup(_order),
            ours=risk.expected_shortfall,
            peer=lambda r: _per_column(_empyrical().conditional_value_at_risk, r),
            peer_name="empyrical-reloaded",
        ),
        Case(
            name=f"risk.alpha+beta {_order} {SIZE}",
            setup=_setup_bench(_order),
            ours=lambda d: (risk.beta(d[0], d[1]), risk.alpha(d[0], d[1])),
            peer=_peer_bench,
            peer_name="empyrical-reloaded",
        ),
    ]
    for _name, (_ours, _bench, _kind) in SINGLE.items():
        CASES.append(
            Case(
                name=f"{_name} {_order} {SIZE}",
                setup=_setup_bench(_order) if _bench else _setup(_order),
                ours=_ours,
                peer=_floor(_kind, _bench),
                peer_name="numpy sum(axis=0)" if _kind == "sum" else "numpy partition(axis=0)",
                goal=1.0 / 3.0,
                goal_text="within 3x of the numpy floor",
            )
        )
