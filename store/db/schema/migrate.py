"""Migrations glue: Alembic driven from code (the only module that imports Alembic).

The scripts live in ``migrations/`` at the repository root and are packaged into the wheel as
``store._migrations``, so the same revisions run from a source checkout and from an installed
wheel. Opening a store never changes its schema silently: :func:`ensure_at_head` creates a
new, empty database at head, and raises :class:`~store.core.errors.SchemaOutOfDate` (naming the
upgrade command) for an older one, unless the caller asks to upgrade.
"""

from __future__ import annotations

import functools
import io
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, inspect

from store.core.errors import DatabaseError, SchemaOutOfDate
from store.core.logs import logger
from store.db.schema import baked
from store.db.schema.distribute import distributing_new_tables, finish_migration, prepare_migration
from store.db.schema.engine import create_store_engine, redact_url
from store.db.schema.revisions import script_location, scripted_head

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "bake",
    "check",
    "current",
    "downgrade",
    "ensure_at_head",
    "head",
    "known_revision",
    "migration_transaction",
    "newer_database",
    "script_location",
    "upgrade",
]


_log = logger(__name__)


#: Alembic's command API runs ``env.py`` through module-level proxies (``alembic.context``,
#: ``alembic.op``): two threads migrating at once clobber each other's ("KeyError: 'script'",
#: "table sessions already exists"). Every use of Alembic in this process goes through it.
_ALEMBIC = threading.RLock()

#: The PostgreSQL advisory lock (transaction-scoped) that serializes schema changes between
#: processes; SQLite uses its own write lock (``BEGIN IMMEDIATE``) on the database file.
_PG_LOCK_KEY = 0x7472_616E_7363_7270  # "transcrp"


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config(stdout=io.StringIO())  # Alembic's own chatter stays out of our output
    config.set_main_option("script_location", script_location())
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@functools.cache
def _scripts() -> Any:
    from alembic.script import ScriptDirectory

    with _ALEMBIC:
        return ScriptDirectory.from_config(_config())


@functools.cache
def head() -> str:
    """The revision this library's tables match (read from the scripts' headers without
    importing Alembic, :func:`store.db.schema.revisions.scripted_head`; a script written another
    way sends the question to Alembic)."""
    return scripted_head() or _alembic_head()


def history() -> list[tuple[str, str | None, str]]:
    """Every revision of the scripts, oldest first: (revision, down revision, its message)."""
    with _ALEMBIC:
        scripts = list(_scripts().walk_revisions())
    return [(str(script.revision), script.down_revision if isinstance(
        script.down_revision, str | None) else ",".join(script.down_revision),
             (script.doc or "").strip()) for script in reversed(scripts)]


def _alembic_head() -> str:
    heads = _scripts().get_heads()
    if len(heads) != 1:
        raise DatabaseError(f"the migration scripts have {len(heads)} heads: {heads}")
    return str(heads[0])


def _current_on(conn: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    heads = MigrationContext.configure(conn).get_current_heads()
    return str(heads[0]) if heads else None


def _has_version_table(conn: Connection) -> bool:
    """Whether ``alembic_version`` exists, asked of the catalog in one statement (as
    SQLAlchemy's ``has_table`` answers it, without building an inspector: a read-only open
    reflects nothing)."""
    if conn.dialect.name == "postgresql":
        sql = "SELECT to_regclass('alembic_version') IS NOT NULL"
    else:
        sql = ("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' "
               "AND name = 'alembic_version')")
    return bool(conn.exec_driver_sql(sql).scalar())


def current(engine: Engine) -> str | None:
    """The database's revision, ``None`` for a database that was never migrated (read from
    ``alembic_version`` as Alembic does, without importing it)."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with engine.connect() as conn:
            if not _has_version_table(conn):
                return None
            rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip()
        raise DatabaseError(f"{redact_url(engine.url)}: {reason}") from exc
    return str(rows[0][0]) if rows else None


@contextmanager
def _database_errors(engine: Engine) -> Iterator[None]:
    """Driver and Alembic failures as ``DatabaseError`` (every failure is a ``StoreError``)."""
    from alembic.util.exc import CommandError
    from sqlalchemy.exc import SQLAlchemyError

    try:
        yield
    except CommandError as exc:
        raise DatabaseError(f"{redact_url(engine.url)}: {exc}") from exc
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip()
        raise DatabaseError(f"{redact_url(engine.url)}: {reason}") from exc


@contextmanager
def migration_transaction(conn: Connection) -> Iterator[Connection]:
    """One migration run's transaction on ``conn`` (not yet in a transaction), holding the
    schema lock: an advisory lock on PostgreSQL, the database's write lock on SQLite
    (``BEGIN IMMEDIATE``), so that processes opening a new database at once create it once.

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
        conn = conn.execution_options(sqlite_begin="IMMEDIATE")
    try:
        with conn.begin():
            if not sqlite:
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_LOCK_KEY})")
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


