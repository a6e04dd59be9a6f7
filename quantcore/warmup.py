"""Compile the numba kernels once, ahead of the first real call: ``python -m quantcore warm``.

Every kernel is ``@njit(cache=True)``: its first call in a fresh environment compiles it
(type inference and LLVM) and writes the machine code to numba's on-disk cache; every
later process loads it from there in milliseconds. :func:`warm` makes those first calls
on small inputs of the kinds users and the services pass (a ``Series`` for one asset, a
``DataFrame`` panel), so that the installer (``make serve``, ``make test``) pays the
compile time once and a user's first call is a warm one. The finance service runs it at
start-up, before it answers ``/ready``.

Examples
--------
>>> from quantcore.warmup import warm
>>> report = warm(progress=False, only=["returns"])  # [] when this process ran it already
>>> all(name == "returns" and seconds >= 0 for name, seconds in report)
True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["GROUPS", "warm"]


def _inputs() -> dict[str, Any]:
    """Small seeded inputs: one asset (Series) and a 3-asset panel (DataFrame), 300 days."""
    rng = np.random.default_rng(0)
    days = pd.bdate_range("2020-01-01", periods=300)
    panel_returns = pd.DataFrame(rng.normal(4e-4, 0.01, (300, 3)), index=days, columns=list("ABC"))
    panel_close = 100.0 * (1.0 + panel_returns).cumprod()
    # a Series of its own, as users build one: contiguous and read-only under pandas'
    # copy-on-write (a DataFrame's column is strided, and its values get copied)
    close = pd.Series(panel_close["A"].to_numpy(copy=True), index=days, name="A")
    return {
        "days": days,
        "r": panel_returns["A"],
        "b": panel_returns["B"],
        "R": panel_returns,
        "close": close,
        "high": close * 1.01,
        "low": close * 0.99,
        "volume": pd.Series(rng.uniform(1e5, 2e5, 300), index=days),
        "C": panel_close,
    }


def _as_numpy(x: dict[str, Any]) -> dict[str, Any]:
    """The same inputs as plain writable arrays (a ``Series``' values are read-only under
    pandas' copy-on-write, and numba compiles read-only and writable arrays apart)."""
    out = dict(x)
    for key, value in x.items():
        if isinstance(value, pd.Series):
            out[key] = value.to_numpy(copy=True)
        elif isinstance(value, pd.DataFrame):
            out[key] = np.asfortranarray(value.to_numpy(copy=True))
    return out


def _returns(x: dict[str, Any]) -> None:
    import quantcore.returns as ret

    for data in (x["close"], x["C"]):
        ret.simple_returns(data)
        ret.log_returns(data)
    for data in (x["r"], x["R"]):
        ret.cumulative_returns(data)
        ret.annualized_return(data)
        ret.total_return(data)
    ret.time_weighted_return(x["close"], x["close"] * 0.0)


def _risk(x: dict[str, Any]) -> None:
    import quantcore.risk as risk

    for data, bench in ((x["r"], x["b"]), (x["R"], x["b"])):
        risk.volatility(data)
        risk.downside_deviation(data)
        for method in ("historical", "parametric", "cornish_fisher"):
            risk.value_at_risk(data, level=0.99, method=method)
            risk.expected_shortfall(data, level=0.99, method=method)
        risk.beta(data, bench)
        risk.alpha(data, bench)
        risk.correlation(data, bench)
        risk.tracking_error(data, bench)


def _drawdown(x: dict[str, Any]) -> None:
    import quantcore.drawdown as dd

    for data in (x["r"], x["R"]):
        dd.drawdown_series(data)
        dd.max_drawdown(data)
        dd.drawdown_periods(data)


def _metrics(x: dict[str, Any]) -> None:
    import quantcore.metrics as metrics

    for data in (x["r"], x["R"]):
        metrics.summary(data)
        metrics.summary(data, x["b"])
        metrics.sharpe_ratio(data)
        metrics.sortino_ratio(data)
        metrics.calmar_ratio(data)
        metrics.omega_ratio(data)
        metrics.tail_ratio(data)
        metrics.stability_of_timeseries(data)
        metrics.information_ratio(data, x["b"])


def _rolling(x: dict[str, Any]) -> None:
    import quantcore.rolling as rolling

    for data in (x["r"], x["R"]):
        rolling.rolling_volatility(data, 20)
        rolling.rolling_sharpe(data, 20)
        rolling.rolling_beta(data, x["b"], 20)


def _indicators(x: dict[str, Any]) -> None:
    import quantcore.indicators as ind

    high, low, close, volume = x["high"], x["low"], x["close"], x["volume"]
    for data in (close, x["C"]):
        ind.sma(data, 20)
        ind.ema(data, 20)
        ind.wma(data, 20)
        ind.rsi(data, 14)
        ind.roc(data, 10)
        ind.macd(data)
        ind.bollinger_bands(data, 20)
    for window in (14,):
        ind.atr(high, low, close, window)
        ind.adx(high, low, close, window)
        ind.williams_r(high, low, close, window)
    ind.cci(high, low, close, 20)
    ind.stochastic(high, low, close)
    ind.obv(close, volume)
    ind.vwap(high, low, close, volume)


def _backtest(x: dict[str, Any]) -> None:
    import quantcore.backtest as bt

    close = x["close"]
    for strategy, params in (
        ("buy_hold", {}),
        ("moving_average", {"short_window": 10, "long_window": 50}),
        ("momentum", {}),
        ("mean_reversion", {}),
        ("rsi", {}),
    ):
        bt.run_strategy(close, strategy, **params, fees=0.001)
    bt.run_strategy(close, "moving_average", short_window=10, long_window=50, benchmark=x["C"]["B"])
    bt.run_strategy(close, "moving_average", short_window=10, long_window=50,
                    sl_stop=0.05, tp_stop=0.1)  # fmt: skip
    bt.sweep(close, "moving_average", {"short_window": range(5, 15), "long_window": range(20, 30)})
    bt.sweep(x["C"], "moving_average", {"short_window": [5, 10], "long_window": [20, 40]})
    bt.sweep(close, "moving_average", {"short_window": [5, 10], "long_window": [20, 40],
                                       "sl_stop": [0.05, 0.1]})  # fmt: skip
    bt.sweep(close, "rsi", {"window": [10, 14]})
    bt.rebalance(x["C"], pd.Series({"A": 0.5, "B": 0.3, "C": 0.2}), every=21)
    # closes as a read-only (n, 1) panel, as the service's backtest worker passes them
    values = np.ascontiguousarray(x["C"].to_numpy()[:, :1])
    values.flags.writeable = False
    for strategy in ("buy_hold", "moving_average", "momentum", "mean_reversion", "rsi"):
        bt.run_strategy(values, strategy, benchmark=values[:, 0])


def _ledger(x: dict[str, Any]) -> pd.DataFrame:
    """A small ledger of every common row kind, in the layout of :func:`quantcore.tax.match_lots`."""
    rows = [
        ("A", "2020-01-02", "buy", 10.0, 100.0, 1.0),
        ("A", "2020-03-02", "buy", 5.0, 90.0, 1.0),
        ("B", "2020-03-02", "buy", 20.0, 50.0, 1.0),
        ("A", "2020-06-01", "dividend", 15.0, 0.5, 0.0),
        ("A", "2020-09-01", "sell", 8.0, 80.0, 1.0),
        ("A", "2020-09-15", "buy", 4.0, 82.0, 1.0),
        ("B", "2021-06-01", "sell", 20.0, 60.0, 1.0),
    ]
    frame = pd.DataFrame(rows, columns=["symbol", "date", "type", "quantity", "price", "fees"])
    frame["date"] = pd.to_datetime(frame["date"])
    return frame


def _tax(x: dict[str, Any]) -> None:
    import pyarrow as pa

    import quantcore.tax as tax

    ledger = _ledger(x)
    for method in ("fifo", "lifo", "hifo", "average"):
        lots = tax.match_lots(ledger, method=method)
    exact = {c: pd.ArrowDtype(pa.decimal128(38, 8)) for c in ("quantity", "price", "fees")}
    # Arrow decimals and read-only arrays, as the service reads and shares a cached ledger;
    # with one sale too: a one-record field is contiguous, which numba types apart
    for rows in (ledger, ledger.iloc[[0, 4]]):
        shared = tax.match_lots(rows.astype(exact))
        for value in vars(shared).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
        tax.tax_summary(shared, 2020)
        tax.form_8949(shared, 2020)
        tax.schedule_d(shared, 2020)
        tax.form_1099_div(shared, 2020)
        tax.harvest_opportunities(shared, pd.Series({"A": 70.0, "B": 40.0}), "2020-12-31")
    tax.tax_summary(lots, 2020)
    tax.form_8949(lots, 2020)
    tax.schedule_d(lots, 2020)
    tax.form_1099_div(lots, 2020)
    tax.wash_sale_adjustments(lots)
    tax.harvest_opportunities(lots, pd.Series({"A": 70.0, "B": 40.0}), "2020-12-31")
    _tax_splice(ledger)


def _tax_splice(ledger: pd.DataFrame) -> None:
    """A buy of ``A`` added at the end, spliced into the old ledger (the splice's kernels
    take read-only views, so a fresh ledger compiles what the service's frozen one uses)."""
    import quantcore.tax as tax
    from quantcore.tax.splice import grouped, splice_ledger

    added = pd.DataFrame(
        [("A", pd.Timestamp("2021-07-01"), "buy", 3.0, 70.0, 1.0)], columns=ledger.columns
    )
    new = pd.concat([ledger, added], ignore_index=True)
    is_a = (new["symbol"] == "A").to_numpy()
    old_to_new = np.where(is_a[: len(ledger)], -1, np.arange(len(ledger)))
    old = grouped(ledger)
    part = tax.match_lots(new[is_a].reset_index(drop=True))
    spliced = splice_ledger(old, part, {"A"}, old_to_new, np.flatnonzero(is_a))
    spliced.year(2021)  # one year's pieces in sell order, and the parts' gains
    spliced.yearly_gains()
    tax.form_8949(spliced, 2021).columns()  # the report's form from the parts, packed as stored


def _portfolio(x: dict[str, Any]) -> None:
    import quantcore.cash as cash
    import quantcore.portfolio as portfolio
    import quantcore.valuation as valuation

    ledger = _ledger(x)
    portfolio.ledger_positions(ledger)
    portfolio.ledger_holdings(ledger, x["days"])
    marks = portfolio.mark_positions([10.0, 2.0], [900.0, 100.0], [100.0, 51.0], [1.5, 0.2],
                                     rate=[1.1, 1.0], previous_rate=[1.08, 1.0])  # fmt: skip
    portfolio.portfolio_totals(np.array([0, 0]), 1, marks, np.array([10.0]), np.array([0.0]))
    cash.cash_flows(ledger)
    cash.cash_balances(ledger)
    close = x["C"].to_numpy()
    kind = np.array([valuation.DEPOSIT, valuation.BUY, valuation.BUY, valuation.SELL])
    history = valuation.ledger_value_history(
        np.array([0, 0, 5, 100]),
        np.array([-1, 0, 1, 0]),
        kind,
        np.array([1.0, 5.0, 3.0, 2.0]),
        np.array([5000.0, 100.0, 100.0, 110.0]),
        np.zeros(4),
        close,
    )
    dates = x["days"].to_numpy().astype("datetime64[D]")
    valuation.ledger_money_weighted_return(
        dates, history.inflow, history.outflow, float(history.value[-1])
    )
    valuation.interval_returns(np.cumsum(history.returns), valuation.period_ends(dates, "1m"))
    valuation.infer_periods_per_year(dates)
    weights = valuation.position_weights(np.array([10.0, 30.0, 60.0]))[1]
    valuation.herfindahl_index(weights)


#: Groups run a second time on plain writable NumPy inputs (what the services pass).
_ARRAY_GROUPS = frozenset({"returns", "risk", "drawdown", "metrics", "rolling", "indicators"})

#: name -> function making the first calls of one domain (run in this order).
GROUPS: dict[str, Callable[[dict[str, Any]], None]] = {
    "returns": _returns,
    "risk": _risk,
    "drawdown": _drawdown,
    "metrics": _metrics,
    "rolling": _rolling,
    "indicators": _indicators,
    "backtest": _backtest,
    "tax": _tax,
    "portfolio": _portfolio,
}


#: Groups already run in this process: a second :func:`warm` skips them (nothing to load).
_loaded: set[str] = set()


def warm(*, progress: bool = True, only: Iterable[str] | None = None) -> list[tuple[str, float]]:
    """Make the first call of every kernel users reach, so numba compiles and caches it.

    A group runs once per process; calling :func:`warm` again returns only what it ran.

    Parameters
    ----------
    progress : bool, default True
        Show a progress bar (tqdm) on standard error.
    only : iterable of str, optional
        Names of :data:`GROUPS` to run (default: all).

    Returns
    -------
    list of (str, float)
        Each group run and its wall time in seconds: compile time on an empty cache,
        load time on a warm one.
    """
    from tqdm.auto import tqdm

    wanted = set(GROUPS) if only is None else set(only)
    names = [n for n in GROUPS if n in wanted and n not in _loaded]
    x = _inputs() if names else {}
    report: list[tuple[str, float]] = []
    bar = tqdm(names, desc="compiling kernels", unit="group", disable=not progress)
    for name in bar:
        bar.set_postfix_str(name)
        start = time.perf_counter()
        GROUPS[name](x)
        if name in _ARRAY_GROUPS:
            GROUPS[name](_as_numpy(x))
        _loaded.add(name)
        report.append((name, time.perf_counter() - start))
    bar.close()
    return report
