"""Reader of Warp's agent conversations (``warp.sqlite``; domain).

Warp is closed source. Learnt from what its database shows and what open archives document
of it (read to learn, never copied): kenn-io/agentsview ``internal/parser/warp.go`` and
``warp_paths.go`` @538600744d. Only the two tables whose content is plain are read:

* ``ai_queries``, one row per exchange: ``exchange_id``, ``conversation_id``, ``start_ts``
  (UTC, ``YYYY-MM-DD HH:MM:SS[.ffffff]``), ``input`` (JSON list; ``[{"Query": {"text",
  "context"}}]`` when the user typed a prompt, ``[]`` for a step the agent took on its own),
  ``working_directory``, ``output_status`` (JSON), ``model_id`` (and ``planning_model_id``,
  ``coding_model_id``).
* ``agent_conversations`` (newer versions): ``conversation_id``, ``last_modified_at``,
  ``conversation_data`` (JSON: ``conversation_usage_metadata`` with ``token_usage``, a list
  of ``{model_id, warp_tokens, byok_tokens}``, and ``tool_usage_metadata``, per-tool counts).

Each conversation is a session. An exchange with a ``Query`` is a user message (keyed by
its ``exchange_id``, dated by ``start_ts``); one without is a step of the agent (skipped,
counted). The agent's replies and its tool calls are not kept in a readable form
(``agent_tasks`` holds them as binary messages that no public material documents), so
the sessions hold the prompts only; the usage totals (in Warp's own units, with no input /
output split) and the per-tool counts go to the session's metadata, never into token counts
by guess. The session starts at its first exchange and ends at the conversation's
``last_modified_at`` (else its last exchange).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import ImportFileError
from store.core.model import Message, OpaquePart, Part, TextPart
from store.importers.base import Collector
from store.importers.lines import moment, text_of

__all__ = ["read_file", "read_warp"]


def _time(value: Any) -> str | None:
    """A Warp time (UTC, space-separated) as ISO 8601."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().replace(" ", "T", 1)
    return text if text.endswith("Z") or "+" in text[10:] else text + "Z"


def _json(value: Any) -> Any:
    try:
        return loads_json(value) if isinstance(value, str | bytes) and value else None
    except ValueError:
        return None


def read_warp(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """Warp's ``ai_queries`` and ``agent_conversations`` rows (see the module docstring)."""
    exchanges: dict[str, list[dict[str, Any]]] = {}
    for row in tables.get("ai_queries", ()):
        exchanges.setdefault(str(row.get("conversation_id")), []).append(row)
    conversations = {str(r.get("conversation_id")): r
                     for r in tables.get("agent_conversations", ())}
    for cid, rows in exchanges.items():
        _read_conversation(cid, rows, conversations.get(cid), collector)
    for _ in conversations.keys() - exchanges.keys():
        collector.skip("warp: conversation without exchanges")


def _read_conversation(cid: str, rows: list[dict[str, Any]], info: Mapping[str, Any] | None,
                       collector: Collector) -> None:
    metadata: dict[str, Any] = {}
    data = _json(info.get("conversation_data")) if info is not None else None
    usage = data.get("conversation_usage_metadata") if isinstance(data, Mapping) else None
    if isinstance(usage, Mapping):
        if isinstance(usage.get("token_usage"), list):
            metadata["warp_token_usage"] = usage["token_usage"]
        tools = usage.get("tool_usage_metadata")
        if isinstance(tools, Mapping):
            metadata["warp_tool_usage"] = {
                k.removesuffix("_stats"): v.get("count") for k, v in tools.items()
                if isinstance(v, Mapping) and v.get("count")}
    cwd = next((r["working_directory"] for r in rows if text_of(r.get("working_directory"))),
               None)
    models = [r["model_id"] for r in rows if text_of(r.get("model_id"))]
    stamps = [_time(r.get("start_ts")) for r in rows]
    messages: list[tuple[Message, str]] = []
    for row, stamp in zip(rows, stamps, strict=True):
        items = _json(row.get("input"))
        queries = [i["Query"] for i in items or () if isinstance(i, Mapping)
                   and isinstance(i.get("Query"), Mapping)] if isinstance(items, list) else []
        if not isinstance(items, list):
            collector.problem(None, f"warp exchange {row.get('exchange_id')!r}: its input is "
                                    "not a JSON list")
            continue
        if not queries:
            collector.skip("warp: an exchange the agent took on its own (no typed query)")
            continue
        parts: list[Part] = []
        for query in queries:
            parts.append(TextPart(str(query.get("text") or "")))
            if query.get("context"):
                parts.append(OpaquePart("warp_context", query["context"]))
        meta = {k: v for k, v in (("timestamp", stamp), ("model", text_of(row.get("model_id"))),
                                  ("output_status", _json(row.get("output_status"))),
                                  ("working_directory", text_of(row.get("working_directory"))))
                if v is not None}
        messages.append((Message("user", tuple(parts), "warp", text_of(row.get("exchange_id")),
                                 metadata=meta), str(row.get("exchange_id"))))
    if not messages:
        return
    session = collector.session(cid, cwd=cwd, model=models[-1] if models else None,
                                metadata=metadata)
    times = [t for t in (moment(s) for s in stamps) if t is not None]
    last = moment(_time(info.get("last_modified_at"))) if info is not None else None
    session.started_at = min(times) if times else last
    session.ended_at = max([*times, *([last] if last else [])]) if times or last else None
    for message, key in messages:
        collector.add(session, message, key)


def read_file(file: FileInput, collector: Collector) -> None:
    """Warp keeps its conversations in a database only: any other file is not Warp's."""
    raise ImportFileError(file.path, "not Warp's database (warp.sqlite)")
