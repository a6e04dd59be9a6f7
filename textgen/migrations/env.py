"""Alembic environment of the textgen store: runs on the connection :meth:`textgen.store.Store.create_schema`
hands over (inside its schema transaction), with its own version table so it can share a database."""

from __future__ import annotations

from typing import Any

from alembic import context

from textgen.store_tables import VERSION_TABLE, metadata

__all__ = ["run"]


def run(config: Any) -> None:
    """Run the migrations Alembic asked for on the connection in ``config.attributes``."""
    connection = config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("textgen migrations run through Store.create_schema (python -m textgen serve, or "
                           "textgen.store.Store(url).create_schema())")
    context.configure(connection=connection, target_metadata=metadata, version_table=VERSION_TABLE,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


if getattr(context, "config", None) is not None:  # loaded by Alembic (a plain import does nothing)
    run(context.config)
