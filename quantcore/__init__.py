"""quantcore: numba-accelerated quantitative finance.

Submodules are imported on first access so that ``import quantcore`` stays cheap::

    import quantcore as qc
    qc.metrics.sharpe_ratio(returns)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type checker sees the submodules that __getattr__ imports on first use
    from quantcore import (
        accounts,
        backtest,
        cash,
        drawdown,
        fx,
        income,
        indicators,
        metrics,
        overfitting,
        plot,
        portfolio,
        report,
        returns,
        risk,
        rolling,
        tax,
        valuation,
        warmup,
    )

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "accounts",
    "backtest",
    "cash",
    "drawdown",
    "fx",
    "income",
    "indicators",
    "metrics",
    "overfitting",
    "plot",
    "portfolio",
    "report",
    "returns",
    "risk",
    "rolling",
    "tax",
    "valuation",
    "warmup",
]

_SUBMODULES = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        module = importlib.import_module(f"quantcore.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'quantcore' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES)
