"""Strategies and backtests (issue 6) on ``quantcore.backtest``."""
