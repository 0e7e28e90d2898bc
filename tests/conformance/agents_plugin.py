"""A pytest plugin for the OpenAI Agents SDK's own test suite (loaded by scripts/conformance):
the SDK's sessions are replaced by :class:`~store.integrations.openai_agents.TranscriptStoreSession`
before the SDK's test modules import them.

Substituted names (each keeps its constructor's signature; the store under it is a fresh SQLite
file per ``:memory:`` database, or the file the test names):

* ``agents.SQLiteSession`` / ``agents.memory.SQLiteSession``;
* ``SQLAlchemySession.from_url`` (its ``.engine.dispose()`` closes the store);
* ``tests.utils.simple_session.SimpleListSession`` (its ``history=`` preloads the items).

Only the tests that construct one of them are run (see ``pytest_collection_modifyitems``).
"""

from __future__ import annotations

import inspect
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from store.integrations.openai_agents import TranscriptStoreSession

_TMP = Path(tempfile.mkdtemp(prefix="ts-conformance-"))
_NAMES = ("SQLiteSession(", "SQLAlchemySession.from_url(", "SimpleListSession(")


def _url(path: str | os.PathLike[str]) -> str:
    text = str(path)
    if text == ":memory:":
        text = str(_TMP / f"{uuid.uuid4().hex}.sqlite")
    return f"sqlite:///{text}"


class StoreSQLiteSession(TranscriptStoreSession):
    """``SQLiteSession(session_id, db_path=":memory:", session_settings=None)`` on the store."""

    def __init__(self, session_id: str, db_path: Any = ":memory:",
                 session_settings: Any = None) -> None:
        super().__init__(session_id, _url(db_path), session_settings=session_settings)


class _Engine:
    def __init__(self, session: TranscriptStoreSession) -> None:
        self._session = session

    async def dispose(self) -> None:
        self._session.close()


class StoreSQLAlchemySession(TranscriptStoreSession):
    """``SQLAlchemySession.from_url(session_id, url=..., ...)`` on the store."""

    engine: _Engine

    @classmethod
    def from_url(cls, session_id: str, *, url: str, engine_kwargs: Any = None,
                 session_settings: Any = None, **_: Any) -> StoreSQLAlchemySession:
        path = url.split(":///", 1)[1]
        session = cls(session_id, _url(path), session_settings=session_settings)
        session.engine = _Engine(session)
        return session


class StoreListSession(TranscriptStoreSession):
    """``SimpleListSession(session_id="test", history=None)`` on the store."""

    def __init__(self, session_id: str = "test", history: Any = None) -> None:
        super().__init__(session_id, _url(":memory:"))
        if history:
            self._add_items(list(history))


def _install() -> None:
    import agents
    import agents.memory

    agents.SQLiteSession = StoreSQLiteSession  # type: ignore[misc,assignment]
    agents.memory.SQLiteSession = StoreSQLiteSession  # type: ignore[misc,assignment]
    from agents.extensions.memory import sqlalchemy_session

    sqlalchemy_session.SQLAlchemySession.from_url = StoreSQLAlchemySession.from_url  # type: ignore[method-assign,assignment]
    try:
        from tests.utils import simple_session
    except ImportError:  # not the SDK's tree
        return
    simple_session.SimpleListSession = StoreListSession  # type: ignore[misc,assignment]


_install()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the tests that construct a substituted session."""
    keep, drop = [], []
    for item in items:
        function = getattr(item, "function", None)
        try:
            source = inspect.getsource(function) if function is not None else ""
        except (OSError, TypeError):
            source = ""
        (keep if any(name in source for name in _NAMES) else drop).append(item)
    items[:] = keep
    config.hook.pytest_deselected(items=drop)
