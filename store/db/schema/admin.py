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
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from store.core.errors import DatabaseError, DistributionError
from store.db.reading.sizes import ObjectSize, object_sizes
from store.db.schema import migrate
from store.db.schema.distribute import (
    DistributionReport,
    DistributionState,
    distribute,
    distribution_state,
)
from store.db.schema.engine import create_store_engine, default_url, redact_url

__all__ = [
    "DatabaseSizes",
    "ObjectSize",
    "Revision",
    "SchemaStatus",
    "check_database",
    "database_sizes",
    "database_status",
    "distribute_database",
    "downgrade_database",
    "schema_history",
    "upgrade_database",
]


@dataclass(frozen=True, slots=True)
class Revision:
    """A revision of the schema: its id, the one before it and what it does."""

    revision: str
    down_revision: str | None
    message: str


def schema_history() -> list[Revision]:
    """Every schema revision this library ships, oldest first (``transcript-store db
    history``; compare with :func:`database_status` for where a database is)."""
    return [Revision(*entry) for entry in migrate.history()]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SchemaStatus:
    """Where a database's schema is: its revision (``None`` when never migrated) and head."""

    url: str
    current: str | None
    head: str
    #: the Citus layout of the tables; ``None`` on SQLite and on PostgreSQL without Citus
    distribution: DistributionState | None = None

    @property
    def at_head(self) -> bool:
        return self.current == self.head

    @property
    def distributed(self) -> bool:
        """The schema is distributed by session on Citus (``db distribute`` ran)."""
        return self.distribution is not None and self.distribution.distributed

    def describe_distribution(self) -> str | None:
        """One line on the Citus layout, ``None`` off Citus."""
        return None if self.distribution is None else self.distribution.describe()


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


def _status(engine: Engine) -> SchemaStatus:
    with engine.connect() as conn:
        layout = distribution_state(conn)
    return SchemaStatus(redact_url(engine.url), migrate.current(engine), migrate.head(), layout)


def upgrade_database(url: str | None = None, revision: str = "head") -> SchemaStatus:
    """Upgrade the database (creating it when new) to ``revision``; returns the new status.
    On a schema distributed on Citus the revisions run in Citus' sequential mode and the
    tables they create are distributed too (``store.db.schema.migrate``)."""
    def work(engine: Engine) -> SchemaStatus:
        migrate.upgrade(engine, revision)
        return _status(engine)
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
    """The database's revision next to the head this library needs (and its Citus layout)."""
    return _with(url, _status, read_only=True)  # a read: never creates the database


def distribute_database(url: str | None = None, *,
                        shard_count: int | None = None) -> DistributionReport:
    """Distribute the store by session on a Citus coordinator (``transcript-store db
    distribute``): see :mod:`store.db.schema.distribute`. Idempotent; raises
    :class:`~store.core.errors.DistributionError` naming the problem when the database cannot be
    distributed (no Citus, a worker, no workers, workers missing ``pg_trgm``, not at head).
    ``shard_count`` defaults to :data:`~store.db.schema.distribute.DEFAULT_SHARD_COUNT`."""
    target = url or default_url()
    backend = _backend(target)
    if backend != "postgresql":  # refused before any engine exists: no SQLite file is created
        raise DistributionError(
            "not_citus", f"{redact_url(target)} is {backend}: only a PostgreSQL server with "
            "the Citus extension (a Citus coordinator) can be distributed")

    def work(engine: Engine) -> DistributionReport:
        status = _status(engine)
        return distribute(engine, status.url, shard_count=shard_count,
                          revision=(status.current, status.head))
    return _with(target, work)


def _backend(url: str) -> str:
    try:
        return make_url(url).get_backend_name()
    except Exception:
        return "not a database URL"


def check_database(url: str | None = None) -> SchemaStatus:
    """Raise ``DatabaseError`` unless the database is at head and matches the tables in code."""
    def work(engine: Engine) -> SchemaStatus:
        status = _status(engine)
        if status.current is not None and not migrate.known_revision(status.current):
            raise DatabaseError(migrate.newer_database(status.current, status.url, engine))
        if not status.at_head:
            raise DatabaseError(
                f"database {status.url} is at revision {status.current or 'none'}, head is "
                f"{status.head}; run `transcript-store db upgrade`"
            )
        migrate.check(engine)
        if status.distribution is not None and status.distribution.partly:
            raise DatabaseError(f"database {status.url} is {status.distribution.describe()}")
        return status
    return _with(url, work, read_only=True)


@dataclass(frozen=True, slots=True)
class DatabaseSizes:
    """Where a database's size goes (``transcript-store db stats``): each table and index."""

    url: str
    objects: list[ObjectSize]

    @property
    def total(self) -> int:
        """Every object's bytes, free pages included: the database's pages. SQLite's
        write-ahead log is listed beside them (kind ``wal``, its size on disk) but not
        counted: until a checkpoint folds it in, the pages it holds are counted already."""
        return sum(o.bytes for o in self.objects if o.kind != "wal")

    def table_total(self, table: str) -> int:
        """A table's bytes with its indexes (and, for an FTS5 table, its shadow tables)."""
        return sum(o.bytes for o in self.objects if o.table == table)


def database_sizes(url: str | None = None) -> DatabaseSizes:
    """The size of every table and index of the database, largest first (see
    :mod:`store.db.reading.sizes`). A read: opens read-only, never creates the database."""
    def work(engine: Engine) -> DatabaseSizes:
        with engine.connect() as conn:
            return DatabaseSizes(redact_url(engine.url), object_sizes(conn))
    return _with(url, work, read_only=True)
