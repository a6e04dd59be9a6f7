"""The public surface of quantcore: the names the issues spell out are contracts.

Adding a name is fine (add it here too); removing or renaming one fails this test.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import quantcore

CONTRACT: dict[str, set[str]] = {
    "returns": {
        "simple_returns", "log_returns", "cumulative_returns", "total_return",
        "annualized_return", "time_weighted_return", "money_weighted_return",
    },
    "risk": {
        "volatility", "value_at_risk", "expected_shortfall", "beta", "alpha",
        "correlation", "downside_deviation", "tracking_error",
    },
    "rolling": {"rolling_volatility", "rolling_sharpe", "rolling_beta"},
    "drawdown": {"drawdown_series", "max_drawdown", "drawdown_periods"},
    "metrics": {
        "sharpe_ratio", "sortino_ratio", "calmar_ratio", "omega_ratio", "information_ratio",
        "stability_of_timeseries", "tail_ratio", "summary",
    },
    "overfitting": {"probability_of_backtest_overfitting", "deflated_sharpe_ratio"},
    "valuation": {
        "ledger_value_history", "ledger_money_weighted_return", "infer_periods_per_year",
        "period_ends", "interval_returns", "position_weights", "herfindahl_index", "group_weights",
    },
    "cash": {"cash_balances", "cash_flows", "corporate_action_cash", "first_overdraft", "row_amounts"},
    "portfolio": {"mark_positions", "portfolio_totals", "ledger_positions", "ledger_holdings"},
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
    "accounts": {"combine_accounts", "AccountValues"},
    "income": {"sum_by_period", "period_labels"},
    "warmup": {"warm", "GROUPS"},
}  # fmt: skip

#: Renamed names: old module.name -> the one home. They keep working and warn.
DEPRECATED: dict[str, str] = {
    "risk.rolling_volatility": "rolling.rolling_volatility",
    "risk.rolling_beta": "rolling.rolling_beta",
    "metrics.rolling_sharpe": "rolling.rolling_sharpe",
    "metrics.probability_of_backtest_overfitting": "overfitting.probability_of_backtest_overfitting",
    "metrics.deflated_sharpe_ratio": "overfitting.deflated_sharpe_ratio",
    "valuation.money_weighted": "valuation.ledger_money_weighted_return",
    "valuation.periods_per_year": "valuation.infer_periods_per_year",
}


def _resolve(dotted: str) -> object:
    module, name = dotted.split(".")
    return getattr(importlib.import_module(f"quantcore.{module}"), name)


@pytest.mark.parametrize(("old", "new"), sorted(DEPRECATED.items()))
def test_deprecated_alias_warns_and_is_the_new_function(old: str, new: str) -> None:
    module, name = old.split(".")
    mod = importlib.import_module(f"quantcore.{module}")
    assert name not in mod.__all__
    with pytest.warns(DeprecationWarning, match=f"quantcore.{new}"):
        got = _resolve(old)
    assert got is _resolve(new)
    with pytest.warns(DeprecationWarning):  # the from-import spelling warns too
        exec(f"from quantcore.{module} import {name}", {})


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


ROOT = Path(quantcore.__file__).resolve().parent.parent


def _public_modules() -> set[str]:
    """Every module or package directly under quantcore/ whose name has no leading underscore."""
    return {
        info.name for info in pkgutil.iter_modules(quantcore.__path__) if not info.name.startswith("_")
    }


def test_every_public_module_is_exported_and_reachable() -> None:
    public = _public_modules()
    assert public == set(quantcore.__all__) - {"__version__"}
    for name in sorted(public):
        assert getattr(quantcore, name) is importlib.import_module(f"quantcore.{name}")
        assert name in dir(quantcore)


def test_every_public_module_is_in_the_api_reference() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for name in sorted(_public_modules()):
        page = ROOT / "docs" / "api" / f"{name}.md"
        assert page.is_file(), page
        assert f"::: quantcore.{name}" in page.read_text(), page
        assert f"- quantcore.{name}: api/{name}.md" in nav, name
        assert f"]({name}.md)" in (ROOT / "docs" / "api" / "index.md").read_text(), name


#: Public functions whose result is any JSON value (nested dicts, lists, scalars).
RETURNS_ANY = {"tax.export.jsonable"}


def _exported_functions() -> list[tuple[str, object]]:
    """Every function in the ``__all__`` of each public module and documented subpackage module."""
    modules = [
        *sorted(_public_modules()),
        "backtest.engine", "backtest.strategies", "backtest.sweep", "backtest.validation",
        "tax.export", "tax.harvesting", "tax.lots", "tax.reports",
    ]  # fmt: skip
    found = []
    for name in modules:
        mod = importlib.import_module(f"quantcore.{name}")
        for attr in mod.__all__:
            obj = getattr(mod, attr)
            if inspect.isfunction(obj) and obj.__module__.startswith("quantcore"):
                found.append((f"{name}.{attr}", obj))
    return found


def test_every_public_function_has_a_typed_return() -> None:
    untyped = []
    for dotted, fn in _exported_functions():
        ret = inspect.signature(fn).return_annotation  # a string: the modules defer annotations
        if ret is inspect.Signature.empty or (str(ret) == "Any" and dotted not in RETURNS_ANY):
            untyped.append(dotted)
    assert not untyped, untyped


def _private_imports() -> list[str]:
    """``from quantcore.x import _y`` where ``x`` is a public module: a private name of another module."""
    found = []
    for path in sorted((ROOT / "quantcore").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("quantcore")):
                continue
            if any(part.startswith("_") for part in node.module.split(".")):
                continue  # a private module (_validation, _kernels...): shared helpers by design
            for alias in node.names:
                target = ROOT.joinpath(*node.module.split("."), alias.name)
                if target.with_suffix(".py").is_file() or target.is_dir():
                    continue  # a module (``from quantcore import _figures``), not a name in one
                if alias.name.startswith("_"):
                    found.append(f"{path.relative_to(ROOT)}: from {node.module} import {alias.name}")
    return found


def test_no_module_imports_another_public_modules_private_names() -> None:
    assert _private_imports() == []
