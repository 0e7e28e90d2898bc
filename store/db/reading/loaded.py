"""A loaded session from its rows: the transcript (persistence; stdlib only, no SQLAlchemy:
``TranscriptStore.load`` and the command line's stdlib ``sessions show``
(:mod:`store.db.reading.lite_show`) share it). The session's info and the lineage walks are
:mod:`store.db.reading.walks`', which ``sessions tree`` reads without the message model.

The rows are those of ``store.db.writing.compiled._load_statement``: the first column says
which kind (:data:`LOAD_SESSION` ...), then the columns it documents, padded to one shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from operator import itemgetter
from typing import Any

from store.core.arguments import loads_json
from store.core.errors import SessionNotFound
from store.core.model import EMPTY_EXTRAS, DecodedOnUse, InvalidToolCall, Message, ToolCall
from store.core.transcript import CallRef, StoredMessage, Transcript
from store.db.packing import unpacked
from store.db.reading.walks import session_info
from store.records.codec import decode_call, decode_parts, decode_result
from store.tools.names import AliasTable

__all__ = ["LOAD_ALIASES", "LOAD_CALLS", "LOAD_MESSAGES", "LOAD_RESULTS", "LOAD_SESSION",
           "transcript_from_rows"]

#: The kinds of the load statement's rows (its first column).
LOAD_SESSION, LOAD_MESSAGES, LOAD_CALLS, LOAD_RESULTS, LOAD_ALIASES = range(5)
#: The session row's text columns, in the order the one-statement load returns them.
_SESSION_COLUMNS = ("session_id", "title", "provider", "model", "cwd", "agent", "tags_json",
                    "metadata_json", "parent_session_id", "lineage", "parent_call_id")
#: Where the load statement's times start (after 4 integer and 11 text columns).
_TIMES = 16
_second = itemgetter(1)
_position_index = itemgetter(1, 2)


def _by_position(rows: list[Any]) -> dict[int, list[Any]]:
    """Load rows (sorted) by their message's position."""
    out: dict[int, list[Any]] = {}
    for row in rows:
        at = out.get(row[1])
        if at is None:
            out[row[1]] = [row]
        else:
            at.append(row)
    return out


def _decoded_call(row: Any, apply: Callable[..., Any], agent: str | None
                  ) -> ToolCall | InvalidToolCall:
    """A call from its load row, named by the alias table."""
    _, _, _, _, _, call_id, wire, status, error, extras, source, *_, minted = row
    return apply(decode_call(call_id, wire, status, error, extras, source,  # type: ignore[no-any-return]
                             bool(minted)), agent)


def _decoded_message(row: Any, call_rows: list[Any], result_rows: list[Any],
                     apply: Callable[..., Any], agent: str | None) -> Message:
    """A message from its load row and its calls' and results' rows."""
    (_, _, _, _, _, _, role, source, parts, extras, meta, message_id) = row[:12]
    calls = {r[2]: _decoded_call(r, apply, agent) for r in call_rows}
    results = {r[2]: decode_result(r[5], r[6], bool(r[-1]), r[7], r[8], r[9])
               for r in result_rows}
    return Message(role, decode_parts(parts, calls, results), source, message_id,
                   DecodedOnUse(partial(_envelope, extras)) if extras else EMPTY_EXTRAS,
                   DecodedOnUse(partial(_envelope, meta)) if meta else EMPTY_EXTRAS)


def _envelope(stored: str | bytes) -> Any:
    """A message's stored metadata or extras (packed or text), decoded: at its first use
    (``DecodedOnUse``), not when the message is."""
    return loads_json(unpacked(stored))


def transcript_from_rows(rows: Sequence[Any], sid: str, read_time: Callable[[Any], datetime],
                         aliases: Callable[[str | None], AliasTable], *,
                         strict: bool = False) -> Transcript:
    """The transcript the load rows give (``SessionNotFound`` without a session row); each
    message decoded at its first use (``StoredMessage.deferred``), every call at once when
    ``strict`` (to raise the first invalid one's ``ToolArgumentsError`` here)."""
    by_kind: tuple[list[Any], ...] = ([], [], [], [], [])
    for row in rows:
        by_kind[row[0]].append(row)
    if not by_kind[LOAD_SESSION]:
        raise SessionNotFound(sid)
    srow = by_kind[LOAD_SESSION][0]
    # The database is asked for no order (see compiled._load_statement): the rows come
    # back mostly in index order, so these sorts are a linear pass.
    mrows = by_kind[LOAD_MESSAGES]
    mrows.sort(key=_second)
    crows = by_kind[LOAD_CALLS]
    crows.sort(key=_position_index)
    rrows = by_kind[LOAD_RESULTS]
    rrows.sort(key=_position_index)
    apply = aliases(by_kind[LOAD_ALIASES][0][5] if by_kind[LOAD_ALIASES] else None).apply
    agent = srow[10]
    call_rows = _by_position(crows)
    if strict:
        for row in crows:
            call = _decoded_call(row, apply, agent)
            if isinstance(call, InvalidToolCall):
                err = call.error
                err.args = (f"session {sid!r}, message {row[1]}, call {row[2]} "
                            f"({call.name}): {err.args[0]}",)
                raise err
    result_rows = _by_position(rrows)
    links: dict[CallRef, CallRef] = {(row[1], row[2]): (row[3], row[4]) for row in rrows
                                      if row[3] is not None and row[4] is not None}
    deferred = StoredMessage.deferred
    no_rows: list[Any] = []
    out = [deferred(row[1], row[5],
                    partial(_decoded_message, row, call_rows.get(row[1], no_rows),
                            result_rows.get(row[1], no_rows), apply, agent),
                    read_time, row[_TIMES])
           for row in mrows]
    info = session_info(dict(zip(_SESSION_COLUMNS, srow[5:_TIMES], strict=True),
                             created_at=read_time(srow[_TIMES]),
                             updated_at=read_time(srow[_TIMES + 1]),
                             started_at=srow[_TIMES + 2] and read_time(srow[_TIMES + 2]),
                             last_activity_at=srow[_TIMES + 3]
                             and read_time(srow[_TIMES + 3]),
                             next_position=srow[1], indexed_position=srow[2]))
    return Transcript(info, tuple(out), links)
