"""quantcore rolling metrics beside pandas, empyrical-reloaded and numpy, on the same panels.

A 2,520 x 1,000 float64 panel (10 years x 1,000 assets), window 63, in both
memory layouts (C order from numpy, Fortran order from a DataFrame). pandas gets
a DataFrame over that same array, built once in setup. empyrical's ``roll_*``
have no 2-D path (a panel is flattened into one series), so empyrical is called
once per column; those cases are left out of ``--quick``.

The ``numpy floor`` cases put each function beside one ``numpy.cumsum(axis=0)``
over the same array: one read and one write of a panel-sized result, the least
any rolling metric must do. The goal is to be within 3x of it.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Case

from quantcore import rolling

__all__ = ["CASES"]

WINDOW = 63
LAYOUTS = ("C", "F")
SIZE = "2520x1000 w63 (quick: 504x50)"
ANN = float(np.sqrt(252))

Data = tuple[np.ndarray, np.ndarray, pd.DataFrame, pd.Series]


def _setup(order: str) -> Callable[[bool], Data]:
    def build(quick: bool) -> Data:
        n, k = (504, 50) if quick else (2520, 1000)
        rng = np.random.default_rng(20261123)
        r = np.asarray(rng.standard_t(4, size=(n, k)) * 0.01 + 0.0003, order=order)
        b = np.ascontiguousarray(r[:, :1] * 0.5 + 0.001 * np.sin(np.arange(n))[:, None])
        return r, b, pd.DataFrame(r, copy=False), pd.Series(b[:, 0])

    return build


def _empyrical() -> Any:
    warnings.simplefilter("ignore")
    import empyrical

    return empyrical


def _pandas_vol(d: Data) -> Any:
    return d[2].rolling(WINDOW).std() * ANN


def _pandas_sharpe(d: Data) -> Any:
    roll = d[2].rolling(WINDOW)
    return roll.mean() / roll.std() * ANN


def _pandas_beta(d: Data) -> Any:
    return d[2].rolling(WINDOW).cov(d[3]).div(d[3].rolling(WINDOW).var(), axis=0)


def _per_column(name: str) -> Callable[[Data], Any]:
    def run(d: Data) -> Any:
        fn = getattr(_empyrical(), name)
        r = d[0]
        if name == "roll_beta":
            return [fn(r[:, j], d[1][:, 0], WINDOW) for j in range(r.shape[1])]
        return [fn(r[:, j], WINDOW) for j in range(r.shape[1])]

    return run


def _floor(d: Data) -> Any:
    return np.cumsum(d[0], axis=0)


OURS: dict[str, Callable[[Data], Any]] = {
    "rolling.rolling_volatility": lambda d: rolling.rolling_volatility(d[0], WINDOW),
    "rolling.rolling_sharpe": lambda d: rolling.rolling_sharpe(d[0], WINDOW),
    "rolling.rolling_beta": lambda d: rolling.rolling_beta(d[0], d[1], WINDOW),
}
PANDAS = {
    "rolling.rolling_volatility": (_pandas_vol, "rolling().std()"),
    "rolling.rolling_sharpe": (_pandas_sharpe, "rolling mean/std"),
    "rolling.rolling_beta": (_pandas_beta, "rolling cov/var"),
}
EMPYRICAL = {
    "rolling.rolling_volatility": "roll_annual_volatility",
    "rolling.rolling_sharpe": "roll_sharpe_ratio",
    "rolling.rolling_beta": "roll_beta",
}

CASES: list[Case] = []
for _order in LAYOUTS:
    for _name, _ours in OURS.items():
        _peer, _how = PANDAS[_name]
        CASES += [
            Case(
                name=f"{_name} {_order} {SIZE}",
                setup=_setup(_order),
                ours=_ours,
                peer=_peer,
                peer_name="pandas",
                notes=f"pandas DataFrame {_how} over the same array",
            ),
            Case(
                name=f"{_name} {_order} {SIZE} vs empyrical",
                setup=_setup(_order),
                ours=_ours,
                peer=_per_column(EMPYRICAL[_name]),
                peer_name="empyrical-reloaded",
                quick=False,
                notes=f"empyrical.{EMPYRICAL[_name]} once per column (no 2-D path)",
            ),
            Case(
                name=f"{_name} {_order} {SIZE} vs numpy floor",
                setup=_setup(_order),
                ours=_ours,
                peer=_floor,
                peer_name="numpy cumsum(axis=0)",
                goal=1 / 3,
                goal_text="within 3x of one cumsum pass",
            ),
        ]
