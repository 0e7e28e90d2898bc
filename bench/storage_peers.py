"""The peers ``bench/storage.py`` runs beside the store on the same records: the OpenAI
Agents SDK's sessions, and LangChain's ``SQLChatMessageHistory`` (the ``bench`` extra)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol


class Peer(Protocol):
    """What the benchmark drives: one append of records, one load, by session id."""

    label: str

    def append(self, sid: str, records: Sequence[dict[str, Any]]) -> None: ...

    def load(self, sid: str) -> list[Any]: ...

    def close(self) -> None: ...


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
    return SdkSide("SDK SQLiteSession", lambda sid: SQLiteSession(sid, str(path)))


def _sdk_postgres(dsn: str) -> SdkSide | None:
    try:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
        from sqlalchemy.ext.asyncio import create_async_engine
    except ImportError:
        return None
    engine = create_async_engine("postgresql+psycopg://" + dsn.split("://", 1)[1])
    return SdkSide("SDK SQLAlchemySession",
                   lambda sid: SQLAlchemySession(sid, engine=engine, create_tables=True),
                   engine.dispose)


# -- LangChain's SQLChatMessageHistory, same records, same run -----------------------------------


class LangChainSide:
    """``langchain_community``'s ``SQLChatMessageHistory`` (one table of JSON messages, a
    SQLAlchemy engine: pysqlite on SQLite, psycopg on PostgreSQL), as its docs use it: one
    history per session, ``add_messages`` per append, ``.messages`` per load. The records are
    turned into LangChain messages before the timing (``convert_to_messages``, once per
    record): what an application using LangChain already holds."""

    label = "LangChain SQLChatMessageHistory"

    def __init__(self, url: str) -> None:
        from langchain_community.chat_message_histories import SQLChatMessageHistory
        from langchain_core.messages import convert_to_messages
        from sqlalchemy import create_engine

        self._engine = create_engine(url)
        self._history = SQLChatMessageHistory
        self._convert = convert_to_messages
        self._histories: dict[str, Any] = {}
        self._converted: dict[tuple[int, ...], list[Any]] = {}

    def _of(self, sid: str) -> Any:
        history = self._histories.get(sid)
        if history is None:
            history = self._histories[sid] = self._history(sid, connection=self._engine)
        return history

    def prepare(self, records: Sequence[dict[str, Any]]) -> list[Any]:
        """The records as LangChain messages (cached: done once, outside the timing)."""
        key = tuple(map(id, records))  # the records live as long as the run
        if key not in self._converted:
            self._converted[key] = self._convert(list(records))
        return self._converted[key]

    def append(self, sid: str, records: Sequence[dict[str, Any]]) -> None:
        self._of(sid).add_messages(self.prepare(records))

    def load(self, sid: str) -> list[Any]:
        return list(self._of(sid).messages)

    def close(self) -> None:
        self._engine.dispose()


def _langchain(url: str) -> LangChainSide | None:
    try:
        return LangChainSide(url)
    except ImportError:
        return None


def _prepare(peer: Peer, records: list[dict[str, Any]]) -> None:
    """What a peer turns the records into before it can store them, done before the timing."""
    prepare = getattr(peer, "prepare", None)
    if prepare is not None:
        prepare(records)


def _peer_targets(sdk: str, langchain: str) -> dict[str, str]:
    """The peers' writer targets, for the peers whose packages are installed."""
    import importlib.util

    found = {}
    if importlib.util.find_spec("agents") is not None:
        found["sdk"] = sdk
    if importlib.util.find_spec("langchain_community") is not None:
        found["langchain"] = langchain
    return found
