"""Alembic environment: runs on a connection handed over by store.db.schema.migrate, or on a URL.

``render_as_batch=True`` so that SQLite migrations can alter tables (copy-and-move); they run
with foreign keys off and are checked after (``store.db.schema.migrate.migration_transaction``), so
that rebuilding a table never cascades to the rows that refer to it.
``include_name`` leaves the objects that revision 0004 creates by raw SQL (SQLite FTS5 tables,
PostgreSQL GIN indexes; ``store/db/index/search_schema.py``) out of autogenerate's comparison.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection

from store.db.index.search_schema import include_name
from store.db.schema.engine import create_store_engine, default_url
from store.db.schema.migrate import migration_transaction
from store.db.schema.tables import metadata

config = context.config
target_metadata = metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        include_name=include_name,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    url = config.get_main_option("sqlalchemy.url") or os.environ.get(
        "TRANSCRIPT_STORE_URL", default_url()
    )
    context.configure(
        url=url, target_metadata=target_metadata, literal_binds=True, render_as_batch=True,
        include_name=include_name,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url") or default_url()
    engine = create_store_engine(url)
    try:
        # Foreign keys off on SQLite during the run, checked after (migration_transaction).
        with engine.connect() as conn, migration_transaction(conn):
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
