"""Migrations glue: Alembic driven from code (the only module that imports Alembic).

The scripts live in ``migrations/`` at the repository root and are packaged into the wheel as
``store._migrations``, so the same revisions run from a source checkout and from an installed
wheel. Opening a store never changes its schema silently: :func:`ensure_at_head` creates a
new, empty database at head, and raises :class:`~store.errors.SchemaOutOfDate` (naming the
upgrade command) for an older one, unless the caller asks to upgrade.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, inspect

from store.db.engine import redact_url
from store.errors import DatabaseError, SchemaOutOfDate

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "check",
    "current",
    "downgrade",
    "ensure_at_head",
    "head",
    "migration_transaction",
    "script_location",
    "upgrade",
]


def script_location() -> str:
    """Where the revision scripts are: the packaged copy, else the source checkout's."""
    try:
        packaged = resources.files("store._migrations")
        if packaged.joinpath("env.py").is_file():
            return str(packaged)
    except ModuleNotFoundError:
        pass
    source = Path(__file__).resolve().parents[2] / "migrations"
    if (source / "env.py").is_file():
        return str(source)
    raise DatabaseError("the migration scripts are missing from this installation")


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config(stdout=io.StringIO())  # Alembic's own chatter stays out of our output
    config.set_main_option("script_location", script_location())
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head() -> str:
    """The revision this library's tables match."""
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(_config()).get_heads()
    if len(heads) != 1:
        raise DatabaseError(f"the migration scripts have {len(heads)} heads: {heads}")
    return str(heads[0])


def current(engine: Engine) -> str | None:
    """The database's revision, ``None`` for a database that was never migrated."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    return str(heads[0]) if heads else None


@contextmanager
def migration_transaction(conn: Connection) -> Iterator[Connection]:
    """One migration run's transaction on ``conn`` (not yet in a transaction).

    On SQLite, foreign keys are turned off for the run and checked at its end: Alembic's batch
    mode rebuilds a table by copying it and dropping the old one, and with
    ``foreign_keys=ON`` that drop cascades to every referencing row (tool calls and results
    vanished on a downgrade of 0003). ``PRAGMA foreign_key_check`` must then find nothing,
    else the whole run is rolled back with a ``DatabaseError``. (The pragma is a no-op inside
    a transaction, so it is set before the transaction begins.)
    """
    sqlite = conn.dialect.name == "sqlite"
    raw: Any = conn.connection.dbapi_connection if sqlite else None
    if sqlite:
        raw.execute("PRAGMA foreign_keys=OFF")
    try:
        with conn.begin():
            yield conn
            if sqlite:
                broken = raw.execute("PRAGMA foreign_key_check").fetchall()
                if broken:
                    table, rowid, parent, _ = broken[0]
                    raise DatabaseError(
                        f"the migration left {len(broken)} rows without their parent row "
                        f"(first: {table} rowid {rowid} -> {parent}): rolled back"
                    )
    finally:
        if sqlite:
            raw.execute("PRAGMA foreign_keys=ON")


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    """Upgrade the database to ``revision`` (default: head), in one transaction per run
    (foreign keys off during the run on SQLite, checked after: :func:`migration_transaction`).
    """
    from alembic import command

    with engine.connect() as conn, migration_transaction(conn):
        command.upgrade(_config(conn), revision)
    return current(engine)


def downgrade(engine: Engine, revision: str) -> str | None:
    """Downgrade the database to ``revision``, like :func:`upgrade` (one transaction)."""
    from alembic import command

    with engine.connect() as conn, migration_transaction(conn):
        command.downgrade(_config(conn), revision)
    return current(engine)


def check(engine: Engine) -> None:
    """Raise ``DatabaseError`` unless the database is at head and its tables match the code
    (Alembic's ``check``)."""
    from alembic import command
    from alembic.util.exc import AutogenerateDiffsDetected, CommandError

    before, target = current(engine), head()
    if before != target:
        raise DatabaseError(
            f"database {redact_url(engine.url)} is at revision {before or 'none'}, not at head "
            f"{target}: run `transcript-store db upgrade`"
        )
    with engine.connect() as conn:
        try:
            command.check(_config(conn))
        except AutogenerateDiffsDetected as exc:
            raise DatabaseError(f"the database schema differs from the code: {exc}") from exc
        except CommandError as exc:
            raise DatabaseError(f"cannot check the schema: {exc}") from exc


def _known(revision: str) -> bool:
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    try:
        return ScriptDirectory.from_config(_config()).get_revision(revision) is not None
    except CommandError:
        return False


def ensure_at_head(engine: Engine, *, upgrade_if_older: bool = False) -> dict[str, Any]:
    """Make sure the database is at head: create a new one, refuse (or upgrade) an older one.

    Returns what happened: ``{"before": rev | None, "after": rev, "created": bool}``.
    """
    before = current(engine)
    target = head()
    if before == target:
        return {"before": before, "after": target, "created": False}
    if before is None:
        tables = set(inspect(engine).get_table_names()) - {"alembic_version"}
        if tables:
            raise DatabaseError(
                f"database {redact_url(engine.url)} has tables ({', '.join(sorted(tables)[:5])})"
                " but no transcript-store schema revision: not a transcript-store database"
            )
        after = upgrade(engine)
        return {"before": None, "after": after, "created": True}
    if not _known(before):
        raise DatabaseError(
            f"database {redact_url(engine.url)} is at schema revision {before!r}, unknown to "
            "this version: not a transcript-store database (or one written by a newer "
            "transcript-store)"
        )
    if not upgrade_if_older:
        raise SchemaOutOfDate(before, target, redact_url(engine.url))
    return {"before": before, "after": upgrade(engine), "created": False}
