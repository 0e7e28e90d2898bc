"""The keyed digests of secrets, beside the search index (persistence; revision 0011).

The search catch-up (``store/db/index/search_index.py``) indexes redacted text and hands the secrets
it found here: one ``call_secrets`` row per (item, secret) with the detector's kind and
``HMAC-SHA256(key, value)`` (``store.trust.secrets``), the key being the store's own
(``trust_keys``, made at random by revision 0011). :func:`calls_with_secret` answers "where
did this leaked value appear?" by computing the same digest; :func:`secrets_summary` counts
secrets per session and kind without ever reading a value.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from store.trust.secrets import secret_digest

if TYPE_CHECKING:  # (SQLAlchemy loads with the statements that need it, not with the rows)
    from sqlalchemy import Connection, Engine

__all__ = ["SecretRow", "calls_with_secret", "insert_secrets", "secret_rows",
           "secrets_summary", "store_key"]

#: (session_id, position, item, item_index, digest, kind, call_position, call_index)
SecretRow = tuple[str, int, int, int, str, str, int | None, int | None]
KEY_NAME = "secret_index"

_KEYS: weakref.WeakKeyDictionary[Engine, bytes] = weakref.WeakKeyDictionary()


def store_key(conn: Connection) -> bytes:
    """The store's key for secret digests (read once per engine)."""
    known = _KEYS.get(conn.engine)
    if known is None:
        from sqlalchemy import select

        from store.db.schema.tables import trust_keys

        value = conn.execute(select(trust_keys.c.key).where(trust_keys.c.name == KEY_NAME)
                             ).scalar()
        known = bytes.fromhex(value) if value else b""
        if value:
            _KEYS[conn.engine] = known
    return known


def secret_rows(key: bytes, sid: str, position: int, item: int, index: int,
                call_position: int | None, call_index: int | None,
                found: Iterable[tuple[str, str]]) -> Iterable[SecretRow]:
    for kind, value in found:
        yield (sid, position, item, index, secret_digest(key, value), kind, call_position,
               call_index)


def insert_secrets(cursor: Any, pg: bool, rows: Iterable[SecretRow]) -> None:
    """Insert the catch-up's secret rows on its driver cursor (after its items)."""
    unique: dict[tuple[Any, ...], SecretRow] = {}
    for row in rows:
        unique.setdefault(row[:5], row)  # one row per item and secret (the primary key)
    if not unique:
        return
    mark = "%s" if pg else "?"
    cursor.executemany(
        "INSERT INTO call_secrets (session_id, position, item, item_index, digest, kind, "
        f"call_position, call_index) VALUES ({', '.join([mark] * 8)})", list(unique.values()))


def calls_with_secret(conn: Connection, value: str) -> list[tuple[str, int, int]]:
    """(session, position, call index) of every call whose arguments, or whose result, held
    ``value`` as a detected secret (through its keyed digest; indexed calls only: the caller
    catches the index up first)."""
    from sqlalchemy import select

    from store.db.schema.tables import call_secrets

    digest = secret_digest(store_key(conn), value)
    rows = conn.execute(
        select(call_secrets.c.session_id, call_secrets.c.call_position,
               call_secrets.c.call_index).distinct()
        .where(call_secrets.c.digest == digest, call_secrets.c.call_position.is_not(None))
        .order_by(call_secrets.c.session_id, call_secrets.c.call_position,
                  call_secrets.c.call_index)).all()
    return [(str(s), int(p), int(i)) for s, p, i in rows]


def secrets_summary(conn: Connection) -> list[tuple[str, str, int, int]]:
    """(session, kind, secrets, calls) per session and kind: how many secrets of that kind
    the detectors found in the session's calls and results, and in how many calls."""
    from sqlalchemy import func, select

    from store.db.schema.tables import call_secrets

    calls = func.count(func.distinct(
        call_secrets.c.call_position * 1_000_000 + call_secrets.c.call_index))
    rows = conn.execute(
        select(call_secrets.c.session_id, call_secrets.c.kind, func.count(), calls)
        .group_by(call_secrets.c.session_id, call_secrets.c.kind)
        .order_by(call_secrets.c.session_id, call_secrets.c.kind)).all()
    return [(str(s), str(k), int(n), int(c)) for s, k, n, c in rows]
