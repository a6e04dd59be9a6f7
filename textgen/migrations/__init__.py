"""Alembic migrations of the textgen store (see :mod:`textgen.store_schema`)."""

__all__: list[str] = []
