"""Strategies and backtests on ``quantcore.backtest``."""
