"""A bulk append's rows sent as COPY (PostgreSQL, ``store/db/writing/flight.py``) are the rows
the bound inserts store: every column of every row the same, whatever the text holds (COPY's
own escapes: tab, newline, backslash, ``\\N``, ``\\.``), the loaded transcript the same, and
``verify`` content. On a Citus cluster too, where COPY goes to the shards."""

from __future__ import annotations

from typing import Any

import pytest
from backends import CITUS_URL, empty_postgres
from sqlalchemy import create_engine, text

from store import TranscriptStore
from store.db.writing import flight

pytestmark = pytest.mark.postgres

#: Texts that COPY's text format escapes, or that a careless writer would.
TRICKY = ["tab\there", "line\nbreak", "carriage\r\nreturn", "back\\slash", "\\N", "\\.",
          "a\\.\nb", "quote ' and \"double\"", "emoji 🦜 and non-BMP 𝔘𝔫𝔦", "\ufffd kept",
          "\x01\x02 control", "null\x00inside", "   padded   ", "", "x" * 70_000,
          "{\"looks\": \"like json\"}", "E'\\\\x00'"]


def _batch(tag: str) -> list[dict[str, Any]]:
    """Enough of every row kind to be sent as COPY (16 or more each), holding the tricky
    texts in message text, arguments, results, ids and extras."""
    out: list[dict[str, Any]] = []
    for i, value in enumerate(TRICKY * 2):
        call_id = f"{tag}-{i}-{value[:8]}"
        arguments = f'{{"command": {_json(value)}, "n": {i}, "big": 12345678901234567890}}' \
            if i % 5 else f"not json {value[:40]}"  # every fifth: invalid arguments, kept
        out.append({"role": "user", "content": value or "(empty)"})
        out.append({"role": "assistant", "content": value, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "bash" if i % 2 else "run\tthing", "arguments": arguments}}]})
        out.append({"role": "tool", "tool_call_id": call_id,
                    "content": value if i % 3 else [{"type": "text", "text": value}]})
    return out


def _json(value: str) -> str:
    import orjson

    return orjson.dumps(value).decode()


def _rows(url: str, sid: str) -> dict[str, list[dict[str, Any]]]:
    """Every stored column of the session's rows (but the session id), per table."""
    engine = create_engine(url)
    out: dict[str, list[dict[str, Any]]] = {}
    try:
        with engine.connect() as conn:
            for table, order, skip in (
                    ("messages", "position", ("session_id", "created_at", "digest")),
                    ("tool_calls", "position, call_index", ("session_id",)),
                    ("tool_results", "position, result_index", ("session_id",))):
                columns = [c for (c,) in conn.execute(text(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = :t "
                    "ORDER BY ordinal_position"), {"t": table}) if c not in skip]
                out[table] = [dict(zip(columns, row, strict=True)) for row in conn.execute(text(
                    f"SELECT {', '.join(columns)} FROM {table} WHERE session_id = :s "
                    f"ORDER BY {order}"), {"s": sid})]
    finally:
        engine.dispose()
    return out


def _transcript(db: TranscriptStore, sid: str) -> list[Any]:
    return [(m.position, m.message.role, m.message.parts, dict(m.message.extras))
            for m in db.load(sid).messages]


@pytest.mark.parametrize("backend", [
    "postgres", *([pytest.param("citus", marks=pytest.mark.citus)] if CITUS_URL else [])])
def test_rows_sent_as_copy_are_the_rows_the_bound_inserts_store(backend, request,
                                                                 monkeypatch):
    url: str = request.getfixturevalue(f"{backend}_url")
    empty_postgres(url)
    batch = _batch("t")
    with TranscriptStore.open(url) as db:
        # binding made dear: every insert of 16 rows or more goes as COPY
        monkeypatch.setattr(flight, "ROW_BIND_SECONDS", 1.0)
        copied = db.append("copied", batch)
    with TranscriptStore.open(url) as db:
        # binding made free: every row is bound into the flights (below MANY_ROWS)
        monkeypatch.setattr(flight, "ROW_BIND_SECONDS", 1e-15)
        bound = db.append("bound", batch)
        assert len(copied.stored) == len(bound.stored) == len(batch)
        assert _transcript(db, "copied") == _transcript(db, "bound")
        calls = [c for m in db.load("copied").messages for c in m.message.tool_calls]
        assert sum(not c.is_valid for c in calls) == len(TRICKY * 2) // 5 + 1
        assert all(c.input["big"] == 12345678901234567890 for c in calls if c.is_valid)
        report = db.verify()
        assert report.ok, report
    copied_rows, bound_rows = _rows(url, "copied"), _rows(url, "bound")
    assert copied_rows == bound_rows
    assert len(copied_rows["tool_calls"]) == len(copied_rows["tool_results"]) == len(TRICKY * 2)
    texts = [row["text"] for row in copied_rows["messages"]]  # (NUL as U+FFFD)
    assert "null\ufffdinside" in texts and "a\\.\nb" in texts and "\\N" in texts


def test_the_link_decides_from_how_many_rows_copy_pays():
    """Two round trips against ~10 us of binding a row: never under 16 rows; from 200 rows
    over a link of 1 ms; from 2,000 over 10 ms (where executemany, from 500, comes first)."""
    assert flight.copy_from(0.0) == flight.COPY_MIN_ROWS == 16
    assert flight.copy_from(0.00005) == 16
    assert flight.copy_from(0.001) == 200
    assert flight.copy_from(0.010) == 2000
