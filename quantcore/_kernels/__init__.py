"""Numba kernels: ``@njit(cache=True)``, NumPy arrays and scalars in and out, nothing else.

One layout for every domain: a domain's kernels live in ``<domain>.py``, and
when they outgrow one module (about 600 lines) in ``<domain>_<part>.py`` beside it,
so that the file name says both the domain and what the part holds:

=================  ===========================================================
returns            ``returns.py``
risk               ``risk.py``, ``risk_tail.py`` (tail quantiles: selection, VaR, ES)
drawdown           ``drawdown.py``
metrics            ``metrics.py``
rolling            ``rolling.py``
overfitting        ``overfitting.py``
portfolio          ``portfolio.py``
indicators         ``indicators_base.py`` (shared machinery),
                   ``indicators_ma.py`` (SMA, EMA, WMA, RSI, MACD, Bollinger, ROC),
                   ``indicators_range.py`` (stochastic, Williams %R, CCI),
                   ``indicators_bars.py`` (ATR, ADX, OBV, VWAP)
backtest           ``backtest.py`` (simulation, bar step, online metrics),
                   ``backtest_orders.py`` (order and fill rules),
                   ``backtest_signals.py`` (built-in strategies' signals),
                   ``backtest_rebalance.py`` (target weights),
                   ``backtest_sweep.py`` (fused sweeps),
                   ``backtest_sweep_fast.py`` (moving-average fast path),
                   ``backtest_sweep_stops.py`` (stop grids),
                   ``backtest_sweep_user.py`` (a user's ``@njit`` strategy)
tax                ``tax.py`` (the matcher's entry points),
                   ``tax_fixed.py`` (int64 fixed point, calendar),
                   ``tax_table.py`` (the lot table and its lists),
                   ``tax_lots.py`` (lot relief, wash sales of one group),
                   ``tax_actions.py`` (corporate actions on open lots),
                   ``tax_match.py`` (all groups, in parallel),
                   ``tax_reports.py`` (report and harvesting sums),
                   ``tax_splice.py`` (merging re-matched symbols' records)
=================  ===========================================================

``tiles.py`` is not a domain: it reads a panel in its memory order for the
analytics kernels (returns, risk, drawdown, metrics, rolling).
"""
