"""Tax figures, loss harvesting and reports (issue 6) on ``quantcore.tax``."""