def _run(engine: Engine, command_name: str, revision: str) -> str | None:
    from alembic import command

    if not isinstance(revision, str) or not revision.strip():
        raise DatabaseError(f"not a schema revision: {revision!r}")
    with _ALEMBIC, _database_errors(engine):
        before = current(engine)
        with engine.connect() as conn, migration_transaction(conn) as locked:
            # Citus: sequential mode, and the tables the revisions create distributed like
            # the rest when the schema is (store/db/schema/distribute.py); nothing elsewhere
            layout = prepare_migration(locked)
            with distributing_new_tables(locked, layout):
                if command_name == "upgrade":
                    _check_known(locked, engine)
                    command.upgrade(_config(locked), revision)
                else:
                    command.downgrade(_config(locked), revision)
            finish_migration(locked, layout)
        after = current(engine)
    _logged(command_name, engine, before, after)
    return after


def _logged(command_name: str, engine: Engine, before: str | None, after: str | None) -> None:
    """The operator's record of a schema change (logger ``store.db.schema.migrate``, INFO)."""
    if after != before:
        _log.info("%s %s from revision %s to %s",
                  "migrated" if command_name == "upgrade" else "downgraded",
                  redact_url(engine.url), before or "none (empty database)",
                  after or "base (no schema)")


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    """Upgrade the database to ``revision`` (default: head), in one transaction per run
    holding the schema lock (see :func:`migration_transaction`). On Citus the transaction runs
    in sequential mode and, when the schema was distributed, the tables the revisions create
    are distributed as they are created (:mod:`store.db.schema.distribute`): revisions stay plain
    Alembic scripts, written once for every backend."""
    return _run(engine, "upgrade", revision)


def downgrade(engine: Engine, revision: str) -> str | None:
    """Downgrade the database to ``revision``, like :func:`upgrade` (one transaction)."""
    return _run(engine, "downgrade", revision)


def check(engine: Engine) -> None:
    """Raise ``DatabaseError`` unless the database is at head and its tables match the code
    (Alembic's ``check``)."""
    from alembic import command
    from alembic.util.exc import AutogenerateDiffsDetected, CommandError

    before, target = current(engine), head()
    if before != target:
        if before is not None and not known_revision(before):
            raise DatabaseError(newer_database(before, redact_url(engine.url), engine))
        raise DatabaseError(
            f"database {redact_url(engine.url)} is at revision {before or 'none'}, not at head "
            f"{target}: run `transcript-store db upgrade`"
        )
    with _ALEMBIC, _database_errors(engine), engine.connect() as conn:
        try:
            command.check(_config(conn))
        except AutogenerateDiffsDetected as exc:
            raise DatabaseError(f"the database schema differs from the code: {exc}") from exc
        except CommandError as exc:
            raise DatabaseError(f"cannot check the schema: {exc}") from exc


def known_revision(revision: str) -> bool:
    from alembic.util.exc import CommandError

    try:
        return _scripts().get_revision(revision) is not None
    except CommandError:
        return False


def _library_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transcript-store")
    except PackageNotFoundError:  # pragma: no cover - run from a bare source tree
        return "unknown"


