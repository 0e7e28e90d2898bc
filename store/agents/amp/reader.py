"""Reader of Amp thread files (``~/.local/share/amp/threads/T-<uuid>.json``; domain).

Amp's client is published only bundled (``@sourcegraph/amp``); the thread file was learnt
from open readers of it, read to learn, never copied: ccusage
``rust/crates/ccusage/src/adapter/amp/`` @5816e640 (``$AMP_DATA_DIR`` or
``~/.local/share/amp/threads``, ``messages[].usage`` with ``model``, ``timestamp``,
``inputTokens``, ``outputTokens``, ``cacheCreationInputTokens``, ``cacheReadInputTokens``,
``credits``) and agentsview ``internal/parser/amp.go`` @53860074 (``created`` in ms, ``title``,
``env.initial.trees``, ``tool_result`` blocks ``{toolUseID, run: {status, result, error}}``).

The file is the whole thread, rewritten as it goes: ``{v, id, created, title, messages,
env}``. Each message ``{role, messageId?, content: [...], meta: {sentAt}, usage}`` is kept
under the key ``<thread id>:<messageId or index>``: text, thinking and ``tool_use`` blocks
as recorded; Amp's ``tool_result`` blocks carry ``run`` (``status`` ``done`` with its
``result``, ``error`` with ``error.message``, ``cancelled``, ``rejected-by-user``): anything
but ``done`` is an error result; a block with no ``run`` result and no final status, and a
call with no block, have no result. Usage is one row per assistant message as recorded
(Amp's ``credits`` go to the message's metadata, never converted). The thread's start is
its ``created`` time, its end the last time a message records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlparse

from store.agents.amp import is_amp_thread
from store.agents.registry import FileInput
from store.core.errors import StoreError
from store.core.model import Message, Part
from store.importers.base import Collector
from store.importers.lines import moment, span, text_of
from store.importers.titles import prompt_title
from store.normalize.messages import normalize_message
from store.usage.tokens import TokenUsage

__all__ = ["read_amp_thread", "read_file"]

_FINISHED = frozenset({"done", "error", "cancelled", "rejected-by-user"})


def read_amp_thread(thread: Mapping[str, Any], collector: Collector) -> None:
    """One thread document (see the module docstring)."""
    tid = str(thread["id"])
    session = collector.session(tid, provider=None, cwd=_cwd(thread.get("env")),
                                metadata={k: thread[k] for k in ("v", "agent_mode")
                                          if k in thread})
    session.title = text_of(thread.get("title"))
    stamps: list[Any] = [thread.get("created")]
    for index, raw in enumerate(thread["messages"]):
        if not isinstance(raw, Mapping):
            collector.problem(None, f"amp message {index}: not an object", item=index)
            continue
        key = f"{tid}:{text_of(raw.get('messageId')) or text_of(raw.get('id')) or index}"
        role = raw.get("role")
        usage_raw = _mapping(raw.get("usage"))
        meta = _mapping(raw.get("meta"))
        stamp = meta.get("sentAt") or usage_raw.get("timestamp")
        stamps.append(stamp)
        content = raw.get("content")
        if isinstance(content, list):
            content = [_plain_result(b) for b in content]
        try:
            message = normalize_message({"role": role, "content": content or []})
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"amp message {index}: {exc}", item=index)
            continue
        metadata = {k: v for k, v in (("timestamp", stamp), ("model", usage_raw.get("model")),
                                      ("credits", usage_raw.get("credits")),
                                      ("state", raw.get("state"))) if v is not None}
        usage = None
        if role == "assistant" and usage_raw:
            model = text_of(usage_raw.get("model"))
            if session.model is None:
                session.model = model
            usage = TokenUsage(_count(usage_raw.get("inputTokens")),
                               _count(usage_raw.get("outputTokens")),
                               _count(usage_raw.get("cacheCreationInputTokens")),
                               _count(usage_raw.get("cacheReadInputTokens")), model=model,
                               response_id=key)
        parts: tuple[Part, ...] = message.parts
        collector.add(session, Message(message.role, parts, "amp", key, message.extras,
                                       metadata), key, item=index, usage=usage)
    session.started_at, session.ended_at = span(stamps)
    created = moment(thread.get("created"))
    if created is not None:
        session.started_at = created
    if session.title is None:
        session.title = prompt_title(session.items)


def _plain_result(block: Any) -> Any:
    """Amp's ``{type: tool_result, toolUseID, run}`` as an Anthropic ``tool_result`` block
    (``is_error`` from ``run.status``), or a block left as it is. A block whose run has
    neither a result nor a final status stays Amp's own (no result is invented)."""
    if not isinstance(block, Mapping) or block.get("type") != "tool_result" \
            or "toolUseID" not in block:
        return block
    run = _mapping(block.get("run"))
    status = run.get("status")
    if status not in _FINISHED:
        return {**block, "type": "amp_pending_result"}
    error = run.get("error")
    content = run.get("result")
    if status != "done":
        content = (error.get("message") if isinstance(error, Mapping) else None) or status
    return {"type": "tool_result", "tool_use_id": block["toolUseID"], "content": content,
            "is_error": status != "done", "amp_status": status}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        and value > 0 else 0


def _cwd(env: Any) -> str | None:
    trees = env.get("initial", {}).get("trees") if isinstance(env, Mapping) and isinstance(
        env.get("initial"), Mapping) else None
    if not isinstance(trees, list) or not trees or not isinstance(trees[0], Mapping):
        return None
    uri = text_of(trees[0].get("uri"))
    if uri is None:
        return None
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: an Amp thread file."""
    if not is_amp_thread(file.document):
        collector.problem(None, "not an Amp thread: an object with an id T-<uuid> and "
                                "messages expected")
        return
    read_amp_thread(file.document, collector)
