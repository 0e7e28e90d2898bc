"""A call's wire text stored once on SQLite (issue 39 item 2, revision 0030): the writer stores
``''`` where SQLite rebuilds the wire text byte for byte from the row's id, raw name and
queryable arguments, and every reader gets the text back exact: the load, the search, the
audit, ``find_calls``, ``verify`` and the chains, the search index. What does not rebuild
stays whole: a provider's spacing in the argument text, a minted id, arguments that are not
an object (a list, a bare number the column would keep as a number), invalid arguments.
``db compact`` stores once what was written before; the downgrade writes every text back.
PostgreSQL stores every text whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
from backends import empty_postgres
from sqlalchemy import create_engine, text

import store
from store import TranscriptStore
from store.db.schema import migrate
from store.db.schema.engine import create_store_engine
from store.db.schema.wiretext import wire_sql


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


#: (call id, raw name, argument text exactly as emitted, whether its wire text rebuilds).
CALLS = [
    ("c1", "bash", '{"command":"ls -la"}', True),
    ("c2", "bash", '{"command": "ls -la"}', False),  # a provider's spacing: kept whole
    ("c3", "edit_file", '{"path":"a\\\\b.py","new":"line\\none\\ttab \\"q\\" \\u0001"}', True),
    ("c4", "write", '{"text":"héllo ✓ 😀 end","n":12345678901234567890123}', True),
    # what another SQLite release might escape otherwise: kept whole
    ("c4b", "write", '{"text":"line\u2028separator"}', False),
    ("c4c", "write", '{"text":"del \x7f"}', False),
    ("c5", "grep", '[1,2]', False),  # not an object
    ("c6", "noop", "5", False),  # a bare number: the column would keep 5, not "5"
    ("c7", "broken", '{"command": "ls', False),  # invalid: kept verbatim
    ("c1", "bash", '{"command":"pwd"}', True),  # an id seen before (not minted: rebuilds)
    ("", "bash", '{"command":"whoami"}', False),  # no id: one is minted, the wire keeps ""
    ("c9", "名前", '{"k":"v"}', False),  # a name past printable ASCII: kept whole
    ("c10", "empty", "{}", True),
]


def _messages() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "run them"}]
    for call_id, name, arguments, _ in CALLS:
        out.append({"role": "assistant", "content": None,
                    "tool_calls": [_call(call_id, name, arguments)]})
        if call_id:
            out.append({"role": "tool", "tool_call_id": call_id, "content": f"done {name}"})
    return out


def _stored(url: str) -> list[tuple[str, str, bool]]:
    """Per call in order: its stored ``wire_json``, the text the readers' SQL gives, minted."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [(str(a), str(b), bool(c)) for a, b, c in conn.execute(text(
                f"SELECT wire_json, {wire_sql(url.startswith('postgresql'))}, id_minted "
                "FROM tool_calls ORDER BY position, call_index"))]
    finally:
        engine.dispose()


def _arguments(opened: TranscriptStore) -> list[tuple[str, str, str]]:
    return [(c.id, c.recorded_name, c.arguments_text) for m in opened.load("s").messages
            for c in m.message.tool_calls]


def test_sqlite_stores_a_rebuildable_wire_text_once_and_every_reader_gets_it_exact(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'w.sqlite'}"
    with TranscriptStore.open(url) as opened:
        opened.append("s", _messages())
        loaded = _arguments(opened)
        # Every argument text comes back exactly as emitted, rebuilt or not.
        assert [(n, a) for _, n, a, _ in CALLS] == [(n, t) for _, n, t in loaded]
        kept = [i for i, *_ in loaded if not i.startswith("call_ts")]  # (minted: call_ts...)
        assert kept == [c[0] for c in CALLS if c[0]]
        opened.update_search_index()
        verified = opened.verify()
        assert verified.ok, verified.problems
        # Readers of the wire text: find_calls (an exact substring of it), the audit search
        # (its arguments and the search index built from the wire text), the schema audit.
        assert [h.call_id for h in opened.find_calls('ls -la')] == ["c1", "c2"]
        assert [h.call_id for h in opened.find_calls("😀")] == ["c4"]
        assert [h.call_id for h in opened.find_calls("separator")] == ["c4b"]
        found = store.search_calls(opened, store.CallQuery(text="héllo"))
        assert [h.call_id for h in found] == ["c4"]
        assert [h.arguments_text for h in store.search_calls(
            opened, store.CallQuery(raw_name="edit_file"))] == [CALLS[2][2]]
        assert store.count_calls(opened, store.CallQuery(text="ls -la")) == 2
    stored = _stored(url)
    elided = [wire == "" for wire, _, _ in stored]
    assert elided == [rebuilds for *_, rebuilds in CALLS]
    # The readers' SQL gives, for every row, the canonical wire text the writer was given.
    for (call_id, name, arguments, _), (wire, read, minted) in zip(CALLS, stored, strict=True):
        provider = orjson.loads(read)
        assert provider["function"] == {"name": name, "arguments": arguments}
        assert provider["id"] == call_id
        assert wire in ("", read)
        assert minted == (call_id == "")
    # A read-only open and the command line's stdlib reader give the same calls.
    with store.ReadOnlyStore.open(url) as reader:
        assert [(c.id, c.recorded_name, c.arguments_text) for m in reader.load("s").messages
                for c in m.message.tool_calls] == loaded
    done = subprocess.run([sys.executable, "-m", "store", "calls", "search", "--json", "--db",
                           str(tmp_path / "w.sqlite"), "--limit", "0"],
                          capture_output=True, text=True, timeout=120, check=True)
    assert [orjson.loads(line)["arguments"] for line in done.stdout.strip().split("\n")] == [
        a for _, _, a, _ in CALLS]


def test_compact_stores_once_what_was_written_whole_and_downgrade_writes_it_back(
        tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    url = f"sqlite:///{path}"
    with TranscriptStore.open(url) as opened:
        opened.append("s", _messages())
        before = _arguments(opened)
    engine = create_store_engine(url)
    try:
        migrate.downgrade(engine, "0029")  # every text back in full, as the release before
        assert all(wire == read and wire for wire, read, _ in _stored(url))
        migrate.upgrade(engine)
    finally:
        engine.dispose()
    with TranscriptStore.open(url) as opened:
        assert _arguments(opened) == before
        report = store.compact_database(opened)
        assert report.wires == sum(rebuilds for *_, rebuilds in CALLS) == 5
        assert _arguments(opened) == before
        verified = opened.verify()
        assert verified.ok, verified.problems
        again = store.compact_database(opened, vacuum=False)
        assert again.wires == 0
    assert [wire == "" for wire, _, _ in _stored(url)] == [r for *_, r in CALLS]


def test_postgres_keeps_every_wire_text_whole(postgres_url: str) -> None:
    empty_postgres(postgres_url)
    with TranscriptStore.open(postgres_url) as opened:
        opened.append("s", _messages())
        assert [(n, t) for _, n, t in _arguments(opened)] == [(n, t) for _, n, t, _ in CALLS]
    assert all(wire and wire == read for wire, read, _ in _stored(postgres_url))
