"""Wire shapes of ``/api/backtesting/``.

Money is a decimal string with 2 fractional digits; returns, drawdowns and win
rate are fractions with 6; ratios have 4 (see docs/service_analytics.md).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Literal

import msgspec

__all__ = [
    "BacktestCreate",
    "BacktestDetail",
    "BacktestRead",
    "BacktestStatus",
    "EquityPoint",
    "ExitReason",
    "QuickBacktestCreate",
    "QuickBacktestRead",
    "RunMetrics",
    "RunResult",
    "StrategyCreate",
    "StrategyRead",
    "StrategyTypeRead",
    "StrategyUpdate",
    "TradeRead",
]

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
Description = Annotated[str, msgspec.Meta(max_length=10_000)]
Symbol = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
Symbols = Annotated[list[Symbol], msgspec.Meta(min_length=1, max_length=20)]
StrategyType = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
BacktestStatus = Literal["pending", "running", "completed", "failed"]
#: What closed a trade (``quantcore.backtest.EXIT_REASONS``); ``end``: still open at the last bar.
ExitReason = Annotated[
    Literal["signal", "stop_loss", "take_profit", "trailing_stop", "time_stop", "end"],
    msgspec.Meta(
        description=(
            "What closed the trade: an exit signal (or a reversal), the stop loss, the take "
            "profit, the trailing stop, the time stop; 'end' for a position still open at "
            "the last bar (marked to market). Null for results stored before the field existed."
        )
    ),
]


class StrategyCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``parameters`` are checked against the strategy type (see ``GET .../strategies/types/``)."""

    name: Name
    strategy_type: StrategyType
    description: Description = ""
    parameters: dict[str, Any] = msgspec.field(default_factory=dict)
    initial_capital: Decimal = Decimal(100_000)
    max_position_size: Decimal = Decimal(1)
    asset_symbols: Symbols


class StrategyUpdate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """PUT body: omitted fields keep their value; parameters are re-validated."""

    name: Name | None = None
    strategy_type: StrategyType | None = None
    description: Description | None = None
    parameters: dict[str, Any] | None = None
    initial_capital: Decimal | None = None
    max_position_size: Decimal | None = None
    asset_symbols: Symbols | None = None


class StrategyRead(msgspec.Struct, kw_only=True):
    id: int
    name: str
    strategy_type: str
    description: str
    parameters: dict[str, Any]
    initial_capital: str
    max_position_size: str
    asset_symbols: list[str]
    created_at: dt.datetime
    updated_at: dt.datetime


class StrategyTypeRead(msgspec.Struct, kw_only=True):
    """A registered strategy type and its parameters' defaults."""

    strategy_type: str
    parameters: dict[str, Any]
    required: list[str]


class BacktestCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    strategy: int
    name: Name
    start_date: dt.date
    end_date: dt.date
    benchmark_symbol: Symbol = "SPY"
    transaction_costs: Decimal = Decimal(0)
    slippage: Decimal = Decimal(0)


class RunMetrics(msgspec.Struct, kw_only=True):
    """The ``result`` of a run: the documented six fields, then more of ``BacktestResult``."""

    total_return: str | None
    annualized_return: str | None
    sharpe_ratio: str | None
    max_drawdown: str | None
    win_rate: str | None
    total_trades: int
    sortino_ratio: str | None
    profit_factor: str | None
    exposure: str | None
    benchmark_return: str | None
    alpha: str | None
    beta: str | None
    final_value: str | None


class RunResult(msgspec.Struct, kw_only=True):
    """``POST .../run/``: ``execution_time`` in seconds; ``error`` set when ``failed``."""

    status: BacktestStatus
    result: RunMetrics | None
    execution_time: float | None
    error: str | None = None


class BacktestRead(msgspec.Struct, kw_only=True):
    id: int
    strategy: int
    name: str
    start_date: dt.date
    end_date: dt.date
    benchmark_symbol: str
    transaction_costs: str
    slippage: str
    status: BacktestStatus
    error: str | None
    result: RunMetrics | None
    execution_time: float | None
    created_at: dt.datetime
    updated_at: dt.datetime


class EquityPoint(msgspec.Struct, kw_only=True):
    date: dt.date
    equity: str


class TradeRead(msgspec.Struct, kw_only=True):
    symbol: str
    direction: str
    status: str
    entry_date: dt.date
    exit_date: dt.date | None
    size: str
    entry_price: str
    exit_price: str | None
    fees: str
    pnl: str
    return_: str | None = msgspec.field(name="return")
    exit_reason: ExitReason | None = None


class BacktestDetail(BacktestRead, kw_only=True):
    """A backtest with its equity curve and trades (after a run)."""

    equity_curve: list[EquityPoint]
    trades: list[TradeRead]


class QuickBacktestCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Create a strategy and a backtest and run it. ``parameters`` default per type."""

    strategy_type: StrategyType
    asset_symbols: Symbols
    start_date: dt.date
    end_date: dt.date
    initial_capital: Decimal = Decimal(100_000)  # a JSON number or a decimal string
    parameters: dict[str, Any] = msgspec.field(default_factory=dict)
    name: Name | None = None
    max_position_size: Decimal = Decimal(1)
    benchmark_symbol: Symbol = "SPY"
    transaction_costs: Decimal = Decimal(0)
    slippage: Decimal = Decimal(0)


class QuickBacktestRead(RunResult, kw_only=True):
    backtest_id: int
    strategy_id: int
