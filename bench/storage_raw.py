"""The raw baseline of ``bench/storage.py``: hand-written SQL on the plain schema, the same
logical work (canonical wire text, argument status, links, keys) through the raw driver."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from store.records.searchtext import call_search_text, result_search_text

SOURCE = "openai_chat"  # what the store's normalizer records for this shape
IN_CHUNK = 500  # bound parameters per IN (...) list on SQLite


# -- the raw baseline ---------------------------------------------------------------------------


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


@dataclass(slots=True)
class RawCall:
    id: str | None
    name: str
    raw_name: str | None
    arguments: dict[str, Any] | None
    arguments_text: str
    status: str
    error: str | None
    extras: dict[str, Any]
    source: str | None


@dataclass(slots=True)
class RawResult:
    call_id: str | None
    content: Any
    is_error: bool
    name: str | None
    extras: dict[str, Any]
    source: str | None


@dataclass(slots=True)
class RawMessage:
    position: int
    key: str | None
    role: str
    source: str | None
    parts: list[Any]
    extras: dict[str, Any]
    metadata: dict[str, Any]
    created_at: datetime


@dataclass(slots=True)
class RawSession:
    session_id: str
    title: str | None
    provider: str | None
    model: str | None
    cwd: str | None
    tags: tuple[str, ...]
    created_at: datetime
    updated_at: datetime
    next_position: int
    metadata: dict[str, Any]


@dataclass(slots=True)
class RawTranscript:
    session: RawSession
    messages: list[RawMessage]
    links: dict[tuple[int, int], tuple[int, int]]

    def calls(self) -> Iterator[RawCall]:
        for message in self.messages:
            for part in message.parts:
                if type(part) is RawCall:
                    yield part


@dataclass(slots=True)
class _Call:
    provider_id: str | None
    name: str
    wire_json: str
    status: str
    error: str | None
    arguments: dict[str, Any] | None


@dataclass(slots=True)
class _Prepared:
    role: str
    text: str
    parts_json: str
    calls: list[_Call]
    results: list[tuple[str | None, str]]  # (tool_call_id, content_json)


def _argument_status(text: str) -> tuple[str, str | None, dict[str, Any] | None]:
    """(status, error, parsed copy) of an argument text, as the store classifies it."""
    if not text.strip(" \t\n\r\f\v\x00"):
        return "empty", None, {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return "invalid_json", f"tool call arguments are not valid JSON: {exc}", None
    if type(value) is dict:
        return ("ok" if value else "empty"), None, value
    if value is None:
        return "empty", None, {}
    return "non_object_json", "tool call arguments must be a JSON object", None


def _prepare(record: dict[str, Any]) -> _Prepared:
    """Row values of one OpenAI Chat record (raises on a shape this baseline does not read)."""
    role = record["role"]
    if role == "tool":
        content = record.get("content")
        return _Prepared(role, "", '[{"type":"tool_result","index":0}]', [],
                         [(record.get("tool_call_id"), _dumps(content))])
    content = record.get("content")
    parts: list[dict[str, Any]] = []
    texts: list[str] = []
    if isinstance(content, str):
        if content:
            parts.append({"type": "text", "text": content})
            texts.append(content)
    elif content is not None:
        raise ValueError(f"the raw baseline reads text content only, got {type(content)}")
    calls: list[_Call] = []
    for index, tc in enumerate(record.get("tool_calls") or ()):
        fn = tc["function"]
        name = fn["name"]
        text = fn.get("arguments")
        if not isinstance(text, str):
            text = "{}" if text is None else _dumps(text)
        status, error, parsed = _argument_status(text)
        wire = _dumps({"id": tc.get("id"), "type": "function",
                       "function": {"name": name, "arguments": text}})
        calls.append(_Call(tc.get("id"), name, wire, status, error, parsed))
        parts.append({"type": "tool_call", "index": index})
    return _Prepared(role, "\n".join(texts), _dumps(parts), calls, [])


class RawStore:
    """Hand-written SQL on the store's schema; the dialects differ in SQL and transactions."""

    dialect = ""
    #: SQL, with ``?`` placeholders (PostgreSQL's subclass turns them into ``%s``).
    INSERT_SESSION = (
        "INSERT INTO sessions (session_id, title, provider, model, cwd, tags_json, "
        "metadata_json, created_at, updated_at, next_position) "
        "VALUES (?, NULL, NULL, NULL, NULL, '[]', '{}', ?, ?, 0) ON CONFLICT DO NOTHING"
    )
    LOCK_SESSION = "SELECT next_position FROM sessions WHERE session_id = ?"
    UPDATE_SESSION = "UPDATE sessions SET next_position = ?, updated_at = ? WHERE session_id = ?"
    INSERT_MESSAGE = (
        "INSERT INTO messages (session_id, position, message_key, role, source, text, "
        "parts_json, extras_json, metadata_json, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)"
    )
    INSERT_CALL = (
        "INSERT INTO tool_calls (session_id, position, call_index, call_id, id_minted, raw_name, "
        "wire_json, arguments_status, arguments_error, arguments, extras_json, source, "
        "wire_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, 1)"
    )
    INSERT_RESULT = (
        "INSERT INTO tool_results (session_id, position, result_index, call_id, call_position, "
        "call_index, is_error, name, content_json, extras_json, source) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, NULL, ?)"
    )
    LAST_CALL_POSITION = "SELECT max(position) FROM tool_calls WHERE session_id = ?"
    CALLS_AT = (
        "SELECT call_index, raw_name FROM tool_calls WHERE session_id = ? AND position = ? "
        "ORDER BY call_index"
    )
    ANSWERED_AT = (
        "SELECT call_index FROM tool_results WHERE session_id = ? AND call_position = ?"
    )
    SELECT_SESSION = (
        "SELECT session_id, title, provider, model, cwd, tags_json, metadata_json, created_at, "
        "updated_at, next_position FROM sessions WHERE session_id = ?"
    )
    SELECT_MESSAGES = (
        "SELECT position, message_key, role, source, parts_json, extras_json, metadata_json, "
        "created_at FROM messages WHERE session_id = ? ORDER BY position"
    )
    SELECT_CALLS = (
        "SELECT position, call_index, call_id, wire_json, arguments_status, arguments_error, "
        "extras_json, source, id_minted FROM tool_calls WHERE session_id = ? "
        "ORDER BY position, call_index"
    )
    SELECT_RESULTS = (
        "SELECT position, result_index, call_id, content_json, is_error, name, extras_json, "
        "source, call_position, call_index FROM tool_results WHERE session_id = ? "
        "ORDER BY position, result_index"
    )
    # The workload's sessions name no agent: the global rows apply.
    SELECT_ALIASES = "SELECT raw_name, current_name FROM tool_aliases WHERE agent = ''"
    COUNT_BY_TOOL = "SELECT raw_name, count(*) FROM tool_calls GROUP BY raw_name"
    WIRE_TEXTS = "SELECT session_id, position, call_index, wire_json FROM tool_calls"
    FIND_CALLS = (
        "SELECT session_id, position, call_index, call_id, raw_name FROM tool_calls "
        "WHERE instr(wire_json, ?) > 0 ORDER BY session_id, position, call_index"
    )

    # -- dialect hooks --------------------------------------------------------------------------

    def _write(self) -> Any:  # a context manager yielding nothing
        raise NotImplementedError

    def _read(self) -> Any:
        raise NotImplementedError

    def _all(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _exec(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def _time(self, value: datetime) -> Any:
        return value

    def _read_time(self, value: Any) -> datetime:
        return value  # type: ignore[no-any-return]

    def _json(self, value: dict[str, Any] | None) -> Any:
        raise NotImplementedError

    def _existing_keys(self, sid: str, keys: list[str]) -> set[str]:
        raise NotImplementedError

    def _prior_ids(self, sid: str, ids: list[str]) -> list[tuple[str, int, int]]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- the work -------------------------------------------------------------------------------

    def append(self, sid: str, records: Sequence[dict[str, Any]],
               keys: Sequence[str | None]) -> tuple[list[int], list[str], bool]:
        """Store the records in one transaction: (positions stored, keys skipped, created)."""
        prepared = [_prepare(r) for r in records]  # everything that can fail, first
        now = datetime.now(UTC)
        stamp = self._time(now)
        with self._write():
            created = self._exec(self.INSERT_SESSION, (sid, stamp, stamp)) > 0
            next_position = self._all(self.LOCK_SESSION, (sid,))[0][0]
            wanted = [k for k in keys if k is not None]
            existing = self._existing_keys(sid, wanted) if wanted else set()
            skipped: list[str] = []
            batch: list[tuple[int, str | None, _Prepared]] = []
            seen: set[str] = set()
            for key, prep in zip(keys, prepared, strict=True):
                if key is not None:
                    if key in existing or key in seen:
                        skipped.append(key)
                        continue
                    seen.add(key)
                batch.append((next_position + len(batch), key, prep))
            if not batch:
                return [], skipped, created
            # Results whose call is not earlier in this batch: look their ids up in one query.
            in_batch: set[str] = set()
            lookup: set[str] = set()
            for _, _, prep in batch:
                for call_id, _ in prep.results:
                    if call_id and call_id not in in_batch:
                        lookup.add(call_id)
                for call in prep.calls:
                    if call.provider_id:
                        in_batch.add(call.provider_id)
            by_id: dict[str, tuple[int, int]] = {}
            if lookup:
                for call_id, pos, idx in self._prior_ids(sid, sorted(lookup)):
                    by_id[call_id] = (pos, idx)  # ordered by position: the latest wins
            open_calls: list[tuple[tuple[int, int], str]] | None = None  # None: not read yet
            answered: set[tuple[int, int]] = set()
            message_rows: list[tuple[Any, ...]] = []
            call_rows: list[tuple[Any, ...]] = []
            result_rows: list[tuple[Any, ...]] = []
            for position, key, prep in batch:
                message_rows.append((sid, position, key, prep.role, SOURCE, prep.text,
                                     prep.parts_json, stamp))
                used: set[str] = set()
                opened: list[tuple[tuple[int, int], str]] = []
                for index, call in enumerate(prep.calls):
                    pid = call.provider_id
                    minted = not pid or pid in used
                    call_id = f"call_ts{position}x{index}" if minted else pid
                    used.add(call_id)  # type: ignore[arg-type]
                    if not minted:
                        by_id[pid] = (position, index)  # type: ignore[index]
                    opened.append(((position, index), call.name))
                    call_rows.append((sid, position, index, call_id, minted, call.name,
                                      call.wire_json, call.status, call.error,
                                      self._json(call.arguments), SOURCE))
                if opened:
                    open_calls = opened
                for index, (ref_id, content_json) in enumerate(prep.results):
                    ref = by_id.get(ref_id) if ref_id else None
                    if ref is None:  # by position: the first unanswered call of the last caller
                        if open_calls is None:
                            open_calls, answered = self._prior_open_calls(sid)
                        ref = next((r for r, _ in open_calls if r not in answered), None)
                    if ref is not None:
                        answered.add(ref)
                    result_rows.append((sid, position, index, ref_id,
                                        ref[0] if ref else None, ref[1] if ref else None,
                                        False, content_json, SOURCE))
            self._many(self.INSERT_MESSAGE, message_rows)
            if call_rows:
                self._many(self.INSERT_CALL, call_rows)
            if result_rows:
                self._many(self.INSERT_RESULT, result_rows)
            self._exec(self.UPDATE_SESSION, (next_position + len(batch), stamp, sid))
        return [p for p, _, _ in batch], skipped, created

    def _prior_open_calls(
        self, sid: str
    ) -> tuple[list[tuple[tuple[int, int], str]], set[tuple[int, int]]]:
        last = self._all(self.LAST_CALL_POSITION, (sid,))[0][0]
        if last is None:
            return [], set()
        calls = [((last, i), n) for i, n in self._all(self.CALLS_AT, (sid, last))]
        answered = {(last, i) for (i,) in self._all(self.ANSWERED_AT, (sid, last))}
        return calls, answered

    def load(self, sid: str) -> RawTranscript:
        with self._read():
            srows = self._all(self.SELECT_SESSION, (sid,))
            if not srows:
                raise KeyError(sid)
            mrows = self._all(self.SELECT_MESSAGES, (sid,))
            crows = self._all(self.SELECT_CALLS, (sid,))
            rrows = self._all(self.SELECT_RESULTS, (sid,))
            aliases = dict(self._all(self.SELECT_ALIASES, ()))
        loads = orjson.loads
        calls: dict[int, dict[int, RawCall]] = {}
        for pos, idx, call_id, wire_json, status, error, extras_json, source, minted in crows:
            wire = loads(wire_json)
            fn = wire["function"]
            raw_name = fn["name"]
            text = fn["arguments"]
            if status == "ok":
                arguments: dict[str, Any] | None = loads(text)
            elif status == "empty":
                arguments = {}
            else:
                arguments = None
            extras = loads(extras_json) if extras_json else {}
            if minted:
                extras["provider_id"] = wire.get("id")
                extras["id_minted"] = True
            name = aliases.get(raw_name, raw_name)
            calls.setdefault(pos, {})[idx] = RawCall(
                call_id, name, raw_name if name != raw_name else None, arguments, text, status,
                error, extras, source,
            )
        results: dict[int, dict[int, RawResult]] = {}
        links: dict[tuple[int, int], tuple[int, int]] = {}
        for pos, idx, call_id, content, is_error, name, extras_json, source, cpos, cidx in rrows:
            results.setdefault(pos, {})[idx] = RawResult(
                call_id, loads(content), bool(is_error), name,
                loads(extras_json) if extras_json else {}, source,
            )
            if cpos is not None and cidx is not None:
                links[(pos, idx)] = (cpos, cidx)
        out: list[RawMessage] = []
        for pos, key, role, source, parts_json, extras_json, meta_json, created in mrows:
            parts: list[Any] = loads(parts_json)
            for i, item in enumerate(parts):
                kind = item["type"]
                if kind == "tool_call":
                    parts[i] = calls[pos][item["index"]]
                elif kind == "tool_result":
                    parts[i] = results[pos][item["index"]]
            out.append(RawMessage(
                pos, key, role, source, parts, loads(extras_json) if extras_json else {},
                loads(meta_json) if meta_json else {}, self._read_time(created),
            ))
        s = srows[0]
        session = RawSession(s[0], s[1], s[2], s[3], s[4], tuple(loads(s[5])),
                             self._read_time(s[7]), self._read_time(s[8]), s[9], loads(s[6]))
        return RawTranscript(session, out, links)

    def count_calls_by_tool(self) -> dict[str, int]:
        with self._read():
            rows = self._all(self.COUNT_BY_TOOL, ())
            aliases = dict(self._all(self.SELECT_ALIASES, ()))
        counts: dict[str, int] = {}
        for raw, n in rows:
            name = aliases.get(raw, raw)
            counts[name] = counts.get(name, 0) + int(n)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def find_calls(self, contains: str) -> list[tuple[str, int, int, str, str, str]]:
        """(session, position, index, call id, name, raw name) of the calls whose argument
        text contains ``contains``: escaped twice, as the wire text holds it."""
        needle = _dumps(_dumps(contains)[1:-1])[1:-1]
        with self._read():
            rows = self._all(self.FIND_CALLS, (needle,))
            aliases = dict(self._all(self.SELECT_ALIASES, ()))
        return [(sid, pos, idx, cid, aliases.get(raw, raw), raw)
                for sid, pos, idx, cid, raw in rows]

    def search_rows(self) -> list[tuple[Any, ...]]:
        """(session, call position, call index, decoded text) of every call and result: what
        a hand-written store would feed a text index in bulk (same decoded text as ours)."""
        with self._read():
            calls = self._all(self.WIRE_TEXTS, ())
            results = self._all("SELECT session_id, call_position, call_index, content_json "
                                "FROM tool_results", ())
        return [*((s, p, i, call_search_text(w)) for s, p, i, w in calls),
                *((s, p, i, result_search_text(c)) for s, p, i, c in results)]

    def build_indexes(self) -> None:  # the audit B-trees and the text index, in bulk
        raise NotImplementedError

    def full_text(self, needle: str, limit: int = 50) -> list[tuple[Any, ...]]:
        """The oldest ``limit`` calls whose decoded text, or a linked result's, holds
        ``needle``, with their first result (what the store's full-text search returns)."""
        with self._read():
            rows = self._all(self.FULL_TEXT, (self._needle(needle), limit))
            keys = [(r[0], r[1], r[2]) for r in rows]
            first: dict[tuple[str, int, int], tuple[Any, ...]] = {}
            if keys:
                cond = " OR ".join(["(session_id = ? AND call_position = ? AND call_index = ?)"]
                                   * len(keys))
                sql = ("SELECT session_id, call_position, call_index, is_error, content_json "
                       f"FROM tool_results WHERE {cond} ORDER BY session_id, position, "
                       "result_index")
                if self.dialect == "postgresql":
                    sql = _pg(sql)
                for r in self._all(sql, [v for k in keys for v in k]):
                    first.setdefault((r[0], r[1], r[2]), r)
        return [(*r, first.get((r[0], r[1], r[2]))) for r in rows]

    def _needle(self, needle: str) -> str:
        return needle

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every stored row that the two implementations must agree on (for the checks)."""
        with self._read():
            return {
                "sessions": self._all(
                    "SELECT session_id, tags_json, metadata_json, next_position FROM sessions "
                    "ORDER BY session_id", ()),
                "messages": self._all(
                    "SELECT session_id, position, message_key, role, source, text, parts_json, "
                    "extras_json, metadata_json FROM messages ORDER BY session_id, position", ()),
                "tool_calls": [r[:-1] + (orjson.loads(r[-1]) if isinstance(r[-1], str)
                                         else r[-1],) for r in self._all(
                    "SELECT session_id, position, call_index, call_id, id_minted, raw_name, "
                    "wire_json, arguments_status, arguments_error, extras_json, source, "
                    "wire_version, arguments FROM tool_calls "
                    "ORDER BY session_id, position, call_index", ())],
                "tool_results": self._all(
                    "SELECT session_id, position, result_index, call_id, call_position, "
                    "call_index, is_error, name, content_json, extras_json, source "
                    "FROM tool_results ORDER BY session_id, position, result_index", ()),
                "tool_aliases": self._all(
                    "SELECT agent, raw_name, current_name FROM tool_aliases "
                    "ORDER BY agent, raw_name", ()),
            }

def _pg(sql: str) -> str:
    return sql.replace("?", "%s")
