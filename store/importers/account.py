"""What each kind of record in a file became: the per-kind account of a read (domain).

A reader counts what it skips by reason and reports what it did not understand; this module
adds the other side, per record kind (a line's ``type``, a task item's ``role``: the agent's
definition says how a kind is told, ``AgentDefinition.kind_of``): how many of its records
were **stored** (a message began there), **merged** (a line of a message that began on an
earlier line, as Claude Code writes a response's blocks), **skipped** (read, and nothing of
it is a message: the agent's bookkeeping, what the store does not keep), **not understood**
(a problem: not JSON, no known shape) or **held back** (possibly still being written); a
reader that builds its messages from all the lines at once (Gemini CLI's upserted records)
says which line gave which message of none of them: its lines are **read**.

A kind the agent's definition does not list (``AgentDefinition.kinds``) is one the reader
has never seen: it is counted in ``unknown`` (the import summary's warning), never silence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.agents.registry import AgentDefinition, agent_for_format
from store.importers.base import ParsedFile, Record

__all__ = ["OUTCOMES", "file_account", "unknown_kinds"]

#: What a record became, in the order they are shown.
OUTCOMES: tuple[str, ...] = ("stored", "merged", "read", "skipped", "not understood",
                              "held back")

#: The kind of a line that is not JSON (or not UTF-8) at all.
NOT_JSON = "(not JSON)"
#: The kind of a record whose kind cannot be told (no ``type``, not an object).
NO_KIND = "(no kind)"


def _role_or_type(record: Any) -> str | None:
    if not isinstance(record, Mapping):
        return None
    kind = record.get("role", record.get("type"))
    return kind if isinstance(kind, str) else None


def _plain_kind(record: Any) -> str | None:
    if not isinstance(record, Mapping):
        return None
    kind = record.get("type", record.get("role"))
    return kind if isinstance(kind, str) else None


def _add(account: dict[str, dict[str, int]], kind: str, outcome: str, n: int = 1) -> None:
    counts = account.setdefault(kind, {})
    counts[outcome] = counts.get(outcome, 0) + n


def file_account(parsed: ParsedFile, records: list[Record], document: Any = None,
                 has_document: bool = False) -> dict[str, dict[str, int]]:
    """The per-kind account of one read: ``{kind: {outcome: count}}`` (outcomes as in
    :data:`OUTCOMES`, only those that occurred). ``records``: the JSON lines read; else the
    JSON document (``has_document``), whose list items are accounted like lines; a database
    or another document counts as one record of kind ``(database)`` / ``(document)``."""
    definition = agent_for_format(parsed.format)
    kind_of = definition.kind_of if definition is not None else _plain_kind
    account: dict[str, dict[str, int]] = {}
    problems = {p.line for p in parsed.problems if p.line is not None}
    held = {p.line for p in parsed.deferred if p.line is not None}
    if records:
        starts = {line for s in parsed.sessions for line in s.lines if line is not None}
        whole = not starts and parsed.messages > 0  # messages not told by line (upserts)
        seen: set[int] = set()
        for line, record in records:
            seen.add(line)
            kind = kind_of(record) or NO_KIND
            if line in problems:
                _add(account, kind, "not understood")
            elif line in starts:
                _add(account, kind, "stored")
            elif line in held:
                _add(account, kind, "held back")
            elif whole:
                _add(account, kind, "read")
            elif _carries_messages(definition, kind):
                _add(account, kind, "merged")
            else:
                _add(account, kind, "skipped")
        if problems - seen:
            _add(account, NOT_JSON, "not understood", len(problems - seen))
        if held - seen:
            _add(account, NOT_JSON, "held back", len(held - seen))
        return account
    if has_document and isinstance(document, list):
        items = {i for s in parsed.sessions for i in s.item_indexes if i is not None}
        bad = {p.item for p in parsed.problems if p.item is not None}
        list_kind = definition.kind_of if definition is not None else _role_or_type
        if definition is not None and definition.name in ("cline", "roo-code"):
            list_kind = _role_or_type
        for index, item in enumerate(document):
            kind = list_kind(item) or NO_KIND
            outcome = ("not understood" if index in bad else "stored" if index in items
                       else "skipped")
            _add(account, kind, outcome)
        return account
    kind = "(database)" if definition is not None and definition.database is not None \
        and not has_document else "(document)"
    if parsed.messages:
        _add(account, kind, "stored")
    elif parsed.problems:
        _add(account, kind, "not understood")
    elif parsed.deferred:
        _add(account, kind, "held back")
    else:
        _add(account, kind, "skipped")
    return account


def _carries_messages(definition: AgentDefinition | None, kind: str) -> bool:
    """A kind whose records are parts of messages (a line of a message that began earlier
    is merged, not skipped): the definition says ``message ...`` for it."""
    if definition is None:
        return False
    what = definition.kinds.get(kind, "")
    return what.startswith("message")


def unknown_kinds(fmt: str, account: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """The record kinds of an account the format's reader has never seen (its definition
    lists the kinds it knows), with how many records each had."""
    definition = agent_for_format(fmt)
    if definition is None or not definition.kinds:
        return {}
    return {kind: sum(counts.values()) for kind, counts in account.items()
            if kind not in definition.kinds and not kind.startswith("(")}
