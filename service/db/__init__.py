"""Persistence: SQLAlchemy 2 async models, engine/session handling and Alembic migrations."""

from service.db.session import Database, after_commit, migrate

__all__ = ["Database", "after_commit", "migrate"]
