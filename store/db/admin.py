"""Schema administration as library calls: upgrade, current revision, drift check.

The CLI's ``transcript-store db upgrade | current | check`` call these; each opens its own
engine on the URL (default: ``TRANSCRIPT_STORE_URL``, else the user's SQLite file) and
releases it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from store.db import migrate
from store.db.engine import create_store_engine, default_url, redact_url
from store.errors import DatabaseError

__all__ = ["SchemaStatus", "check_database", "database_status", "downgrade_database",
           "upgrade_database"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SchemaStatus:
    """Where a database's schema is: its revision (``None`` when never migrated) and head."""

    url: str
    current: str | None
    head: str

    @property
    def at_head(self) -> bool:
        return self.current == self.head


@contextmanager
def _engine(url: str | None, read_only: bool = False) -> Iterator[Engine]:
    engine = create_store_engine(url or default_url(), read_only=read_only)
    try:
        yield engine
    except SQLAlchemyError as exc:
        raise DatabaseError(f"{redact_url(engine.url)}: {getattr(exc, 'orig', None) or exc}"
                            ) from exc
    finally:
        engine.dispose()


def _with(url: str | None, work: Callable[[Engine], T], read_only: bool = False) -> T:
    with _engine(url, read_only) as engine:
        return work(engine)


def upgrade_database(url: str | None = None, revision: str = "head") -> SchemaStatus:
    """Upgrade the database (creating it when new) to ``revision``; returns the new status."""
    def work(engine: Engine) -> SchemaStatus:
        migrate.upgrade(engine, revision)
        return SchemaStatus(redact_url(engine.url), migrate.current(engine), migrate.head())
    return _with(url, work)


def downgrade_database(url: str | None = None, revision: str = "-1") -> SchemaStatus:
    """Downgrade the database to ``revision`` (an id, ``-N`` steps back, or ``base``: drops
    every table of the store); returns the new status. Data in dropped tables and columns is
    lost: the CLI asks first."""
    def work(engine: Engine) -> SchemaStatus:
        if migrate.current(engine) is None:
            raise DatabaseError(f"{redact_url(engine.url)} has no transcript-store schema to "
                                "downgrade")
        migrate.downgrade(engine, revision)
        return SchemaStatus(redact_url(engine.url), migrate.current(engine), migrate.head())
    return _with(url, work)


def database_status(url: str | None = None) -> SchemaStatus:
    """The database's revision next to the head this library needs."""
    def work(engine: Engine) -> SchemaStatus:
        return SchemaStatus(redact_url(engine.url), migrate.current(engine), migrate.head())
    return _with(url, work, read_only=True)  # a read: never creates the database


def check_database(url: str | None = None) -> SchemaStatus:
    """Raise ``DatabaseError`` unless the database is at head and matches the tables in code."""
    def work(engine: Engine) -> SchemaStatus:
        status = SchemaStatus(redact_url(engine.url), migrate.current(engine), migrate.head())
        if status.current is not None and not migrate.known_revision(status.current):
            raise DatabaseError(migrate.newer_database(status.current, status.url, engine))
        if not status.at_head:
            raise DatabaseError(
                f"database {status.url} is at revision {status.current or 'none'}, head is "
                f"{status.head}; run `transcript-store db upgrade`"
            )
        migrate.check(engine)
        return status
    return _with(url, work, read_only=True)
