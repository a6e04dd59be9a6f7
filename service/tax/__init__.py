"""Tax figures, loss harvesting and reports on ``quantcore.tax``."""
