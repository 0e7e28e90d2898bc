"""The tool-name alias table (inherited-behaviour §3)."""

from __future__ import annotations

import pytest

from store import DEFAULT_ALIASES, AliasError, AliasTable, ToolCall, display_name
from store.core.model import make_tool_call

RENAMES = {"read_file": "read", "edit_file": "edit", "write_file": "write",
           "run_shell_command": "bash"}
IDENTITIES = ["list_directory", "code_search", "web_search", "read_skill", "ask_user_question",
              "summarize_file_structure", "retrieve_tool_output", "fetch_content", "fetch_raw",
              "context_for_task", "context_budget_stats", "git_commit", "open_editor",
              "typesafe_evaluate", "web_research"]


class TestDefaultTable:
    @pytest.mark.parametrize(("raw", "current"), sorted(RENAMES.items()))
    def test_kward_renames_are_defaults(self, raw, current):
        assert DEFAULT_ALIASES[raw] == current
        assert AliasTable.default().resolve(raw) == current

    @pytest.mark.parametrize("name", IDENTITIES)
    def test_kward_identity_names_map_to_themselves(self, name):
        assert DEFAULT_ALIASES[name] == name

    def test_the_default_table_has_exactly_kwards_names(self):
        assert set(DEFAULT_ALIASES) == set(RENAMES) | set(IDENTITIES)

    def test_the_reverse_map_restores_the_four_raw_names(self):
        assert dict(AliasTable.default().reverse()) == {v: k for k, v in RENAMES.items()}


class TestDisplayName:
    @pytest.mark.parametrize(
        ("raw", "shown"),
        [("run_shell_command", "bash"), ("my_tool", "my_tool"), (None, "unknown_tool"),
         ("", "unknown_tool")],
    )
    def test_display_name_is_alias_then_raw_then_unknown(self, raw, shown):
        assert display_name(raw) == shown


class TestAliasTable:
    def test_aliases_are_data_that_can_be_added_and_removed(self):
        table = AliasTable.default().with_alias("shell", "bash")
        assert table.resolve("shell") == "bash"
        assert table.raw_names("bash") == ("bash", "run_shell_command", "shell")
        assert table.without_alias("shell").resolve("shell") == "shell"
        assert AliasTable.default().resolve("shell") == "shell"

    def test_aliases_do_not_chain(self):
        table = AliasTable({"a": "b", "b": "c"})
        assert table.resolve("a") == "b"

    @pytest.mark.parametrize("pair", [("", "x"), ("x", ""), (None, "x")])
    def test_empty_names_are_refused(self, pair):
        with pytest.raises(AliasError):
            AliasTable([pair])

    def test_apply_renames_and_keeps_the_raw_name(self):
        call = make_tool_call("c", "run_shell_command", '{"command": "ls"}')
        renamed = AliasTable.default().apply(call)
        assert (renamed.name, renamed.raw_name) == ("bash", "run_shell_command")
        assert renamed.arguments_text == '{"command": "ls"}'
        assert renamed.to_wire()["function"]["name"] == "run_shell_command"

    def test_apply_is_idempotent_and_follows_a_changed_table(self):
        table = AliasTable.default()
        once = table.apply(ToolCall("c", "read_file", {}))
        assert table.apply(once) == once
        moved = table.with_alias("read_file", "view").apply(once)
        assert (moved.name, moved.raw_name) == ("view", "read_file")
        unaliased = table.without_alias("read_file").apply(once)
        assert (unaliased.name, unaliased.raw_name) == ("read_file", None)

    def test_tables_compare_by_value(self):
        assert AliasTable({"a": "b"}) == AliasTable([("a", "b")])
        assert AliasTable({"a": "b"}) != AliasTable({"a": "c"})
