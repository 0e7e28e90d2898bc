"""Cursor's command line agent (``cursor-agent``): one SQLite store per chat,
``~/.cursor/chats/<md5 of the folder it ran in>/<chat id>/store.db`` (the agent's
definition; closed source, read as far as the rows show unambiguously). The editor's chats
are :mod:`store.agents.cursor`'s."""

from __future__ import annotations

from collections.abc import Mapping

from store.agents.homes import AgentFolders
from store.agents.registry import AgentDefinition, DatabaseLayout

__all__ = ["AGENT"]


def _tables(tables: Mapping[str, set[str]]) -> bool:
    # ``store.db`` is a common name: the chat store is told by its two tables, with exactly
    # the agent's columns (and the reader refuses a ``meta`` row that is not the agent's).
    return tables.get("meta") == {"key", "value"} and tables.get("blobs") == {"id", "data"}


AGENT = AgentDefinition(
    name="cursor-cli",
    display_name="Cursor CLI",
    package=__name__,
    order=251,
    # ~/.cursor on Linux and macOS, %USERPROFILE%\.cursor on Windows.
    homes=(AgentFolders("cursor-cli", None, ".cursor", ("chats/*/*/store.db",)),),
    database=DatabaseLayout({"meta": "key", "blobs": "rowid"}, _tables, "read_cursor_cli",
                            file_names=("store.db",)),
    records={
        "calls": "`tool-call` parts of the assistant's message blobs",
        "results": "`tool` message blobs' `tool-result` parts, by `toolCallId`",
        "errors": "`isError`",
        "times": "the chat's `createdAt` only",
        "cwd": "the folder path in the root blob whose MD5 is the chat's folder name",
        "model": "`lastUsedModel`",
        "title": "`name`",
        "usage": "not recorded",
        "lineage": "not recorded",
        "not recorded": "per-message times, the chat's end, token usage, subagents",
    },
    # The agent's tool names (its transcripts' and `stream-json`'s: Shell, Read, Edit ...;
    # Read, Edit, Write, Glob, Grep, LS are the global rows already).
    tools={
        "Shell": "bash", "ReadFile": "read", "EditFile": "edit", "StrReplace": "edit",
        "ApplyPatch": "patch", "TodoWrite": "todo", "UpdateTodos": "todo",
        "WebFetch": "web_fetch", "WebSearch": "web_search", "SemSearch": "grep",
        "Task": "task",
    },
)
