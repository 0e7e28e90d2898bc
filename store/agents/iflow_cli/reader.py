"""Reader of iFlow CLI histories (``~/.iflow/projects/<project>/session-<uuid>.jsonl``; domain).

iFlow's history manager writes Claude Code's line envelope (``uuid``, ``parentUuid``,
``sessionId``, ``timestamp``, ``type``, ``isSidechain``, ``userType``, ``message``, ``cwd``,
``gitBranch``, ``version``), so the lines are read by Claude Code's reader, after what iFlow
writes differently is put right:

* interactive runs write an assistant line per tool call as it is requested, and each such
  line repeats the calls of the line before it (and the turn's last line repeats the last
  call): a ``tool_use`` whose id an earlier line of the file already had is the same call,
  read once (a line left with nothing is skipped);
* ``isMeta`` lines (a caveat written for the model after a compression) are skipped, and the
  compression summary (``isCompactSummary``) is kept as a system message, not a prompt;
* a result line's ``toolUseResult.status`` other than ``success`` marks its result an error
  (iFlow writes only successful results today: a failed call has no result);
* the sessions are iFlow's (no Anthropic provider: iFlow serves Qwen, Kimi, GLM, DeepSeek).

Usage is ``message.usage`` (``input_tokens`` / ``output_tokens``) as non-interactive runs
record it; interactive runs write zeros, which are no usage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.agents.claude_code.reader import read_claude_code
from store.agents.registry import FileInput
from store.importers.base import Collector, Record

__all__ = ["read_file"]

_NAME = "iflow-cli"


def _blocks(record: Mapping[str, Any]) -> list[Any] | None:
    message = record.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return content if isinstance(content, list) else None


def _adapted(record: Mapping[str, Any], seen: set[str], collector: Collector
             ) -> Mapping[str, Any] | None:
    """The line as Claude Code's reader should see it (``None``: nothing left to read)."""
    if record.get("isMeta") is True:
        collector.skip("iflow-cli: a meta line (a caveat for the model)")
        return None
    blocks = _blocks(record)
    message = record.get("message")
    if record.get("isCompactSummary") is True and isinstance(message, Mapping):
        return {**record, "type": "system", "message": {**message, "role": "system"}}
    if record.get("type") == "assistant" and blocks is not None and isinstance(message,
                                                                                Mapping):
        kept = []
        for block in blocks:
            call = block.get("id") if isinstance(block, Mapping) and block.get(
                "type") == "tool_use" else None
            if isinstance(call, str):
                if call in seen:
                    continue
                seen.add(call)
            kept.append(block)
        if not kept:
            collector.skip("iflow-cli: a line repeating calls already read")
            return None
        if len(kept) != len(blocks):
            return {**record, "message": {**message, "content": kept}}
        return record
    result = record.get("toolUseResult")
    if (record.get("type") == "user" and blocks is not None and isinstance(result, Mapping)
            and isinstance(message, Mapping)
            and result.get("status") not in (None, "success")):
        marked = [{**b, "is_error": True} if isinstance(b, Mapping)
                  and b.get("type") == "tool_result" else b for b in blocks]
        return {**record, "message": {**message, "content": marked}}
    return record


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: one iFlow history file (see the module docstring)."""
    seen: set[str] = set()
    records: list[Record] = []
    for line, record in file.records:
        if isinstance(record, Mapping):
            adapted = _adapted(record, seen, collector)
            if adapted is None:
                continue
            record = adapted
        records.append((line, record))
    read_claude_code(records, file.last_line, collector)
    for session in collector.sessions.values():
        session.provider = None
        session.tags = tuple(_NAME if t == "claude-code" else t for t in session.tags)
