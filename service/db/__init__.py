"""Persistence: SQLAlchemy 2 async models, engine/session handling and Alembic migrations."""

from service.db.session import Database, migrate

__all__ = ["Database", "migrate"]
