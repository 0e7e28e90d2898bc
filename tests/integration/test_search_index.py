"""The search index off the write path (issue 15), on both backends.

* Full text matches **decoded** text, never JSON escape sequences (``nfoo`` is not a newline
  followed by ``foo``), whether the index has caught up or the search scans the rows it has not.
* Appends index nothing; the index catches up from the watermark (``sessions.indexed_position``)
  in bulk, at the first search of a writable store or on ``update_search_index``; a read-only
  store never writes and still answers fresh.
* Never stale: append, then search at once, also with other processes writing and catching up
  at the same time; truncating and deleting leave no stale text.
* The argument views (``calls search --command/--path/--pattern/--url``) are derived data of
  the same catch-up: appends write none, a search finds every committed call at once.
* A differential test: full-text and argument searches on SQLite and PostgreSQL give the calls
  that a pure-Python reference (written here, from the definition) gives, before and after the
  catch-up.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text as sql

from store import (
    ArgumentCondition,
    CallQuery,
    TranscriptStore,
    ViewCondition,
    iter_calls,
    search_calls,
)

HELPER = Path(__file__).resolve().parents[1] / "helpers_procs.py"


def chat_call(call_id: str, arguments: str, name: str = "bash") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def tool(call_id: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def found(store: TranscriptStore, needle: str) -> list[str]:
    return sorted(m.call_id for m in search_calls(store, CallQuery(text=needle), limit=1000))


def contains(store: TranscriptStore, path: str, needle: str) -> list[str]:
    query = CallQuery(where=(ArgumentCondition(path, "contains", needle),))
    return sorted(m.call_id for m in search_calls(store, query, limit=1000))


def equal(store: TranscriptStore, path: str, value: Any) -> list[str]:
    query = CallQuery(where=(ArgumentCondition(path, "eq", value),))
    return sorted(m.call_id for m in search_calls(store, query, limit=1000))


def behind(store: TranscriptStore) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sql("SELECT count(*) FROM sessions "
                                    "WHERE next_position > indexed_position")).scalar_one())


def items(store: TranscriptStore) -> int:
    """The calls and results with their search text (revision 0023: in their rows)."""
    with store.engine.connect() as conn:
        return int(conn.execute(sql(
            "SELECT (SELECT count(*) FROM tool_calls WHERE search_body IS NOT NULL) "
            "+ (SELECT count(*) FROM tool_results WHERE search_body IS NOT NULL)")).scalar_one())


ESCAPES = [
    assistant(chat_call("c1", '{"command": "echo a\\nfoo"}'),  # a newline, escaped as \n
              chat_call("c2", '{"path": "C:\\\\new\\\\tab"}'),  # real backslashes
              chat_call("c3", '{"q": "caf\\u00e9 \\"quoted\\""}'),  # é and quotes, escaped
              chat_call("c4", '{"pattern": "need\\u0041le", broken')),  # invalid: kept as is
    tool("c1", "first\nsecond\ttabbed"),
    tool("c2", [{"type": "text", "text": "done: \u00fcbersicht"}]),
]


@pytest.fixture(params=["indexed", "scanned"])
def reader(request: pytest.FixtureRequest, store: TranscriptStore, store_url: str):
    """The store after ESCAPES was appended: caught up (writable), or read-only (the search
    scans what is not indexed, and writes nothing)."""
    store.append("escapes", ESCAPES)
    if request.param == "indexed":
        assert store.update_search_index().calls == 4
        yield store
    else:
        with TranscriptStore.open(store_url, read_only=True) as opened:
            yield opened
        assert items(store) == 0 and behind(store) == 1  # the read-only searches wrote nothing


class TestDecodedText:
    @pytest.mark.parametrize(("needle", "expected"), [
        ("nfoo", []),  # the escape sequence of a newline is not text
        ("a\nfoo", ["c1"]),  # the newline is
        ("A\nFOO", ["c1"]),  # case-insensitively
        ("\\new", ["c2"]),  # a real backslash followed by "new"
        ("\\\\new", []),  # the JSON escape of that backslash is not text
        ("café", ["c3"]),  # written as \u00e9
        ("u00e9", []),
        ('"quoted"', ["c3"]),
        ('\\"quoted', []),
        ("need\\u0041le", ["c4"]),  # invalid arguments: the recorded text, as recorded
        ("tsecond", []),  # results too: a newline, not "\n"
        ("second\ttab", ["c1"]),
        ("übersicht", ["c2"]),
        ("nowhere", []),
    ])
    def test_full_text(self, reader: TranscriptStore, needle: str, expected: list[str]) -> None:
        assert found(reader, needle) == expected

    def test_argument_conditions(self, reader: TranscriptStore) -> None:
        assert contains(reader, "command", "a\nfoo") == ["c1"]
        assert contains(reader, "command", "nfoo") == []
        assert contains(reader, "q", 'é "quo') == ["c3"]
        assert equal(reader, "q", 'café "quoted"') == ["c3"]
        assert equal(reader, "q", "café") == []
        assert equal(reader, "path", "C:\\new\\tab") == ["c2"]


class TestCatchUp:
    def test_appends_index_nothing_and_a_catch_up_indexes_everything_once(
        self, store: TranscriptStore
    ) -> None:
        for n in range(3):
            store.append(f"s{n}", [assistant(chat_call(f"c{n}", '{"command": "ls"}')),
                                   tool(f"c{n}", "a.txt")])
        assert items(store) == 0 and behind(store) == 3

        done = store.update_search_index()

        assert (done.sessions, done.calls, done.results) == (3, 3, 3)
        assert items(store) == 6 and behind(store) == 0
        assert store.update_search_index().sessions == 0  # nothing new, nothing done
        store.append("s0", [assistant(chat_call("c9", '{"command": "pwd"}'))])
        again = store.update_search_index()
        assert (again.sessions, again.calls, again.results) == (1, 1, 0)  # only what is new

    def test_the_first_search_of_a_writable_store_catches_up(self, store: TranscriptStore
                                                             ) -> None:
        store.append("s", [assistant(chat_call("c1", '{"command": "make test"}'))])

        assert found(store, "make test") == ["c1"]
        assert behind(store) == 0 and items(store) == 1

    def test_searches_without_text_leave_the_index_alone(self, store: TranscriptStore) -> None:
        store.append("s", [assistant(chat_call("c1", '{"command": "make"}'))])

        assert [m.call_id for m in search_calls(store, CallQuery(tool="bash"))] == ["c1"]
        assert behind(store) == 1

    def test_progress_is_reported_per_chunk(self, store: TranscriptStore) -> None:
        for n in range(3):
            store.append(f"s{n}", [assistant(chat_call(f"c{n}", '{"command": "ls"}'))])
        seen: list[tuple[int, int, int]] = []

        store.update_search_index(progress=lambda done, waiting: seen.append(
            (done.sessions, waiting, done.messages)))

        # the call index's chunk, then the message index's (store/db/index/message_index.py)
        assert seen == [(3, 3, 0), (3, 3, 3)]

    def test_a_read_only_store_does_not_catch_up(self, store: TranscriptStore, store_url: str
                                                 ) -> None:
        store.append("s", [assistant(chat_call("c1", '{"command": "ls"}'))])
        with TranscriptStore.open(store_url, read_only=True) as opened:
            assert opened.update_search_index().sessions == 0
            assert found(opened, "\nls\n") == ["c1"]  # the value, whole
            assert found(opened, "command") == ["c1"]
        assert behind(store) == 1


class TestNeverStale:
    @pytest.mark.parametrize("read_only", [False, True])
    def test_append_then_search_at_once(self, store: TranscriptStore, store_url: str,
                                        read_only: bool) -> None:
        with TranscriptStore.open(store_url, read_only=read_only) as searcher:
            for n in range(12):
                store.append(f"s{n % 3}", [assistant(chat_call(f"c{n}",
                                                               json.dumps({"q": f"mk{n}x"})))])
                assert found(searcher, f"mk{n}x") == [f"c{n}"]
                assert contains(searcher, "q", f"mk{n}") == [f"c{n}"]
                assert equal(searcher, "q", f"mk{n}x") == [f"c{n}"]

    def test_truncate_and_append_again_leave_no_stale_text(self, store: TranscriptStore) -> None:
        store.append("s", [assistant(chat_call("c1", '{"command": "old text"}')),
                           tool("c1", "old result")])
        assert found(store, "old") == ["c1"]  # indexed

        store.truncate("s", 0)
        store.append("s", [assistant(chat_call("c2", '{"command": "new text"}')),
                           tool("c2", "new result")])

        assert found(store, "old") == []
        assert found(store, "new result") == ["c2"]
        assert behind(store) == 0

    def test_truncate_inside_the_indexed_part(self, store: TranscriptStore) -> None:
        store.append("s", [assistant(chat_call(f"c{n}", json.dumps({"n": f"v{n}v"})))
                           for n in range(4)])
        assert found(store, "v3v") == ["c3"]

        store.truncate("s", 2)

        assert found(store, "v3v") == [] and found(store, "v1v") == ["c1"]
        store.append("s", [assistant(chat_call("c9", '{"n": "v9v"}'))])
        assert found(store, "v9v") == ["c9"] and found(store, "v2v") == []

    def test_a_deleted_session_is_not_found(self, store: TranscriptStore) -> None:
        store.append("gone", [assistant(chat_call("c1", '{"command": "secret thing"}'))])
        store.append("kept", [assistant(chat_call("c2", '{"command": "secret other"}'))])
        assert found(store, "secret") == ["c1", "c2"]

        store.delete_session("gone")

        assert found(store, "secret") == ["c2"]

    def test_a_fork_is_indexed_as_its_own_session(self, store: TranscriptStore) -> None:
        store.append("s", [assistant(chat_call("c1", '{"command": "forked text"}'))])
        assert found(store, "forked") == ["c1"]

        store.fork("s", 1, "copy")

        assert sorted((m.session_id, m.call_id) for m in search_calls(
            store, CallQuery(text="forked"))) == [("copy", "c1"), ("s", "c1")]

    def test_concurrent_writers_and_searchers(self, store_url: str, tmp_path: Path) -> None:
        """Four processes append and at once search for what they appended (full text, an
        argument condition, an argument view; through a writable store, which catches the
        index up while the others write, and through a read-only one): every search finds the
        call that was just committed, and only it."""
        rounds = 10
        procs = []
        for worker in range(4):
            out = tmp_path / f"fresh{worker}.jsonl"
            procs.append((out, subprocess.Popen(
                [sys.executable, str(HELPER), "fresh", store_url, str(worker), str(rounds),
                 str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        lines = []
        for out, proc in procs:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
            lines.extend(json.loads(line) for line in out.read_text().splitlines())

        assert len(lines) == 4 * rounds
        stale = [line for line in lines
                 if not line["text"] == line["where"] == line["view"] == [line["call_id"]]]
        assert stale == []
        assert {line["read_only"] for line in lines} == {True, False}
        with TranscriptStore.open(store_url) as opened:
            opened.update_search_index()
            assert behind(opened) == 0
            assert len(found(opened, "mark-w")) == 4 * rounds


def viewed(store: TranscriptStore, view: str, value: str, op: str = "contains",
           session_id: str | None = None) -> list[str]:
    query = CallQuery(views=(ViewCondition(view, value, op),),  # type: ignore[arg-type]
                      session_id=session_id)
    return sorted(m.call_id for m in search_calls(store, query, limit=1000))


def view_rows(store: TranscriptStore) -> set[tuple[Any, ...]]:
    with store.engine.connect() as conn:
        return {tuple(row) for row in conn.execute(sql(
            "SELECT session_id, position, call_index, view, text FROM call_views"))}


class TestArgumentViews:
    def test_appends_write_no_view_and_the_catch_up_writes_them(self, store: TranscriptStore
                                                                ) -> None:
        store.append("s", [assistant(
            chat_call("c1", '{"command": "rm -rf build"}'),
            chat_call("c2", '{"path": "src", "pattern": "TODO\\u0000"}', name="Grep"),
            chat_call("c3", '{"command": ["bash", "-lc", "make test"]}', name="shell"),
            chat_call("c4", '{"url": "https://example.com"', name="web_fetch"))])  # invalid
        assert view_rows(store) == set()

        store.update_search_index()

        assert view_rows(store) == {
            ("s", 0, 0, "command", "rm -rf build"), ("s", 0, 1, "path", "src"),
            ("s", 0, 1, "pattern", "TODO\ufffd"), ("s", 0, 2, "command", "make test")}

    def test_a_view_search_of_a_writable_store_catches_up(self, store: TranscriptStore
                                                          ) -> None:
        store.append("s", [assistant(chat_call("c1", '{"command": "rm -rf build"}'))])

        assert viewed(store, "command", "rm -rf") == ["c1"]
        assert behind(store) == 0 and len(view_rows(store)) == 1

    @pytest.mark.parametrize("read_only", [False, True])
    def test_append_then_view_search_at_once(self, store: TranscriptStore, store_url: str,
                                             read_only: bool) -> None:
        with TranscriptStore.open(store_url, read_only=read_only) as searcher:
            for n in range(6):
                sid = f"s{n % 2}"
                store.append(sid, [assistant(chat_call(f"c{n}", json.dumps(
                    {"command": f"make t{n}x", "file_path": f"/src/m{n}.py"})))])
                assert viewed(searcher, "command", f"t{n}x") == [f"c{n}"]
                assert viewed(searcher, "command", f"T{n}X", "icontains") == [f"c{n}"]
                assert viewed(searcher, "command", f"^make t{n}x$", "regex") == [f"c{n}"]
                assert viewed(searcher, "path", f"m{n}.py", session_id=sid) == [f"c{n}"]
                assert viewed(searcher, "path", f"m{n}.py", session_id="s9") == []

    def test_caught_up_and_not_yet_caught_up_calls_are_found_together(
        self, store: TranscriptStore, store_url: str
    ) -> None:
        store.append("s", [assistant(chat_call("c1", '{"command": "make one"}'))])
        store.update_search_index()
        store.append("s", [assistant(chat_call("c2", '{"command": "make two"}'))])
        store.append("t", [assistant(chat_call("c3", '{"command": "make three"}'))])

        with TranscriptStore.open(store_url, read_only=True) as opened:
            assert viewed(opened, "command", "make") == ["c1", "c2", "c3"]
        # A search of one session scans its own tail and catches nothing up.
        assert viewed(store, "command", "make", session_id="s") == ["c1", "c2"]
        assert behind(store) == 2
        assert viewed(store, "command", "make") == ["c1", "c2", "c3"]
        assert behind(store) == 0

    def test_truncate_and_delete_leave_no_stale_view(self, store: TranscriptStore) -> None:
        store.append("s", [assistant(chat_call("c1", '{"command": "old cmd"}'))])
        store.append("gone", [assistant(chat_call("c2", '{"command": "old cmd"}'))])
        assert viewed(store, "command", "old") == ["c1", "c2"]

        store.truncate("s", 0)
        store.append("s", [assistant(chat_call("c3", '{"command": "new cmd"}'))])
        store.delete_session("gone")

        assert viewed(store, "command", "old") == []
        assert viewed(store, "command", "cmd") == ["c3"]
        assert {row[4] for row in view_rows(store)} == {"new cmd"}


# -- differential: both backends against a pure-Python reference ------------------------------

PIECES = ["foo", "nfoo", "\n", "\t", '"', "\\", "\\n", "u00e9", "é", "ü", "日本", "🙂", "Bar",
          "rm -rf /", "C:\\Users", "x" * 5, " ", "{", "}", ":", ",", "null", "42"]


def _string(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 5)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth < 2 and kind < 0.2:
        return {f"k{i}{_string(rng)[:3]}": _value(rng, depth + 1) for i in range(rng.randint(1, 3))}
    if depth < 2 and kind < 0.3:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind < 0.4:
        return rng.choice([None, True, False, rng.randint(-5, 10**6)])
    return _string(rng)


def _arguments_text(rng: random.Random, value: Any) -> str:
    style = rng.random()
    if style < 0.1:
        return json.dumps(value)[:-1] + " oops"  # invalid: kept as recorded
    if style < 0.4:
        return json.dumps(value, ensure_ascii=True)  # non-ASCII as \\u escapes
    if style < 0.6:
        return json.dumps(value, ensure_ascii=False, indent=2)
    return json.dumps(value, ensure_ascii=False)


def _reference_text(value: Any) -> str:
    """The definition, written again: keys, strings, numbers and literals decoded, each on a
    line of its own, the whole between line breaks."""
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for key, item in v.items():
                out.append(key)
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)
        else:
            out.append(v if isinstance(v, str) else json.dumps(v))

    walk(value)
    return "\n" + "\n".join(out) + "\n"


def _dataset(seed: int) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[str]],
                                 dict[str, Any]]:
    """Sessions of records, the searchable texts of each call (its own and its results'), and
    each valid call's arguments."""
    rng = random.Random(seed)
    sessions: dict[str, list[dict[str, Any]]] = {}
    texts: dict[str, list[str]] = {}
    arguments: dict[str, Any] = {}
    number = 0
    for s in range(4):
        records: list[dict[str, Any]] = []
        for _ in range(8):
            calls = []
            for _ in range(rng.randint(1, 2)):
                number += 1
                call_id = f"d{number}"
                value = {"command": _string(rng), "extra": _value(rng)}
                text = _arguments_text(rng, value)
                calls.append(chat_call(call_id, text))
                try:
                    arguments[call_id] = json.loads(text)
                    texts[call_id] = [_reference_text(arguments[call_id])]
                except ValueError:
                    texts[call_id] = ["\n" + text + "\n"]
            records.append(assistant(*calls))
            for call in calls:
                content = rng.choice([_string(rng), [{"type": "text", "text": _string(rng)}]])
                records.append(tool(call["id"], content))
                texts[call["id"]].append(_reference_text(content))
        sessions[f"diff{s}"] = records
    return sessions, texts, arguments


def _needles(rng: random.Random, texts: dict[str, list[str]]) -> list[str]:
    needles = ["nfoo", "\\n", "u00e9", '\\"', "foo\n", "\nfoo", "é", "日本🙂", "rm -rf", "Users",
               "BAR", "null", "\\u00e9", "xxxxx", "C:\\", '"\\', "\n42\n"]
    for _ in range(25):
        text = rng.choice(rng.choice(list(texts.values())))
        start = rng.randrange(len(text))
        piece = text[start:start + rng.randint(3, 8)]
        if len(piece) >= 3:
            needles.append(piece.upper() if piece.isascii() and rng.random() < 0.3 else piece)
    return [n for n in needles if len(n) >= 3]


@pytest.mark.parametrize("seed", [1, 2])
def test_full_text_and_argument_search_agree_with_the_reference(
    store: TranscriptStore, store_url: str, seed: int
) -> None:
    sessions, texts, arguments = _dataset(seed)
    for sid, records in sessions.items():
        store.append(sid, records)
    needles = _needles(random.Random(seed), texts)
    expected = {n: sorted(c for c, ts in texts.items()
                          if any(n.casefold() in t.casefold() for t in ts))
                for n in needles}
    commands = {n: sorted(c for c, a in arguments.items()
                          if isinstance(a, dict) and isinstance(a.get("command"), str)
                          and n in a["command"]) for n in needles}
    assert any(expected.values()) and not all(expected.values())  # the needles discriminate

    def check(searcher: TranscriptStore) -> None:
        for needle in needles:
            got = sorted(m.call_id for m in iter_calls(searcher, CallQuery(text=needle)))
            assert got == expected[needle], needle
            assert contains(searcher, "command", needle) == commands[needle], needle

    with TranscriptStore.open(store_url, read_only=True) as scanning:
        check(scanning)  # nothing indexed yet: the exact scan of the rows behind the watermark
    assert items(store) == 0
    store.update_search_index()
    check(store)  # everything indexed
    sample = next(iter(arguments.items()))
    if isinstance(sample[1], dict) and isinstance(sample[1].get("command"), str):
        assert sample[0] in equal(store, "command", sample[1]["command"])


def test_the_next_full_text_id_is_read_from_the_unique_indexes(tmp_path: Path) -> None:
    """SQLite: each chunk of the catch-up asks for the largest ``search_id`` given (revision
    0023); a bare ``max()`` cannot use the partial unique indexes and read both tables whole
    per chunk (0.9 s at 10^6 messages, hundreds of chunks in an import)."""
    with TranscriptStore.open(f"sqlite:///{tmp_path / 'ids.sqlite'}") as opened:
        opened.append("s", [assistant(chat_call("c1", '{"command": "ls"}')), tool("c1", "ok")])
        opened.update_search_index()
        opened.append("s", [assistant(chat_call("c2", '{"command": "pwd"}'))])
        statements: list[str] = []
        from sqlalchemy import event

        def traced(dbapi: Any, record: Any, proxy: Any) -> None:
            dbapi.set_trace_callback(statements.append)

        event.listen(opened.engine, "checkout", traced)
        try:
            opened.update_search_index()
        finally:
            event.remove(opened.engine, "checkout", traced)
        asked = [s for s in statements if "ORDER BY search_id DESC" in s]
        with opened.engine.connect() as conn:
            plan = "\n".join(str(row[-1]) for row in conn.execute(
                sql("EXPLAIN QUERY PLAN " + asked[0])).all()) if asked else ""
    assert len(asked) == 1, statements
    assert "ux_tool_calls_search_id" in plan and "ux_tool_results_search_id" in plan
    assert "SCAN tool_" not in plan, plan
