"""The public surface of quantcore: the names the issues spell out are contracts.

Adding a name is fine (add it here too); removing or renaming one fails this test.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

import quantcore

CONTRACT: dict[str, set[str]] = {
    "returns": {
        "simple_returns", "log_returns", "cumulative_returns", "total_return",
        "annualized_return", "time_weighted_return", "money_weighted_return",
    },
    "risk": {
        "volatility", "value_at_risk", "expected_shortfall", "beta", "alpha",
        "correlation", "downside_deviation", "tracking_error", "rolling_volatility", "rolling_beta",
    },
    "drawdown": {"drawdown_series", "max_drawdown", "drawdown_periods"},
    "metrics": {
        "sharpe_ratio", "sortino_ratio", "calmar_ratio", "omega_ratio", "information_ratio",
        "stability_of_timeseries", "tail_ratio", "summary",
        "probability_of_backtest_overfitting", "deflated_sharpe_ratio", "rolling_sharpe",
    },
    "indicators": {
        "sma", "ema", "wma", "rsi", "macd", "bollinger_bands", "atr", "stochastic", "obv",
        "vwap", "roc", "williams_r", "cci", "adx",
    },
    "backtest": {
        "run", "run_strategy", "sweep", "BacktestResult", "strategies",
        "rebalance", "walk_forward", "purged_kfold", "combinatorial_purged_splits",
    },
    "tax": {
        "match_lots", "tax_summary", "harvest_opportunities", "form_8949", "schedule_d",
        "form_1099_div", "TaxRates", "LotLedger",
    },
    "plot": {
        "equity_curve", "underwater", "return_distribution", "rolling_sharpe_volatility",
        "sweep_heatmap", "price_with_indicators", "trades_on_price",
    },
    "report": {"tearsheet"},
    "fx": {"to_base", "value_in_base", "realized_in_base", "cross_rate", "RealizedInBase"},
}  # fmt: skip


def test_top_level_all_is_sorted_and_lazy() -> None:
    assert quantcore.__all__ == sorted(quantcore.__all__)
    assert set(CONTRACT) <= set(quantcore.__all__)


@pytest.mark.parametrize("module", sorted(CONTRACT))
def test_module_exports_its_contract(module: str) -> None:
    mod = importlib.import_module(f"quantcore.{module}")
    assert getattr(quantcore, module) is mod
    exported = set(mod.__all__)
    assert CONTRACT[module] <= exported, CONTRACT[module] - exported
    for name in exported:
        assert hasattr(mod, name), name


@pytest.mark.parametrize(
    ("function", "keyword", "default"),
    [
        ("risk.volatility", "periods_per_year", 252),
        ("returns.annualized_return", "periods_per_year", 252),
        ("metrics.sharpe_ratio", "periods_per_year", 252),
        ("risk.value_at_risk", "level", 0.95),
        ("risk.value_at_risk", "method", "historical"),
        ("indicators.rsi", "window", 14),
        ("indicators.macd", "fast", 12),
        ("indicators.macd", "slow", 26),
        ("indicators.macd", "signal", 9),
        ("indicators.bollinger_bands", "num_std", 2.0),
        ("backtest.run", "initial_capital", 100_000.0),
        ("backtest.run", "fill", "close"),
    ],
)
def test_documented_defaults(function: str, keyword: str, default: object) -> None:
    module, name = function.split(".")
    fn = getattr(importlib.import_module(f"quantcore.{module}"), name)
    assert inspect.signature(fn).parameters[keyword].default == default
