"""Portfolios and their positions (``/api/portfolios/``)."""
