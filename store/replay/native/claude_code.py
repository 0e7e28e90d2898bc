"""A repaired history as Claude Code project JSONL (``~/.claude/projects/<project>/<id>.jsonl``).

One line per message, chained by ``uuid`` / ``parentUuid``, each carrying the session id, the
session's cwd and the message's time: user text as ``user`` lines, assistant turns as
``assistant`` lines (``message.id`` a new ``msg_`` id, the session's model, ``stop_reason``),
results as ``user`` lines of ``tool_result`` blocks; the title as a ``summary`` line. What
:mod:`store.importers.claude_code` reads back.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from store.core.model import OpaquePart, TextPart, ThinkingPart, ToolCall, ToolResult
from store.core.sessioninfo import SessionInfo
from store.replay.native.common import Dated, stamp
from store.replay.native.content import claude_result, drop_part, dumps
from store.replay.native.fidelity import Fidelity

__all__ = ["claude_code_lines", "project_folder"]

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def project_folder(cwd: str) -> str:
    """Claude Code's project folder name of a cwd: every character not a letter or digit
    becomes ``-`` (``/home/u/proj`` -> ``-home-u-proj``)."""
    return _NOT_ALNUM.sub("-", cwd)


def claude_code_lines(dated: list[Dated], info: SessionInfo, session_id: str, same: bool,
                      fidelity: Fidelity) -> list[str]:
    """The file's lines (see the module docstring)."""
    lines: list[str] = []
    parent: str | None = None
    common: dict[str, Any] = {"isSidechain": False, "userType": "external",
                              "cwd": info.cwd or "/", "sessionId": session_id}
    version = info.metadata.get("version") if same else None
    if isinstance(version, str):
        common["version"] = version
    for item in dated:
        message = item.message
        content: list[dict[str, Any]] = []
        for index, part in enumerate(message.parts):
            if isinstance(part, TextPart):
                content.append({"type": "text", "text": part.text})
            elif isinstance(part, ToolCall):
                done = item.calls[index]
                content.append({"type": "tool_use", "id": part.id, "name": done.name,
                                "input": done.input})
            elif isinstance(part, ToolResult):
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id,
                                         "content": claude_result(part, fidelity)}
                if part.is_error:
                    block["is_error"] = True
                content.append(block)
            elif same and isinstance(part, ThinkingPart) and part.signature:
                content.append({"type": "thinking", "thinking": part.text,
                                "signature": part.signature})
            elif same and isinstance(part, OpaquePart) and isinstance(part.data, dict):
                content.append(dict(part.data))
            else:
                drop_part(part, message, "Claude Code", fidelity)
        if message.role == "system":
            fidelity.dropped["system message (a Claude Code file holds no system "
                             "prompt)"] += 1
            continue
        if not content or all(b == {"type": "text", "text": ""} for b in content):
            if all(isinstance(p, TextPart) for p in message.parts):
                fidelity.dropped[f"empty {message.role} message"] += 1
            continue
        if message.metadata.get("codex_type") == "compacted":
            fidelity.translated["Codex compaction summary as a user message"] += 1
        line_id = str(uuid.uuid4())
        line: dict[str, Any] = {"parentUuid": parent, **common}
        if message.role == "assistant":
            stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
            line |= {"type": "assistant", "message": {
                "id": f"msg_{uuid.uuid4().hex}", "type": "message", "role": "assistant",
                "model": info.model or "<synthetic>", "content": content,
                "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0}}}
            fidelity.exact["assistant messages"] += 1
        else:
            text_only = len(content) == 1 and content[0]["type"] == "text"
            line |= {"type": "user", "message": {
                "role": "user", "content": content[0]["text"] if text_only else content}}
            kind = "tool result" if message.role == "tool" or not text_only else "user"
            fidelity.exact[f"{kind} messages"] += 1
        line |= {"uuid": line_id, "timestamp": stamp(item.at)}
        lines.append(dumps(line))
        parent = line_id
    if info.title and parent is not None:
        lines.insert(0, dumps({"type": "summary", "summary": info.title, "leafUuid": parent}))
    return lines
