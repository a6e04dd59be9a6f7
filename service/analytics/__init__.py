"""Portfolio analytics (issue 6): value history, metrics, performance, allocation, risk, technicals."""
