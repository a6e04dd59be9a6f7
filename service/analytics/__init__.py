"""Portfolio analytics: value history, metrics, performance, allocation, risk, technicals."""
