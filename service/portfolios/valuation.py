"""Mark-to-market of positions: the math lives in :mod:`quantcore.portfolio`.

Kept as the service-side import path; see :func:`quantcore.portfolio.mark_positions`
and :func:`quantcore.portfolio.portfolio_totals` for the formulas.
"""

from __future__ import annotations

from quantcore.portfolio import PortfolioTotals, PositionMarks, mark_positions, portfolio_totals

__all__ = ["PortfolioTotals", "PositionMarks", "mark_positions", "portfolio_totals"]
