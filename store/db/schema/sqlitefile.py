"""What the SQLite side shares without SQLAlchemy (persistence; stdlib only): the read-only
connection to a file, the stored time format, and LIKE escaping. Used by the engine set-up,
the compiled statements and the stdlib session listing (``store/db/reading/lite.py``), so that they
read the same file the same way."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from store.core.paths import expand_home

__all__ = ["SQLITE_BUSY_TIMEOUT_MS", "connect_read_only", "cwd_pattern", "escape_like",
           "open_lite", "read_time", "register_functions", "sqlite_file", "stored_time"]

#: How long a connection waits for another one's lock before "database is locked".
SQLITE_BUSY_TIMEOUT_MS = 30_000


def connect_read_only(path: Path, busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS
                      ) -> sqlite3.Connection:
    """A read-only connection to the file at ``path`` (autocommit mode: the caller begins).
    Immutable when no ``-wal`` file exists (nothing is writing: no ``-shm`` is needed, so a
    reader without write access to the folder can read)."""
    mode = "mode=ro" if Path(f"{path}-wal").exists() else "mode=ro&immutable=1"
    connection = sqlite3.connect(f"file:{quote(str(path), safe='/')}?{mode}", uri=True,
                                 timeout=busy_timeout_ms / 1000, check_same_thread=False)
    connection.isolation_level = None
    connection.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
    return connection


def stored_time(value: datetime) -> str:
    """SQLAlchemy's SQLite DATETIME storage format, for a UTC datetime."""
    value = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo is not None else value
    return value.isoformat(sep=" ", timespec="microseconds")  # years padded to 4 digits


def read_time(value: Any) -> datetime:
    """A stored time (its text, or the naive datetime SQLAlchemy made of it) as aware UTC."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:  # (stored naive: read with the offset, one object instead of two)
        return datetime.fromisoformat(value + "+00:00")
    except ValueError:  # (text that holds its own offset)
        return datetime.fromisoformat(value).replace(tzinfo=UTC)


def escape_like(text: str) -> str:
    """``text`` as a literal inside a LIKE pattern with ``ESCAPE '\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def cwd_pattern(cwd: str) -> tuple[str, str]:
    """A ``--cwd`` folder as (the folder itself, a LIKE pattern with ``\\`` escapes for the
    folders below it); trailing slashes dropped."""
    folder = cwd.rstrip("/") or "/"
    return folder, escape_like(folder if folder != "/" else "") + "/%"


@lru_cache(maxsize=64)
def _compiled_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _regexp(pattern: str | None, value: str | None) -> bool | None:
    if pattern is None or value is None:
        return None
    return _compiled_pattern(pattern).search(value) is not None


def _lower(value: str | None) -> str | None:
    return None if value is None else value.lower()


def register_functions(connection: Any) -> None:
    """The search functions an SQLite connection needs that PostgreSQL has built in:
    ``x REGEXP p`` (Python's re; the audit's regular expressions keep to the syntax both
    understand), a Unicode ``unicode_lower`` (SQLite's lower() folds ASCII only), and the exact
    JSON helpers of ``store.core.jsonexact`` (``json_at``, ``json_same``)."""
    from store.core.jsonexact import json_at, json_same  # (orjson: loaded by the first read)

    connection.create_function("regexp", 2, _regexp, deterministic=True)
    connection.create_function("unicode_lower", 1, _lower, deterministic=True)
    connection.create_function("json_at", 2, json_at, deterministic=True)
    connection.create_function("json_same", 2, json_same, deterministic=True)


def sqlite_file(url: str) -> Path | None:
    """The file of a plain SQLite file URL (``sqlite:///path``, ``sqlite+pysqlite:///path``)
    or path; ``None`` for any other form (query options, ``file:`` URIs, memory, servers)."""
    if "://" not in url:
        return expand_home(url).resolve() if url.strip() else None
    scheme, _, rest = url.partition("://")
    if scheme not in ("sqlite", "sqlite+pysqlite") or not rest.startswith("/"):
        return None
    database = rest[1:]
    if not database or "?" in database or "#" in database or database.startswith("file:") \
            or database == ":memory:":
        return None
    return expand_home(unquote(database))


def open_lite(url: str, head: Callable[[], str | None]) -> sqlite3.Connection | None:
    """A read-only stdlib connection to the SQLite file ``url`` names when it exists at
    revision ``head()``; ``None`` for anything else (the caller opens the store instead,
    which words every error). Each stdlib reader (the listing, ``store.audit.lite_usage``,
    ``store.audit.lite_search`` ...) opens its file here."""
    path = sqlite_file(url)
    if path is None or not path.is_file():
        return None
    try:
        conn = connect_read_only(path)
    except sqlite3.Error:
        return None
    try:
        found = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        wanted = head()
        if wanted is None or [row[0] for row in found] != [wanted]:
            conn.close()
            return None
    except sqlite3.Error:
        conn.close()
        return None
    return conn
