"""A new, empty database upgraded to head has the whole schema; down to base and back works."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Engine, func, inspect, select, text

from store import DEFAULT_ALIASES
from store.db.index.search_schema import include_name
from store.db.schema import migrate
from store.db.schema.engine import create_store_engine
from store.db.schema.tables import metadata, tool_aliases
from store.tools.vocabulary import VOCABULARY

EXPECTED_COLUMNS = {
    "sessions": {
        "session_id", "title", "provider", "model", "cwd", "tags_json", "metadata_json",
        "created_at", "updated_at", "next_position", "indexed_position", "agent",
        "chain_digest", "parent_session_id", "lineage", "parent_call_id",
        "message_indexed_position", "started_at", "last_activity_at", "logged_position",
    },
    "messages": {
        "session_id", "position", "message_key", "message_id", "role", "source", "text",
        "parts_json", "extras_json", "metadata_json", "created_at", "digest",
    },
    "tool_calls": {
        "session_id", "position", "call_index", "call_id", "id_minted", "raw_name", "wire_json",
        "arguments_status", "arguments_error", "arguments", "extras_json", "source",
        "wire_version", "search_body", "search_id",
    },
    "call_views": {"session_id", "position", "call_index", "view", "text"},
    "message_usage": {
        "session_id", "position", "model", "request_id", "response_id", "input_tokens",
        "output_tokens", "cache_creation_tokens", "cache_read_tokens", "reasoning_tokens",
    },
    "session_summaries": {"session_id", "next_position", "chain_digest", "version", "repeats"},
    "tool_summary": {
        "session_id", "item", "raw_name", "action", "calls", "invalid_calls", "error_calls",
        "unanswered_calls", "first_at", "last_at", "agent",
    },
    "context_summary": {
        "session_id", "item", "day", "model", "raw_name", "calls", "results", "error_results",
        "result_chars", "agent",
    },
    "usage_summary": {
        "session_id", "item", "day", "model", "responses", "input_tokens", "output_tokens",
        "cache_creation_tokens", "cache_read_tokens", "reasoning_tokens", "input_past",
        "output_past", "cache_creation_past", "cache_read_past", "last_at",
    },
    "findings": {
        "session_id", "position", "call_index", "rule_id", "call_id", "title", "level",
        "tags_json", "agent", "tool", "raw_tool", "field", "matched", "found_at",
    },
    "tool_results": {
        "session_id", "position", "result_index", "call_id", "call_position", "call_index",
        "is_error", "name", "content_json", "extras_json", "source", "search_body",
        "search_id",
    },
    "tool_definitions": {
        "session_id", "name", "description", "parameters_json", "definition_json",
        "recorded_at",
    },
    "tool_aliases": {"agent", "raw_name", "current_name", "created_at"},
    "alias_seeds": {"agent", "raw_name", "seeded_at"},
    "source_files": {
        "path", "identity", "size", "mtime_ns", "read_offset", "read_lines", "digest",
        "format", "context_json", "pending", "read_at", "gone_at",
        "kinds_json",  # revision 0019: what each record kind of the file became
    },
    "session_sources": {"session_id", "path"},
    "alembic_version": {"version_num"},
    # Trust (revision 0011).
    "tombstones": {"session_id", "erased_at", "start_position", "kind", "messages", "digest",
                   "reason", "actor"},
    "chain_heads": {"head", "recorded_at", "body"},
    "session_holds": {"session_id", "reason", "held_at", "actor"},
    "call_secrets": {"session_id", "position", "item", "item_index", "digest", "kind",
                     "call_position", "call_index"},
    "trust_keys": {"name", "key"},
    # The transparency log (revision 0018).
    "log_leaves": {"leaf_index", "leaf_hash", "kind", "subject", "position", "salt", "entry",
                   "logged_at"},
    "log_state": {"name", "origin", "created_at"},
}

def _tables(engine: Any) -> list[str]:
    """Table names, without the SQL-only search tables of revision 0004 (FTS5 and shadows)."""
    return [t for t in inspect(engine).get_table_names() if include_name(t, "table", {})]


EXPECTED_PRIMARY_KEYS = {
    "sessions": ("pk_sessions", ["session_id"]),
    "messages": ("pk_messages", ["session_id", "position"]),
    "tool_calls": ("pk_tool_calls", ["session_id", "position", "call_index"]),
    "tool_results": ("pk_tool_results", ["session_id", "position", "result_index"]),
    "tool_definitions": ("pk_tool_definitions", ["session_id", "name"]),
    "call_views": ("pk_call_views", ["session_id", "position", "call_index", "view"]),
    "message_usage": ("pk_message_usage", ["session_id", "position"]),
    "session_summaries": ("pk_session_summaries", ["session_id"]),
    "tool_summary": ("pk_tool_summary", ["session_id", "item"]),
    "usage_summary": ("pk_usage_summary", ["session_id", "item"]),
    "context_summary": ("pk_context_summary", ["session_id", "item"]),
    "findings": ("pk_findings", ["session_id", "position", "call_index", "rule_id"]),
    "tool_aliases": ("pk_tool_aliases", ["agent", "raw_name"]),
    "alias_seeds": ("pk_alias_seeds", ["agent", "raw_name"]),
    "source_files": ("pk_source_files", ["path"]),
    "session_sources": ("pk_session_sources", ["session_id", "path"]),
    "tombstones": ("pk_tombstones", ["session_id", "erased_at", "start_position"]),
    "chain_heads": ("pk_chain_heads", ["head"]),
    "session_holds": ("pk_session_holds", ["session_id"]),
    "call_secrets": ("pk_call_secrets", ["session_id", "position", "item", "item_index",
                                         "digest"]),
    "trust_keys": ("pk_trust_keys", ["name"]),
    "log_leaves": ("pk_log_leaves", ["leaf_index"]),
    "log_state": ("pk_log_state", ["name"]),
}

# name -> (columns, unique), per table; tables without a named index map to {}.
EXPECTED_INDEXES: dict[str, dict[str, tuple[list[str], bool]]] = {
    "sessions": {"ix_sessions_search_behind": (["session_id"], False),
                 "ix_sessions_messages_behind": (["session_id"], False),
                 "ix_sessions_log_behind": (["session_id"], False),
                 "ix_sessions_parent": (["parent_session_id"], False),
                 "ix_sessions_last_activity": (["last_activity_at"], False)},
    "messages": {
        "ux_messages_session_key": (["session_id", "message_key"], True),
        "ix_messages_created_at": (["created_at"], False),
        "ix_messages_time": (["session_id", "position", "created_at"], False),
    },
    "tool_calls": {
        "ix_tool_calls_session_call_id": (["session_id", "call_id"], False),
        "ix_tool_calls_usage": (
            ["raw_name", "session_id", "position", "call_index", "arguments_status"], False
        ),
        "ix_tool_calls_unindexed": (["session_id", "position"], False),
    },
    "tool_results": {
        "ix_tool_results_call": (["session_id", "call_position", "call_index"], False),
        "ix_tool_results_errors": (
            ["session_id", "call_position", "call_index", "is_error"], False
        ),
        "ix_tool_results_unindexed": (["session_id", "position"], False),
    },
    "tool_definitions": {},
    "tool_aliases": {},
    "alias_seeds": {},
    "call_views": {},
    "source_files": {},
    "session_sources": {},
    "message_usage": {"ix_message_usage_response": (["response_id", "request_id"], False)},
    "session_summaries": {},
    "tool_summary": {"ix_tool_summary_totals": (
        ["agent", "raw_name", "action", "session_id", "calls", "invalid_calls", "error_calls",
         "unanswered_calls", "first_at", "last_at"], False)},
    "usage_summary": {},
    "context_summary": {"ix_context_summary_totals": (
        ["agent", "raw_name", "day", "model", "session_id", "calls", "results", "result_chars",
         "error_results"], False)},
    "findings": {"ix_findings_rule": (["rule_id"], False)},
    "tombstones": {},
    "chain_heads": {},
    "session_holds": {},
    "call_secrets": {"ix_call_secrets_digest": (["digest"], False)},
    "trust_keys": {},
    "log_leaves": {"ix_log_leaves_subject": (["subject", "position"], False)},
    "log_state": {},
}

# name -> (columns, referred table, referred columns), per table; every one cascades deletes.
EXPECTED_FOREIGN_KEYS: dict[str, dict[str, tuple[list[str], str, list[str]]]] = {
    "sessions": {},
    "messages": {
        "fk_messages_session_id_sessions": (["session_id"], "sessions", ["session_id"]),
    },
    "tool_calls": {
        "fk_tool_calls_session_id_messages": (
            ["session_id", "position"], "messages", ["session_id", "position"]
        ),
    },
    "tool_results": {
        "fk_tool_results_session_id_messages": (
            ["session_id", "position"], "messages", ["session_id", "position"]
        ),
    },
    "tool_definitions": {
        "fk_tool_definitions_session_id_sessions": (["session_id"], "sessions", ["session_id"]),
    },
    "tool_aliases": {},
    "alias_seeds": {},
    "call_views": {
        "fk_call_views_session_id_messages": (
            ["session_id", "position"], "messages", ["session_id", "position"]
        ),
    },
    "source_files": {},
    "session_sources": {
        "fk_session_sources_session_id_sessions": (["session_id"], "sessions", ["session_id"]),
    },
    "message_usage": {
        "fk_message_usage_session_id_messages": (
            ["session_id", "position"], "messages", ["session_id", "position"]
        ),
    },
    **{table: {f"fk_{table}_session_id_sessions": (["session_id"], "sessions",
                                                    ["session_id"])}
       for table in ("session_summaries", "tool_summary", "usage_summary",
                     "context_summary")},
    "findings": {
        "fk_findings_session_id_messages": (
            ["session_id", "position"], "messages", ["session_id", "position"]
        ),
    },
    "tombstones": {},
    "chain_heads": {},
    "session_holds": {
        "fk_session_holds_session_id_sessions": (["session_id"], "sessions", ["session_id"]),
    },
    "call_secrets": {
        "fk_call_secrets_session_id_messages": (
            ["session_id", "position"], "messages", ["session_id", "position"]
        ),
    },
    "trust_keys": {},
    "log_leaves": {},
    "log_state": {},
}


def _downgrade(engine: Engine, revision: str) -> None:
    """Alembic's downgrade with the configuration store.db.schema.migrate builds (one
    transaction)."""
    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), revision)


def _aliases(engine: Engine) -> dict[str, str]:
    with engine.connect() as conn:
        rows = conn.execute(select(tool_aliases.c.raw_name, tool_aliases.c.current_name)
                            .where(tool_aliases.c.agent == "")).all()
    return {str(raw): str(current) for raw, current in rows}


def _alembic_versions(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())


@pytest.fixture
def migrated(engine: Engine) -> Engine:
    """The new database, upgraded to head (for tests that change it)."""
    migrate.upgrade(engine)
    return engine


@pytest.fixture(scope="module")
def schema(module_url: str) -> Iterator[Engine]:
    """A new database upgraded to head once per backend, for the tests that only read it."""
    engine = create_store_engine(module_url)
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


class TestUpgradeFromEmpty:
    def test_a_new_database_has_no_revision_before_the_upgrade(self, engine: Engine) -> None:
        assert migrate.current(engine) is None
        assert inspect(engine).get_table_names() == []

    def test_the_upgrade_reaches_head_and_reports_it(self, engine: Engine) -> None:
        after = migrate.upgrade(engine)

        assert after == migrate.head()
        assert migrate.current(engine) == migrate.head()
        assert _alembic_versions(engine) == [migrate.head()]

    def test_head_is_the_last_revision_of_the_scripts(self) -> None:
        from alembic.script import ScriptDirectory

        scripts = ScriptDirectory.from_config(migrate._config())
        revisions = [s.revision for s in scripts.walk_revisions("base", "heads")]

        assert revisions[0] == migrate.head()
        assert revisions[-1] == "0001"
        assert "0002" in revisions

    def test_upgrading_a_database_at_head_again_changes_nothing(self, migrated: Engine) -> None:
        assert migrate.upgrade(migrated) == migrate.head()

        assert _alembic_versions(migrated) == [migrate.head()]
        aliases = _aliases(migrated)
        # Kward's seed names keep their names; the cross-agent vocabulary is seeded with them.
        assert {raw: aliases[raw] for raw in DEFAULT_ALIASES} == dict(DEFAULT_ALIASES)
        assert aliases == {raw: cur for agent, raw, cur in VOCABULARY if agent is None}


class TestMigratedSchema:
    def test_every_expected_table_exists_and_no_other(self, schema: Engine) -> None:
        assert set(_tables(schema)) == set(EXPECTED_COLUMNS)

    @pytest.mark.parametrize("table", sorted(EXPECTED_COLUMNS))
    def test_every_table_has_exactly_the_expected_columns(
        self, schema: Engine, table: str
    ) -> None:
        columns = {c["name"] for c in inspect(schema).get_columns(table)}

        assert columns == EXPECTED_COLUMNS[table]

    @pytest.mark.parametrize("table", sorted(EXPECTED_PRIMARY_KEYS))
    def test_every_column_is_as_nullable_as_the_code_declares(
        self, schema: Engine, table: str
    ) -> None:
        declared = {c.name: c.nullable for c in metadata.tables[table].columns}
        found = {c["name"]: c["nullable"] for c in inspect(schema).get_columns(table)}

        assert found == declared

    @pytest.mark.parametrize("table", sorted(EXPECTED_PRIMARY_KEYS))
    def test_every_table_has_its_named_primary_key(self, schema: Engine, table: str) -> None:
        pk = inspect(schema).get_pk_constraint(table)

        assert (pk["name"], pk["constrained_columns"]) == EXPECTED_PRIMARY_KEYS[table]

    def test_every_primary_key_leads_with_session_id_but_the_global_ones(
        self, schema: Engine
    ) -> None:
        inspector = inspect(schema)
        leading = {
            table: inspector.get_pk_constraint(table)["constrained_columns"][0]
            for table in _tables(schema)
            if table not in ("tool_aliases", "alias_seeds", "source_files", "alembic_version",
                             "chain_heads", "trust_keys", "log_leaves", "log_state")
        }

        assert len(leading) == 16
        assert set(leading.values()) == {"session_id"}

    @pytest.mark.parametrize("table", sorted(EXPECTED_INDEXES))
    def test_every_table_has_exactly_its_named_indexes(
        self, schema: Engine, table: str
    ) -> None:
        indexes = {
            ix["name"]: (ix["column_names"], bool(ix["unique"]))
            for ix in inspect(schema).get_indexes(table)
            if include_name(ix["name"], "index", {})
        }

        assert indexes == EXPECTED_INDEXES[table]

    @pytest.mark.parametrize("table", sorted(EXPECTED_FOREIGN_KEYS))
    def test_every_foreign_key_is_named_and_cascades_deletes(
        self, schema: Engine, table: str
    ) -> None:
        keys = inspect(schema).get_foreign_keys(table)
        found = {
            fk["name"]: (fk["constrained_columns"], fk["referred_table"], fk["referred_columns"])
            for fk in keys
        }

        assert found == EXPECTED_FOREIGN_KEYS[table]
        assert all(fk["options"].get("ondelete") == "CASCADE" for fk in keys)

    def test_wire_version_defaults_to_1_on_the_server(self, schema: Engine) -> None:
        column = next(
            c for c in inspect(schema).get_columns("tool_calls") if c["name"] == "wire_version"
        )

        assert column["nullable"] is False
        assert str(column["default"]).strip("'") == "1"

    def test_the_alias_table_holds_exactly_the_seeded_vocabulary(self, schema: Engine) -> None:
        with schema.connect() as conn:
            rows = {(a or None, r, c) for a, r, c in conn.execute(select(
                tool_aliases.c.agent, tool_aliases.c.raw_name, tool_aliases.c.current_name))}

        assert rows == set(VOCABULARY)
        assert {raw: _aliases(schema)[raw] for raw in DEFAULT_ALIASES} == dict(DEFAULT_ALIASES)


class TestDowngrade:
    def test_downgrading_to_base_drops_every_table_but_alembic_version(
        self, migrated: Engine
    ) -> None:
        _downgrade(migrated, "base")

        assert migrate.current(migrated) is None
        assert inspect(migrated).get_table_names() == ["alembic_version"]
        assert _alembic_versions(migrated) == []

    def test_upgrading_again_after_base_rebuilds_the_schema_and_seeds_once(
        self, migrated: Engine
    ) -> None:
        _downgrade(migrated, "base")

        assert migrate.upgrade(migrated) == migrate.head()
        assert set(_tables(migrated)) == set(EXPECTED_COLUMNS)
        assert _aliases(migrated) == {raw: cur for agent, raw, cur in VOCABULARY
                                      if agent is None}
        with migrated.connect() as conn:
            total = conn.execute(select(func.count()).select_from(tool_aliases)).scalar_one()
        assert total == len(VOCABULARY)

    def test_downgrading_to_0001_drops_only_wire_version(self, migrated: Engine) -> None:
        _downgrade(migrated, "0001")

        assert migrate.current(migrated) == "0001"
        columns = {c["name"] for c in inspect(migrated).get_columns("tool_calls")}
        assert columns == EXPECTED_COLUMNS["tool_calls"] - {"wire_version", "search_body",
                                                            "search_id"}
        assert set(_tables(migrated)) == set(EXPECTED_COLUMNS) - {
            "call_views", "source_files", "session_sources", "message_usage", "findings",
            "session_summaries", "tool_summary", "usage_summary", "context_summary",
            "tombstones", "chain_heads", "session_holds", "call_secrets", "trust_keys",
            "log_leaves", "log_state", "alias_seeds"}

    def test_downgrading_to_0001_keeps_the_indexes_and_keys_of_tool_calls(
        self, migrated: Engine
    ) -> None:
        _downgrade(migrated, "0001")
        inspector = inspect(migrated)

        indexes = {ix["name"] for ix in inspector.get_indexes("tool_calls")}
        keys = {fk["name"] for fk in inspector.get_foreign_keys("tool_calls")}
        # (revision 0001's ix_tool_calls_raw_name is back: 0007's downgrade builds it again)
        assert indexes == set(EXPECTED_INDEXES["tool_calls"]) - {
            "ix_tool_calls_usage", "ix_tool_calls_unindexed"} | {"ix_tool_calls_raw_name"}
        assert keys == set(EXPECTED_FOREIGN_KEYS["tool_calls"])
        assert inspector.get_pk_constraint("tool_calls")["constrained_columns"] == [
            "session_id", "position", "call_index"
        ]

    def test_a_full_round_trip_ends_where_a_fresh_upgrade_does(self, migrated: Engine) -> None:
        def schema() -> dict[str, Any]:
            inspector = inspect(migrated)
            return {
                t: (
                    [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(t)],
                    sorted(str(ix["name"]) for ix in inspector.get_indexes(t)),
                    inspector.get_pk_constraint(t)["constrained_columns"],
                )
                for t in sorted(_tables(migrated))
            }

        fresh = schema()
        _downgrade(migrated, "base")
        migrate.upgrade(migrated, "0001")
        migrate.upgrade(migrated)

        assert schema() == fresh
        migrate.check(migrated)
