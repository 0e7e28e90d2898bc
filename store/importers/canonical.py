"""Reading the store's own canonical JSONL export back (format ``transcript-store``) (domain).

``transcript-store export --to jsonl`` (``store.audit.export``) writes one line per message:
``session_id``, ``position``, ``role``, ``created_at``, ``message_id``, ``key``, ``source``,
``parts``, ``extras``, ``metadata``. This reader turns each line back into the same
:class:`~store.core.model.Message`: tool calls from their canonical wire record (the recorded name,
the argument text verbatim, invalid arguments kept invalid), results, text, thinking, server
tool calls and opaque parts with their extras. Sessions keep their ids; each message keeps its
key (``<session id>:<position>`` when it had none), so importing an export twice stores
nothing twice, and ``export`` -> ``import`` into an empty database gives back the same
messages. (Session labels and the stored ``created_at`` of messages without a timestamp of
their own are not part of the export; an imported session is labelled ``transcript-store``.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from store.core.errors import RecordError, StoreError
from store.core.model import Message, Part, ToolResult, read_wire
from store.importers.base import Collector, Record
from store.records.codec import part_from_record

__all__ = ["is_canonical_record", "read_canonical"]

_FIELDS = frozenset({"session_id", "position", "role", "parts"})


def is_canonical_record(record: Any) -> bool:
    """True for a line of the store's JSONL export."""
    return (isinstance(record, Mapping) and _FIELDS <= record.keys()
            and isinstance(record.get("parts"), list) and isinstance(record.get("position"), int))


def read_canonical(records: list[Record], collector: Collector) -> None:
    """Every line of an export into its session (see the module docstring)."""
    for line, record in records:
        if not is_canonical_record(record):
            collector.problem(line, "not a line of a transcript-store export (needs "
                                    "session_id, position, role and parts)")
            continue
        sid = record["session_id"]
        if not isinstance(sid, str) or not sid:
            collector.problem(line, f"session_id must be a non-empty string, got {sid!r}")
            continue
        try:
            message = _message(record)
        except (StoreError, TypeError, ValueError, KeyError) as exc:
            collector.problem(line, f"{type(exc).__name__}: {exc}")
            continue
        key = record.get("key")
        if not isinstance(key, str) or not key:
            key = f"{sid}:{record['position']}"
        session = collector.session(sid, title=None, tags=("transcript-store",))
        collector.add(session, message, key, line)


def _message(record: Mapping[str, Any]) -> Message:
    role = record["role"]
    if not isinstance(role, str):
        raise RecordError(f"role must be a string, got {role!r}")
    parts = tuple(_part(p) for p in record["parts"])
    message_id = record.get("message_id")
    source = record.get("source")
    return Message(
        role, parts,  # type: ignore[arg-type]
        source if isinstance(source, str) else None,
        message_id if isinstance(message_id, str) else None,
        _mapping(record.get("extras")), _mapping(record.get("metadata")),
    )


def _mapping(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise RecordError(f"expected an object, got {type(value).__name__}")
    return dict(value)


def _part(item: Any) -> Part:
    if not isinstance(item, Mapping):
        raise RecordError(f"a part must be an object, got {type(item).__name__}")
    kind = item.get("type")
    if kind == "tool_call":
        call = read_wire(item["call"])
        extras = _mapping(item.get("extras"))
        if extras.get("id_minted") is True:
            # The store minted this id (none, or a repeated one, was recorded): give back the
            # recorded id, so that the store mints the same one again.
            provider_id = extras.pop("provider_id", None)
            extras.pop("id_minted")
            call = replace(call, id=provider_id if isinstance(provider_id, str) else None)
        return replace(call, extras=extras)
    if kind == "tool_result":
        return ToolResult(item.get("call_id"), item.get("content"), bool(item.get("is_error")),
                          item.get("name"), _mapping(item.get("extras")))
    if kind in ("text", "thinking", "server_tool_call", "opaque"):
        return part_from_record(item)
    raise RecordError(f"unknown part type {kind!r}")
