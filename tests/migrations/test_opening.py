"""``TranscriptStore.open`` creates new databases at head and never migrates one silently."""

from __future__ import annotations

import stat
import traceback
from pathlib import Path

import pytest
from sqlalchemy import Engine, inspect, text

from store import DatabaseError, SchemaOutOfDate, TranscriptStore
from store.db.schema import migrate

ASSISTANT = {
    "role": "assistant",
    "content": "listing",
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "run_shell_command", "arguments": '{"command":"ls"}'},
        }
    ],
}


def _columns(engine: Engine, table: str) -> set[str]:
    return {c["name"] for c in inspect(engine).get_columns(table)}


def _unrelated_tables(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER)"))
        conn.execute(text("INSERT INTO invoices (id, total) VALUES (1, 42)"))


def _open_disposing_a_leaked_engine(url: str, *, upgrade: bool) -> None:
    """``TranscriptStore.open``, disposing the engine it leaves open when it fails with an
    exception that is neither a StoreError nor an SQLAlchemyError (else its pooled PostgreSQL
    connection is garbage-collected open, a ResourceWarning that errors the whole run)."""
    try:
        TranscriptStore.open(url, upgrade=upgrade).close()
    except Exception as exc:
        for frame, _ in traceback.walk_tb(exc.__traceback__):
            leaked = frame.f_locals.get("engine")
            if isinstance(leaked, Engine):
                leaked.dispose()
        raise


def _another_alembic_project(engine: Engine) -> None:
    _unrelated_tables(engine)
    with engine.begin() as conn:
        conn.execute(text(
            "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)"
        ))
        conn.execute(text("INSERT INTO alembic_version (version_num) VALUES ('9f3a1c2b')"))


class TestOpeningANewDatabase:
    def test_it_is_created_at_head(self, new_url: str, engine: Engine) -> None:
        with TranscriptStore.open(new_url):
            pass

        assert migrate.current(engine) == migrate.head()
        assert "wire_version" in _columns(engine, "tool_calls")

    def test_it_is_usable_at_once(self, new_url: str) -> None:
        with TranscriptStore.open(new_url) as store:
            store.append("s1", [ASSISTANT])
            loaded = store.load("s1")

        (call,) = loaded.messages[0].message.tool_calls
        assert (call.id, call.name, call.raw_name) == ("call_1", "bash", "run_shell_command")

    def test_opening_it_again_at_head_changes_nothing(self, new_url: str, engine: Engine) -> None:
        with TranscriptStore.open(new_url) as store:
            store.append("s1", [ASSISTANT])
        with TranscriptStore.open(new_url) as store:
            assert store.count_calls("s1") == 1

        assert migrate.current(engine) == migrate.head()


class TestOpeningAnOlderDatabase:
    @pytest.fixture
    def at_0001(self, engine: Engine) -> Engine:
        assert migrate.upgrade(engine, "0001") == "0001"
        return engine

    def test_it_raises_schema_out_of_date_naming_the_upgrade_command(
        self, new_url: str, at_0001: Engine
    ) -> None:
        with pytest.raises(SchemaOutOfDate) as raised:
            TranscriptStore.open(new_url)

        assert "transcript-store db upgrade" in str(raised.value)
        assert (raised.value.current, raised.value.head) == ("0001", migrate.head())

    def test_the_error_is_a_database_error(self, new_url: str, at_0001: Engine) -> None:
        with pytest.raises(DatabaseError):
            TranscriptStore.open(new_url)

    def test_refusing_it_leaves_the_schema_at_0001(self, new_url: str, at_0001: Engine) -> None:
        with pytest.raises(SchemaOutOfDate):
            TranscriptStore.open(new_url)

        assert migrate.current(at_0001) == "0001"
        assert "wire_version" not in _columns(at_0001, "tool_calls")

    def test_opening_with_upgrade_true_upgrades_it_to_head(
        self, new_url: str, at_0001: Engine
    ) -> None:
        with TranscriptStore.open(new_url, upgrade=True) as store:
            store.append("s1", [ASSISTANT])
            assert store.count_calls("s1") == 1

        assert migrate.current(at_0001) == migrate.head()
        assert "wire_version" in _columns(at_0001, "tool_calls")

    def test_a_database_downgraded_to_base_is_opened_like_an_empty_one(
        self, new_url: str, engine: Engine
    ) -> None:
        from alembic import command

        migrate.upgrade(engine)
        with engine.begin() as conn:
            command.downgrade(migrate._config(conn), "base")

        TranscriptStore.open(new_url).close()

        assert migrate.current(engine) == migrate.head()

    def test_after_the_upgrade_a_plain_open_works(self, new_url: str, at_0001: Engine) -> None:
        TranscriptStore.open(new_url, upgrade=True).close()

        with TranscriptStore.open(new_url) as store:
            assert store.list_sessions() == []


class TestOpeningAnotherDatabase:
    def test_unrelated_tables_without_a_revision_raise_database_error(
        self, new_url: str, engine: Engine
    ) -> None:
        _unrelated_tables(engine)

        with pytest.raises(DatabaseError, match="not a transcript-store database") as raised:
            TranscriptStore.open(new_url)
        assert not isinstance(raised.value, SchemaOutOfDate)
        assert "invoices" in str(raised.value)

    def test_upgrade_true_refuses_it_too_and_changes_nothing(
        self, new_url: str, engine: Engine
    ) -> None:
        _unrelated_tables(engine)

        with pytest.raises(DatabaseError, match="not a transcript-store database"):
            TranscriptStore.open(new_url, upgrade=True)
        assert inspect(engine).get_table_names() == ["invoices"]
        with engine.connect() as conn:
            assert conn.execute(text("SELECT total FROM invoices")).scalar_one() == 42

    def test_another_alembic_projects_database_is_not_called_out_of_date(
        self, new_url: str, engine: Engine
    ) -> None:
        _another_alembic_project(engine)

        with pytest.raises(DatabaseError, match="not a transcript-store database"):
            _open_disposing_a_leaked_engine(new_url, upgrade=False)

    def test_another_alembic_projects_database_is_refused_by_an_upgrading_open(
        self, new_url: str, engine: Engine
    ) -> None:
        _another_alembic_project(engine)

        with pytest.raises(DatabaseError, match="not a transcript-store database"):
            _open_disposing_a_leaked_engine(new_url, upgrade=True)
        assert migrate.current(engine) == "9f3a1c2b"


@pytest.mark.sqlite
class TestSqliteFilePermissions:
    def test_a_new_database_file_is_readable_by_its_owner_only(self, tmp_path: Path) -> None:
        path = tmp_path / "new.sqlite"

        TranscriptStore.open(f"sqlite:///{path}").close()

        assert stat.S_IMODE(path.stat().st_mode) == 0o600

    def test_its_write_ahead_log_is_private_too(self, tmp_path: Path) -> None:
        path = tmp_path / "new.sqlite"

        with TranscriptStore.open(f"sqlite:///{path}") as store:
            store.append("s1", [ASSISTANT])
            companions = [Path(f"{path}-wal"), Path(f"{path}-shm")]
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in companions if p.exists()}

        assert f"{path.name}-wal" in modes
        assert set(modes.values()) == {0o600}

    def test_a_missing_parent_directory_is_created(self, tmp_path: Path) -> None:
        path = tmp_path / "nested" / "deeper" / "store.sqlite"

        with TranscriptStore.open(f"sqlite:///{path}") as store:
            assert store.list_sessions() == []

        assert stat.S_IMODE(path.stat().st_mode) == 0o600
