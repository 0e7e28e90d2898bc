"""A pytest plugin for the OpenAI Agents SDK's own test suite (loaded by scripts/conformance):
the SDK's sessions are replaced by :class:`~store.integrations.openai_agents.TranscriptStoreSession`
before the SDK's test modules import them.

Substituted names (each keeps its constructor's signature; the store under it is a fresh SQLite
file per ``:memory:`` database, or the file the test names):

* ``agents.SQLiteSession`` / ``agents.memory.SQLiteSession``;
* ``SQLAlchemySession.from_url`` (its ``.engine.dispose()`` closes the store);
* ``tests.utils.simple_session.SimpleListSession`` (its ``history=`` preloads the items).

Only the tests that construct one of them are run (see ``pytest_collection_modifyitems``), less
:data:`EXCLUDED`: tests of ``SQLiteSession``'s / ``SQLAlchemySession``'s private internals, each
with the reason it does not apply.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from conformance_select import select_excluded
from packaging.version import Version

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

    @property
    def saved_items(self) -> list[dict[str, Any]]:
        """The test helper's view of what was saved: here, read back from the store."""
        return self._get_items(None)


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

_CONNECTIONS = ("SQLiteSession's per-thread sqlite3 connection cache (_connections, "
                "_get_connection, its file lock or rollback of a cached connection): the store "
                "uses an SQLAlchemy engine and pool; its transactions and cancellation are "
                "tested in tests/integrations/test_openai_agents.py")
_CORRUPT = ("writes undecodable JSON straight into the SDK's agent_messages table: the store "
            "has its own schema, and refuses a value without an exact JSON form on write")
_SQLALCHEMY = ("SQLAlchemySession's private engine, tables, session factory, table-init lock "
               "or dialect registry (_messages, _session_factory, _ensure_tables, _init_lock, "
               ".engine): not part of the Session protocol")

#: node id (relative to the SDK's tree) -> why the test does not apply to the store's session.
EXCLUDED: dict[str, str] = {
    **{f"tests/memory/test_session.py::{name}": _CONNECTIONS for name in (
        "test_sqlite_session_close_closes_worker_thread_connections",
        "test_sqlite_session_reaps_connections_from_exited_worker_threads",
        "test_sqlite_session_closes_retired_connections_before_the_next_allocation",
        "test_sqlite_session_keeps_connections_of_live_worker_threads",
        "test_sqlite_session_file_lock_is_shared_across_instances",
        "test_sqlite_session_failed_add_items_releases_write_lock",
        "test_sqlite_session_failed_clear_session_rolls_back",
        "test_sqlite_session_failed_pop_item_releases_write_lock",
        "test_sqlite_session_rollback_failure_evicts_connection",
        "test_sqlite_session_close_retries_quarantined_connection",
        "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome[add]",
        "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome[pop]",
        "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome[clear]",
    )},
    "tests/memory/test_session.py::test_sqlite_session_closed_rejects_empty_add_items":
        "expects SQLiteSession's 'SQLiteSession is closed' error: close() here releases a "
        "store the session opened, and a later call opens it again (documented)",
    **{f"tests/memory/test_session.py::{name}": _CORRUPT for name in (
        "test_sqlite_session_pop_item_skips_corrupt_most_recent",
        "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows",
        "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows",
        "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows",
    )},
    **{f"tests/extensions/memory/test_sqlalchemy_session.py::{name}": _CORRUPT for name in (
        "test_pop_item_skips_corrupt_most_recent",
        "test_get_items_limit_skips_corrupt_newest_rows",
        "test_pop_item_returns_none_after_dropping_only_corrupt_rows",
    )},
    **{f"tests/extensions/memory/test_sqlalchemy_session.py::{name}": _SQLALCHEMY for name in (
        "test_sqlalchemy_session_defaults_to_escaped_non_ascii_storage",
        "test_sqlalchemy_session_can_store_non_ascii_without_escaping",
        "test_pop_item_supports_unknown_delete_rowcount",
        "test_pop_item_retries_returning_claim_lost_to_concurrent_delete",
        "test_mutation_cancellation_waits_for_transaction_exit[add]",
        "test_mutation_cancellation_waits_for_transaction_exit[pop]",
        "test_mutation_cancellation_waits_for_transaction_exit[clear]",
        "test_add_items_waits_for_transient_sqlite_write_lock",
        "test_add_items_cancelled_waiter_does_not_strand_table_init_lock",
        "test_create_tables_false_does_not_allocate_shared_init_lock",
        "test_get_items_same_timestamp_consistent_order",
        "test_pop_item_same_timestamp_returns_latest",
        "test_engine_property_from_url",
        "test_engine_property_is_read_only",
        "test_sqlite_configuration_registry_releases_collected_engines",
        "test_sqlite_configuration_registry_does_not_grow_unbounded",
    )},
}
# The list stays strict (each entry names a test of the version run): 0.25.0 dropped one test
# and added one that backdates a row of the SDK's own table (the store orders a session by its
# positions, never by a clock: tests/integrations/test_openai_agents.py).
EXCLUDED["tests/extensions/memory/test_sqlalchemy_session.py::" + (
    "test_get_items_orders_by_id_for_ties"
    if Version(importlib.metadata.version("openai-agents")) < Version("0.25")
    else "test_backdated_append_remains_the_latest_item")] = _SQLALCHEMY


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the tests that construct a substituted session."""
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        function = getattr(item, "function", None)
        try:
            source = inspect.getsource(function) if function is not None else ""
        except (OSError, TypeError):
            source = ""
        (keep if any(name in source for name in _NAMES) else drop).append(item)
    select_excluded(config, keep, drop, EXCLUDED)
    items[:] = keep
