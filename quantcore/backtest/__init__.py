"""Signal backtests, built-in strategies and fused parameter sweeps.

>>> import numpy as np
>>> import quantcore as qc
>>> prices = 100.0 + 10.0 * np.sin(np.arange(500) / 15.0)
>>> res = qc.backtest.run_strategy(prices, "moving_average", short_window=10, long_window=30)
>>> res.total_trades
5
>>> table = qc.backtest.sweep(prices, "moving_average",
...                           {"short_window": range(5, 50), "long_window": range(20, 200, 5)},
...                           fees=0.001)
>>> len(table)
1515
"""

from __future__ import annotations

from typing import Any

from quantcore.backtest import strategies
from quantcore.backtest.engine import EngineOptions, close_part, price_parts, run
from quantcore.backtest.rebalance import rebalance
from quantcore.backtest.result import EXIT_REASONS, METRIC_NAMES, BacktestResult
from quantcore.backtest.strategies import STRATEGIES, get_strategy
from quantcore.backtest.sweep import SWEEP_METRICS, sweep
from quantcore.backtest.validation import (
    WalkForwardResult,
    combinatorial_purged_splits,
    purged_kfold,
    walk_forward,
)

__all__ = [
    "EXIT_REASONS",
    "METRIC_NAMES",
    "STRATEGIES",
    "SWEEP_METRICS",
    "BacktestResult",
    "WalkForwardResult",
    "combinatorial_purged_splits",
    "purged_kfold",
    "rebalance",
    "run",
    "run_strategy",
    "strategies",
    "sweep",
    "walk_forward",
]


def run_strategy(prices: Any, strategy: str, /, **kwargs: Any) -> BacktestResult:
    """Generate a built-in strategy's signals on ``prices`` and backtest them.

    Parameters
    ----------
    prices : Series, DataFrame, ndarray or mapping
        As in :func:`run`; signals are computed on the closes.
    strategy : str
        A name in :data:`STRATEGIES`.
    **kwargs
        The strategy's parameters and :func:`run`'s options, mixed; a name that is
        neither raises a ValueError naming it.

    Returns
    -------
    BacktestResult

    Examples
    --------
    >>> import numpy as np
    >>> close = 100.0 + np.sin(np.arange(300) / 10.0) * 10.0
    >>> res = run_strategy(close, "moving_average", short_window=5, long_window=20, fees=0.001)
    >>> res.total_trades
    4
    """
    spec = get_strategy(strategy)
    engine_names = set(EngineOptions.__dataclass_fields__) | {"benchmark"}
    params = spec.resolve({k: v for k, v in kwargs.items() if k not in engine_names})
    options = {k: v for k, v in kwargs.items() if k in engine_names}
    prices = price_parts(prices)
    entries, exits = strategies.generate(spec.name, close_part(prices), params)
    return run(prices, entries, exits, **options)
