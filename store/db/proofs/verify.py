"""``verify``: check that what is stored is what was written (persistence; reads only).

Checks, per session:

* every stored wire record parses back to the call it was written as: the recorded name and
  id match the row, the argument status matches what the parser says of the stored text, and
  the queryable copy equals the parsed arguments (NUL aside on PostgreSQL, see writer.py);
* message positions run 0..n-1 without gaps or duplicates, and ``next_position`` is n;
* every message's parts reference exactly the tool-call and tool-result rows stored for it;
* every result is linked to an existing call, or is reported as an orphan (a warning: orphans
  are kept on purpose, repair drops them on replay);

* the chain (``store.trust.chain``, revision 0011): every message's digest, recomputed from
  its rows, matches the stored one, chained from position 0, and the session's chain head is
  its last message's; the first position that no longer matches is reported (``chain``);

* the derived rows (``store/db/index/index_check.py``): the search items, argument views and secret
  digests the catch-up wrote below each session's watermark, and on SQLite the full-text
  entries, recomputed from the transcript; each missing, extra or altered row is an error
  (``index_missing``, ``view_altered``, ``fts`` ...; ``transcript-store db index --rebuild``
  builds them again);

and for the database: SQLite's ``integrity_check`` and ``foreign_key_check``. With a head
printed earlier by ``db head`` (``head=``), it also proves that head is an ancestor of the
database: every session it covered still holds the same prefix, or was removed with a
tombstone (``head``, :func:`store.db.proofs.chains.check_head`). The transparency log
(``log``, :func:`store.db.proofs.tlog.check_log`): its leaves are 0..n-1, each still matches its
salted entry, every logged message still matches its leaf (or was removed with a tombstone
leaf); with an auditor's signed checkpoint, the log still extends it. It reports; it changes
nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import Connection, Text, cast, select, text

from store.core.arguments import loads_json
from store.core.depth import MAX_DEPTH, text_depth, text_within
from store.core.errors import UsageError
from store.core.model import InvalidToolCall, ToolCall
from store.db.index.index_check import check_derived
from store.db.index.message_index import check_message_index
from store.db.index.summaries import check_summaries
from store.db.proofs.chains import ChainCheck, check_chain, check_head
from store.db.proofs.tlog import check_log
from store.db.schema.tables import messages, sessions, tool_calls, tool_results
from store.db.schema.wiretext import wire_column
from store.records.codec import decode_call
from store.records.searchtext import call_search_text, result_search_text
from store.tlog.note import Checkpoint

__all__ = ["VerifyProblem", "VerifyReport", "verify"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class VerifyProblem:
    """One finding: where (session, position, index) and what."""

    severity: Severity
    check: str
    session_id: str | None
    position: int | None
    index: int | None
    detail: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What ``verify`` looked at and what it found; ``ok`` when there is no error."""

    sessions: int = 0
    messages: int = 0
    calls: int = 0
    results: int = 0
    problems: tuple[VerifyProblem, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    @property
    def errors(self) -> tuple[VerifyProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")


def _nul_free(value: Any) -> Any:
    """What the PostgreSQL JSONB copy holds for a value (NUL becomes U+FFFD there)."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_nul_free(k): _nul_free(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nul_free(v) for v in value]
    return value


#: Argument statuses whose text parses as JSON (its nesting counts).
_PARSED = ("ok", "empty", "non_object_json")


def _readable(report: Any, what: str, pos: int, idx: int, stored: str,
              search_text: Any, parsed: bool) -> bool:
    """Whether a call's wire record (or a result's content) is nested within
    ``store.core.depth.MAX_DEPTH`` and its search text can be built; reports it if not (an
    error: append refuses such values now; one stored before, or by SQL, cannot be indexed
    or read by every reader)."""
    depth = text_depth(stored) if not text_within(stored) else 0
    if not depth and parsed:
        try:  # the arguments, a JSON text inside the wire record
            arguments = loads_json(stored).get("function", {}).get("arguments")
        except (ValueError, AttributeError):
            arguments = None
        if isinstance(arguments, str) and not text_within(arguments):
            depth = text_depth(arguments)
    if depth > MAX_DEPTH:
        report("error", "depth", pos, idx,
               f"the {what} is nested {depth} levels deep, over the limit of {MAX_DEPTH}: "
               "append refuses it now; readers may fail on it (delete or rewrite it)")
        return False
    try:
        search_text(stored)
    except (ValueError, RecursionError) as exc:
        report("error", "index", pos, idx, f"the search text of the {what} cannot be built: "
                                           f"{type(exc).__name__}: {exc}")
        return False
    return True


def verify(conn: Connection, session_id: str | None = None, *,
           head: str | None = None, checkpoint: Checkpoint | None = None) -> VerifyReport:
    """Check the whole database (or one session) on ``conn`` and report; nothing is changed.
    ``head``: also prove that this head (``db head``) is an ancestor of the database. The
    whole database's check includes the transparency log (``log``, :func:`check_log`);
    ``checkpoint`` (signature checked): also that the log's history still extends it."""
    if (head is not None or checkpoint is not None) and session_id is not None:
        raise UsageError("verify checks a head or checkpoint over the whole database, not "
                         "one session")
    problems: list[VerifyProblem] = []
    counts = Counter[str]()
    chains: dict[str, ChainCheck] = {}
    query = select(sessions.c.session_id, sessions.c.next_position, sessions.c.chain_digest)
    if session_id is not None:
        query = query.where(sessions.c.session_id == session_id)
    for sid, next_position, chain_digest in conn.execute(
            query.order_by(sessions.c.session_id)).all():
        counts["sessions"] += 1
        _verify_session(conn, sid, next_position, problems, counts)
        chain = chains[sid] = check_chain(conn, sid, chain_digest, next_position)
        if chain.first_bad is not None:
            problems.append(VerifyProblem("error", "chain", sid, chain.first_bad, None,
                                          chain.detail))
    problems += [VerifyProblem("error", i.check, i.session_id, i.position, i.index, i.detail)
                 for i in check_derived(conn, session_id)]
    problems += [VerifyProblem("error", "message_index", sid, position, None, detail)
                 for sid, position, detail in check_message_index(conn, session_id)]
    problems += [VerifyProblem("error", "summary", sid, None, None, detail)
                 for sid, detail in check_summaries(conn, session_id)]
    if head is not None:
        problems += [VerifyProblem("error", "head", sid, position, None, detail)
                     for sid, position, detail in check_head(conn, head, chains)]
    if session_id is None:
        problems += [VerifyProblem("error", "log", sid, position, None, detail)
                     for sid, position, detail in check_log(conn, checkpoint)]
    if conn.dialect.name == "sqlite":
        result = conn.execute(text("PRAGMA integrity_check")).scalars().all()
        if result != ["ok"]:
            problems.append(VerifyProblem("error", "integrity", None, None, None,
                                          "; ".join(map(str, result))))
        for row in conn.execute(text("PRAGMA foreign_key_check")).all():
            problems.append(VerifyProblem("error", "foreign_key", None, None, None,
                                          f"row without its parent: {tuple(row)}"))
    return VerifyReport(counts["sessions"], counts["messages"], counts["calls"],
                        counts["results"], tuple(problems))


def _verify_session(conn: Any, sid: str, next_position: int, problems: list[VerifyProblem],
                    counts: Counter[str]) -> None:
    def report(severity: Severity, check: str, position: int | None, index: int | None,
               detail: str) -> None:
        problems.append(VerifyProblem(severity, check, sid, position, index, detail))

    mrows = conn.execute(
        select(messages.c.position, messages.c.parts_json)
        .where(messages.c.session_id == sid).order_by(messages.c.position)
    ).all()
    counts["messages"] += len(mrows)
    positions = [p for p, _ in mrows]
    if positions != list(range(len(positions))):
        report("error", "positions", None, None,
               f"message positions are not 0..{len(positions) - 1}: {positions[:20]}")
    if next_position != len(positions):
        report("error", "positions", None, None,
               f"next_position is {next_position} but {len(positions)} messages are stored")
    referenced: dict[int, tuple[set[int], set[int]]] = {}
    for position, parts_json in mrows:
        parts = loads_json(parts_json)
        referenced[position] = (
            {p["index"] for p in parts if p.get("type") == "tool_call"},
            {p["index"] for p in parts if p.get("type") == "tool_result"},
        )
    crows = conn.execute(
        select(tool_calls.c.position, tool_calls.c.call_index, tool_calls.c.call_id,
               tool_calls.c.id_minted, tool_calls.c.raw_name,
               wire_column(tool_calls, conn.dialect.name == "postgresql"),
               tool_calls.c.arguments_status, tool_calls.c.arguments_error,
               # (as text, parsed exactly below: the JSON type's own parse took an integer
               # past 64 bits for another value, and verify reported a sound copy)
               cast(tool_calls.c.arguments, Text))
        .where(tool_calls.c.session_id == sid)
    ).all()
    counts["calls"] += len(crows)
    stored_calls: dict[int, set[int]] = {}
    for pos, idx, call_id, minted, raw_name, wire, status, error, arguments in crows:
        stored_calls.setdefault(pos, set()).add(idx)
        if not _readable(report, "call", pos, idx, wire, call_search_text,
                         status in _PARSED):
            continue
        try:
            call = decode_call(call_id, wire, "ok", None, None, None, bool(minted))
        except Exception as exc:  # a record that no longer reads at all
            report("error", "wire", pos, idx, f"stored wire record does not read: {exc}")
            continue
        # (PostgreSQL's columns hold NUL as U+FFFD; the wire text keeps the exact value)
        if call.recorded_name != raw_name and _nul_free(call.recorded_name) != raw_name:
            report("error", "wire", pos, idx,
                   f"wire name {call.recorded_name!r} differs from raw_name {raw_name!r}")
        if not minted and call.id != call_id and _nul_free(call.id) != call_id:
            report("error", "wire", pos, idx, f"wire id {call.id!r} differs from {call_id!r}")
        parsed_status = call.status
        if parsed_status != status:
            report("error", "status", pos, idx,
                   f"stored status {status!r}, but the stored text parses as {parsed_status!r}")
        if isinstance(call, ToolCall) and arguments is not None:
            copy = loads_json(arguments) if isinstance(arguments, str) else arguments
            if copy != call.input and copy != _nul_free(call.input):
                report("error", "arguments", pos, idx,
                       "the queryable copy of the arguments differs from the stored text")
        if isinstance(call, InvalidToolCall) and arguments is not None:
            report("error", "arguments", pos, idx, "an invalid call has a queryable copy")
        del error
    rrows = conn.execute(
        select(tool_results.c.position, tool_results.c.result_index,
               tool_results.c.call_position, tool_results.c.call_index, tool_results.c.call_id,
               tool_results.c.content_json)
        .where(tool_results.c.session_id == sid)
    ).all()
    counts["results"] += len(rrows)
    stored_results: dict[int, set[int]] = {}
    for pos, idx, cpos, cidx, call_id, content in rrows:
        stored_results.setdefault(pos, set()).add(idx)
        _readable(report, "result", pos, idx, content, result_search_text, False)
        if cpos is None or cidx is None:
            report("warning", "orphan", pos, idx,
                   f"result for {call_id!r} is linked to no call (kept; repair drops it)")
        elif cidx not in stored_calls.get(cpos, set()):
            report("error", "link", pos, idx,
                   f"result is linked to call ({cpos}, {cidx}), which is not stored")
    for position, (call_refs, result_refs) in referenced.items():
        if call_refs != stored_calls.get(position, set()):
            report("error", "parts", position, None,
                   f"parts reference calls {sorted(call_refs)}, rows hold "
                   f"{sorted(stored_calls.get(position, set()))}")
        if result_refs != stored_results.get(position, set()):
            report("error", "parts", position, None,
                   f"parts reference results {sorted(result_refs)}, rows hold "
                   f"{sorted(stored_results.get(position, set()))}")
