"""What the SQLite side shares without SQLAlchemy (persistence; stdlib only): the read-only
connection to a file, the stored time format, and LIKE escaping. Used by the engine set-up,
the compiled statements and the stdlib session listing (``store/db/reading/lite.py``), so that they
read the same file the same way."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = ["SQLITE_BUSY_TIMEOUT_MS", "connect_read_only", "cwd_pattern", "escape_like",
           "read_time", "stored_time"]

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
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def escape_like(text: str) -> str:
    """``text`` as a literal inside a LIKE pattern with ``ESCAPE '\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def cwd_pattern(cwd: str) -> tuple[str, str]:
    """A ``--cwd`` folder as (the folder itself, a LIKE pattern with ``\\`` escapes for the
    folders below it); trailing slashes dropped."""
    folder = cwd.rstrip("/") or "/"
    return folder, escape_like(folder if folder != "/" else "") + "/%"
