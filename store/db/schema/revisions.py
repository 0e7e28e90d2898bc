"""Where things are, without SQLAlchemy or Alembic (persistence; stdlib only): the default
database, the revision scripts and which one is head. Every open asks for the head revision,
and importing Alembic was most of a command-line start-up; :mod:`store.db.schema.migrate` asks
Alembic
only when the scripts' headers do not tell."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from store.core.errors import DatabaseError

__all__ = ["HEAD_REVISION", "default_url", "script_location", "scripted_head", "shipped_head"]

#: The head revision of the scripts this library ships, written out so that the stdlib readers
#: (``ReadOnlyStore``, the command line's read commands) check a file without reading the
#: scripts (3-7 ms of a read-only open). A test keeps it equal to :func:`scripted_head` and to
#: Alembic's head; a new revision script fails that test until it is moved here.
HEAD_REVISION = "0030"


def default_url() -> str:
    """``TRANSCRIPT_STORE_URL``, else an SQLite file in the user's data directory."""
    env = os.environ.get("TRANSCRIPT_STORE_URL")
    if env:
        return env
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return f"sqlite:///{Path(base) / 'transcript-store' / 'transcripts.sqlite'}"

_REVISION = re.compile(r'^revision: str = "([^"]+)"$', re.M)
_DOWN = re.compile(r'^down_revision: str \| None = (?:"([^"]+)"|None)$', re.M)


def script_location() -> str:
    """Where the revision scripts are: the packaged copy, else the source checkout's."""
    # (a path, not importlib.resources: that costs a command's start-up ~7 ms of imports)
    packaged = Path(__file__).resolve().parents[2] / "_migrations"
    if (packaged / "env.py").is_file():
        return str(packaged)
    source = Path(__file__).resolve().parents[3] / "migrations"
    if (source / "env.py").is_file():
        return str(source)
    raise DatabaseError("the migration scripts are missing from this installation")


def shipped_head() -> str:
    """:data:`HEAD_REVISION` (what the stdlib readers give ``open_lite``)."""
    return HEAD_REVISION


@functools.cache
def scripted_head() -> str | None:
    """The head revision read from the scripts' headers; ``None`` when a script is written
    another way or the scripts have several heads (then Alembic must answer)."""
    revisions: set[str] = set()
    downs: set[str] = set()
    for path in Path(script_location(), "versions").glob("*.py"):
        if path.name == "__init__.py":
            continue
        text = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text), _DOWN.search(text)
        if revision is None or down is None:
            return None
        revisions.add(revision.group(1))
        if down.group(1):
            downs.add(down.group(1))
    heads = sorted(revisions - downs)
    return heads[0] if len(heads) == 1 else None
