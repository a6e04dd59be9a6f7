"""The result of one backtest: metrics, equity curve, trades and positions."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["EXIT_REASONS", "METRIC_NAMES", "BacktestResult"]

#: Name of each ``trades["exit_reason"]`` code (``quantcore._kernels.backtest_orders.EXIT_*``):
#: ``"end"`` for a position still open at the last bar (marked to market, not
#: exited), then an exit signal (or a reversal), the stop loss, the take profit,
#: the trailing stop, the time stop.
EXIT_REASONS: tuple[str, ...] = (
    "end",
    "signal",
    "stop_loss",
    "take_profit",
    "trailing_stop",
    "time_stop",
)

#: Scalar metrics of a :class:`BacktestResult`, in the order tables show them.
METRIC_NAMES: tuple[str, ...] = (
    "total_return",
    "annualized_return",
    "sharpe_ratio",
    "sortino_ratio",
    "max_drawdown",
    "win_rate",
    "total_trades",
    "profit_factor",
    "exposure",
    "benchmark_return",
    "alpha",
    "beta",
)


@dataclass(frozen=True, slots=True)
class BacktestResult:
    """Metrics and series of one backtest (see :func:`quantcore.backtest.run`).

    Attributes
    ----------
    total_return : float
        ``equity[-1] / initial_capital - 1``.
    annualized_return : float
        ``(1 + total_return) ** (periods_per_year / n_bars) - 1``.
    sharpe_ratio : float
        ``mean(r) / std(r, ddof=1) * sqrt(periods_per_year)`` of the bar returns
        ``r_t = equity_t / equity_{t-1} - 1`` (``equity_{-1}`` = initial capital).
    sortino_ratio : float
        ``mean(r) * P / (sqrt(mean(min(r, 0) ** 2)) * sqrt(P))`` (empyrical's).
    max_drawdown : float
        ``min_t(equity_t / max_{s <= t} equity_s - 1)`` with the initial capital as
        the first peak; zero or negative.
    win_rate : float
        Share of closed trades with a positive PnL (NaN without closed trades).
    total_trades : int
        Closed trades plus positions still open at the end.
    profit_factor : float
        Gross profit / gross loss of closed trades (NaN without a losing trade).
    exposure : float
        Share of bars ending with an open position.
    benchmark_return, alpha, beta : float
        Total return of the benchmark, Jensen's alpha (annualized) and beta of
        the bar returns on the benchmark's; NaN without a benchmark.
    equity : Series or ndarray
        Equity at every bar's close.
    trades : ndarray
        ``quantcore._records.trade_dt`` records, in the order they were closed,
        open positions last; ``exit_reason`` codes index :data:`EXIT_REASONS`.
    positions : Series, DataFrame or ndarray
        Signed position size (units) per bar and asset.
    turnover, costs : Series or ndarray, optional
        Target-weight portfolios (:func:`quantcore.backtest.rebalance`): value
        traded over the equity before trading, and fees plus slippage, per bar.
    """

    total_return: float
    annualized_return: float
    sharpe_ratio: float
    sortino_ratio: float
    max_drawdown: float
    win_rate: float
    total_trades: int
    profit_factor: float
    exposure: float
    benchmark_return: float
    alpha: float
    beta: float
    equity: Any
    trades: np.ndarray
    positions: Any
    turnover: Any = None
    costs: Any = None

    def metrics(self) -> dict[str, float]:
        """The scalar metrics as a dict, in :data:`METRIC_NAMES` order."""
        return {name: getattr(self, name) for name in METRIC_NAMES}

    def trades_frame(self) -> pd.DataFrame:
        """The trades as a DataFrame, with entry/exit timestamps when the input had an index.

        ``exit_reason`` is given by name (:data:`EXIT_REASONS`, categorical).
        """
        frame = pd.DataFrame(self.trades)
        if "exit_reason" in frame:
            frame["exit_reason"] = pd.Categorical.from_codes(
                frame["exit_reason"].to_numpy(), categories=pd.Index(EXIT_REASONS)
            )
        index = getattr(self.equity, "index", None)
        if index is not None and len(frame):
            frame["entry_time"] = index[frame["entry_idx"].to_numpy()]
            exit_idx = frame["exit_idx"].to_numpy()
            times = index[np.where(exit_idx >= 0, exit_idx, 0)]
            frame["exit_time"] = pd.Series(times, index=frame.index).where(exit_idx >= 0)
        return frame

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{f.name}={getattr(self, f.name):.6g}"
            for f in fields(self)
            if f.name in METRIC_NAMES and f.name != "total_trades"
        )
        return f"BacktestResult(total_trades={self.total_trades}, {shown})"