def newer_database(revision: str, shown_url: str, engine: Engine | None = None,
                   conn: Connection | None = None) -> str:
    """The message for a database at a revision this version does not know: a newer
    transcript-store made it when it holds this store's tables (upgrading the database cannot
    help; upgrading the library can), else it is another project's database."""
    try:
        if conn is not None:
            tables = set(inspect(conn).get_table_names())
        elif engine is not None:
            with engine.connect() as c:
                tables = set(inspect(c).get_table_names())
        else:
            tables = {"sessions", "messages"}
    except Exception:  # noqa: BLE001 - only the wording depends on it
        tables = set()
    if not {"sessions", "messages"} <= tables:
        return (
            f"database {shown_url} is at schema revision {revision!r}, unknown to this "
            "version: not a transcript-store database (or one written by a newer "
            "transcript-store)"
        )
    return (
        f"database {shown_url} is at schema revision {revision!r}, made by a newer "
        f"transcript-store: this one ({_library_version()}) knows revisions up to {head()}. "
        "Upgrade transcript-store to use it (`transcript-store db upgrade` cannot help)"
    )


def _check_known(conn: Connection, engine: Engine) -> None:
    before = _current_on(conn)
    if before is not None and not known_revision(before):
        raise DatabaseError(newer_database(before, redact_url(engine.url), conn=conn))


def ensure_at_head(engine: Engine, *, upgrade_if_older: bool = False) -> dict[str, Any]:
    """Make sure the database is at head: create a new one (a new SQLite file from its baked
    schema, :mod:`store.db.schema.baked`), refuse (or upgrade) an older one.

    Safe to call from many threads and processes at once on one new database: the decision
    is taken again under the schema lock (:func:`migration_transaction`), so exactly one
    creates it and the others find it at head. Returns what happened:
    ``{"before": rev | None, "after": rev, "created": bool}``.
    """
    target = head()
    before = current(engine)
    if before == target:
        return {"before": before, "after": target, "created": False}
    if before is not None and not known_revision(before):
        raise DatabaseError(newer_database(before, redact_url(engine.url), engine))
    if before is not None and not upgrade_if_older:
        raise SchemaOutOfDate(before, target, redact_url(engine.url))
    with _ALEMBIC, _database_errors(engine):
        with engine.connect() as conn, migration_transaction(conn) as locked:
            before = _current_on(locked)  # again, under the lock
            if before == target:
                return {"before": before, "after": target, "created": False}
            if before is None:
                tables = set(inspect(locked).get_table_names()) - {"alembic_version"}
                if tables:
                    raise DatabaseError(
                        f"database {redact_url(engine.url)} has tables "
                        f"({', '.join(sorted(tables)[:5])}) but no transcript-store schema "
                        "revision: not a transcript-store database"
                    )
            elif not known_revision(before):
                raise DatabaseError(newer_database(before, redact_url(engine.url), conn=locked))
            elif not upgrade_if_older:
                raise SchemaOutOfDate(before, target, redact_url(engine.url))
            # (a new SQLite file: made from what a run from empty leaves, store.db.schema.baked)
            if before is not None or locked.dialect.name != "sqlite" or not baked.create_at_head(
                    locked, target):
                from alembic import command

                command.upgrade(_config(locked), "head")
        after = current(engine)
    _logged("upgrade", engine, before, after)
    return {"before": before, "after": after, "created": before is None}


def bake(folder: Path) -> dict[str, Any]:
    """What ``head_sqlite.json`` holds (:mod:`store.db.schema.baked`): two files migrated
    from empty to head in ``folder`` by Alembic, a second apart, compared."""
    dumps: list[tuple[list[str], dict[str, dict[str, Any]]]] = []
    for run in ("a", "b"):
        if dumps:
            time.sleep(1.1)  # (so that the times made per database differ)
        path = folder / f"{run}.sqlite"
        engine = create_store_engine(f"sqlite:///{path}")
        try:
            upgrade(engine, "head")
        finally:
            engine.dispose()
        dumps.append(baked.dump(path))
    return baked.content(head(), *dumps)
