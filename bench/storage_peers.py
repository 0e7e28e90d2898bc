"""The peers ``bench/storage.py`` runs beside the store on the same records: the OpenAI
Agents SDK's sessions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# -- the OpenAI Agents SDK's sessions, same records, same run ------------------------------------


class SdkSide:
    """The Agents SDK's own session store (``SQLiteSession`` on SQLite, ``SQLAlchemySession``
    on PostgreSQL, psycopg async) driven from one event loop: one ``add_items`` per append,
    ``get_items`` per load, the records as items (it stores each as one JSON text)."""

    def __init__(self, label: str, make: Callable[[str], Any],
                 close: Callable[[], Any] | None = None) -> None:
        self.label = label
        self._make = make
        self._close = close
        self._sessions: dict[str, Any] = {}
        self.loop = asyncio.new_event_loop()

    def _session(self, sid: str) -> Any:
        session = self._sessions.get(sid)
        if session is None:
            session = self._sessions[sid] = self._make(sid)
        return session

    def append(self, sid: str, records: Sequence[dict[str, Any]]) -> None:
        self.loop.run_until_complete(self._session(sid).add_items(list(records)))

    def load(self, sid: str) -> list[Any]:
        return self.loop.run_until_complete(self._session(sid).get_items())  # type: ignore[no-any-return]

    def close(self) -> None:
        for session in self._sessions.values():
            closing = getattr(session, "close", None)
            if closing is not None:
                outcome = closing()
                if asyncio.iscoroutine(outcome):
                    self.loop.run_until_complete(outcome)
        if self._close is not None:
            outcome = self._close()
            if asyncio.iscoroutine(outcome):
                self.loop.run_until_complete(outcome)
        self.loop.close()


def _sdk_sqlite(path: Path) -> SdkSide | None:
    try:
        from agents import SQLiteSession
    except ImportError:
        return None
    return SdkSide("SQLiteSession", lambda sid: SQLiteSession(sid, str(path)))


def _sdk_postgres(dsn: str) -> SdkSide | None:
    try:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
        from sqlalchemy.ext.asyncio import create_async_engine
    except ImportError:
        return None
    engine = create_async_engine("postgresql+psycopg://" + dsn.split("://", 1)[1])
    return SdkSide("SQLAlchemySession",
                   lambda sid: SQLAlchemySession(sid, engine=engine, create_tables=True),
                   engine.dispose)
