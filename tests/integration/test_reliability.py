"""Read-only mode, size limits and file permissions (both backends where they apply)."""

from __future__ import annotations

import os
import stat

import pytest
from sqlalchemy import create_engine, text

from store import DatabaseError, RecordError, SessionNotFound, TranscriptStore
from store.core.errors import TooLargeError

MESSAGE = {"role": "user", "content": "hello"}


def big_call(size):
    return {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {
        "name": "write", "arguments": '{"content": "' + "x" * size + '"}'}}]}


class TestReadOnly:
    def test_a_read_only_store_reads_and_refuses_writes_cleanly(self, store_url):
        with TranscriptStore.open(store_url) as writer:
            writer.append("s", [MESSAGE])
        with TranscriptStore.open(store_url, read_only=True) as auditor:
            assert auditor.read_only
            assert [m.message.text for m in auditor.load("s")] == ["hello"]
            with pytest.raises(DatabaseError):
                auditor.append("s", [MESSAGE])
            with pytest.raises(DatabaseError):
                auditor.create_session("t")
        with TranscriptStore.open(store_url) as writer:
            assert len(writer.load("s")) == 1

    def test_read_only_never_creates_a_database(self, tmp_path):
        path = tmp_path / "none.sqlite"
        with pytest.raises((DatabaseError, RecordError, ValueError)):
            TranscriptStore.open(f"sqlite:///{path}", read_only=True)
        assert not path.exists()


@pytest.mark.postgres
def test_a_postgres_role_with_read_grants_only_cannot_write(postgres_url):
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    database = postgres_url.rsplit("/", 1)[1]
    try:
        with admin.connect() as conn:
            if _role_exists(conn):
                conn.execute(text("DROP OWNED BY ts_auditor"))
            conn.execute(text("DROP ROLE IF EXISTS ts_auditor"))
            # The documented auditor role (docs/operations.md): read grants only.
            conn.execute(text("CREATE ROLE ts_auditor LOGIN"))
            conn.execute(text(f'GRANT CONNECT ON DATABASE "{database}" TO ts_auditor'))
            conn.execute(text("GRANT USAGE ON SCHEMA public TO ts_auditor"))
            conn.execute(text("GRANT SELECT ON ALL TABLES IN SCHEMA public TO ts_auditor"))
        with TranscriptStore.open(postgres_url) as writer:
            writer.append("audited", [MESSAGE])
        auditor_url = postgres_url.replace("postgres@", "ts_auditor@", 1)
        with TranscriptStore.open(auditor_url) as auditor:
            assert len(auditor.load("audited")) == 1
            with pytest.raises(DatabaseError, match="permission denied"):
                auditor.append("audited", [MESSAGE])
    finally:
        with admin.connect() as conn:
            conn.execute(text("DROP OWNED BY ts_auditor"))
            conn.execute(text("DROP ROLE IF EXISTS ts_auditor"))
        admin.dispose()


def _role_exists(conn):
    return conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = 'ts_auditor'")).first()


class TestLimits:
    def test_arguments_over_the_limit_are_refused_by_name(self, store_url):
        with TranscriptStore.open(store_url, max_argument_bytes=1000) as small:
            with pytest.raises(TooLargeError) as info:
                small.append("s", [MESSAGE, big_call(2000)])
            assert info.value.limit == 1000 and info.value.size > 2000
            assert "message 1: the arguments of call 0" in str(info.value)
            with pytest.raises(SessionNotFound):
                small.get_session("s")  # nothing of the append was stored
            small.append("s", [big_call(500)])
            assert small.count_calls("s") == 1

    def test_a_message_over_the_limit_is_refused(self, store_url):
        with TranscriptStore.open(store_url, max_message_bytes=5000) as small:
            with pytest.raises(TooLargeError, match="message 0"):
                small.append("s", [{"role": "tool", "tool_call_id": "c", "content": "é" * 4000}])

    def test_the_default_argument_limit_is_16_mib(self, store):
        store.append("s", [big_call(1024 * 1024)])  # 1 MiB passes
        with pytest.raises(TooLargeError, match="16777216"):
            store.append("s", [big_call(17 * 1024 * 1024)])


@pytest.mark.sqlite
def test_the_sqlite_file_is_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "sub" / "private.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        opened.append("s", [MESSAGE])
    for name in os.listdir(path.parent):
        mode = stat.S_IMODE((path.parent / name).stat().st_mode)
        assert mode & 0o077 == 0, f"{name} has mode {oct(mode)}"
