"""The message search query language (store.core.textquery) and what the index holds of a
message (store.records.messagetext): pure functions, no database."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from store import MessageHit, SearchQueryError
from store.core.textquery import HIT_END, HIT_START, QueryTerm, fts5_match, parse_text_query
from store.records.messagetext import MAX_BODY, indexable, message_rows

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.mark.parametrize(("query", "terms"), [
    ("lm studio", [QueryTerm("lm"), QueryTerm("studio")]),
    ('"lm   studio" local', [QueryTerm("lm studio"), QueryTerm("local")]),
    ("stud* -ollama", [QueryTerm("stud", prefix=True), QueryTerm("ollama", negated=True)]),
    ('-"a phrase" word', [QueryTerm("a phrase", negated=True), QueryTerm("word")]),
    ("AND OR NOT", [QueryTerm("AND"), QueryTerm("OR"), QueryTerm("NOT")]),
    ("lm-studio", [QueryTerm("lm-studio")]),
    ("word - && ?", [QueryTerm("word")]),  # punctuation alone finds nothing: left out
    ('a"b c"', [QueryTerm("a"), QueryTerm("b c")]),
    ("straße*", [QueryTerm("straße", prefix=True)]),
])
def test_what_a_query_reads_as(query: str, terms: list[QueryTerm]) -> None:
    assert list(parse_text_query(query).terms) == terms


@pytest.mark.parametrize(("query", "problem"), [
    ('"open', "a quote is not closed"),
    ('" "', "an empty phrase"),
    ("*", "a * goes at the end"),
    ("a*b", "a * goes at the end"),
    ("foo_*", "a * goes at the end"),
    ('"x"*', "a * ends a word, not a phrase"),
    ("-x -y", "nothing to find"),
    ("   ", "nothing to find"),
    ("x" * 1001, "longer than 1000 characters"),
    (" ".join("w" for _ in range(33)), "more than 32 terms"),
])
def test_a_query_it_cannot_read_names_the_problem(query: str, problem: str) -> None:
    with pytest.raises(SearchQueryError) as caught:
        parse_text_query(query)
    assert caught.value.problem.startswith(problem) or problem in caught.value.problem
    assert "search query" in str(caught.value)


def test_every_term_reaches_fts5_quoted() -> None:
    assert fts5_match(parse_text_query('lm "a ""b" c* -NOT -"x y"')) == (
        '("lm" AND "a" AND "b" AND "c"*) NOT ("NOT" OR "x y")')
    assert fts5_match(parse_text_query("NEAR(x) col:y")) == '"NEAR(x)" AND "col:y"'


def test_a_hit_splits_its_snippet_on_the_marks() -> None:
    hit = MessageHit("s", 0, "user", datetime(2026, 1, 1, tzinfo=UTC), None, None, None,
                     f"a {HIT_START}b{HIT_END} c {HIT_START}d{HIT_END}", 1.0)
    assert hit.segments() == (("a ", False), ("b", True), (" c ", False), ("d", True))
    assert hit.plain_snippet == "a b c d"
    assert hit.highlights() == [(2, 3), (6, 7)]


def test_a_message_gives_a_row_per_part() -> None:
    parts = orjson.dumps([{"type": "thinking", "text": "pondering", "signature": None},
                          {"type": "text", "text": "answer"},
                          {"type": "tool_call", "index": 0}]).decode()
    wire = orjson.dumps({"id": "c1", "type": "function", "function": {
        "name": "bash", "arguments": '{"command": "ls /srv"}'}}).decode()
    rows = dict(message_rows("assistant", "answer", parts, [("bash", wire)], ['"files"']))
    assert rows["assistant"] == "answer"
    assert rows["thinking"] == "pondering"
    assert "bash" in rows["tool"] and "ls /srv" in rows["tool"] and "files" in rows["tool"]
    # a tool message's text joins its tool row; nothing but blanks gives no row
    assert message_rows("tool", "out", "[]", [], ['"more"']) == [("tool", "out\n\nmore")]
    assert message_rows("user", "  ", "[]", [], []) == []


def test_the_index_holds_no_secret_no_mark_and_no_nul() -> None:
    body = indexable(f"token {SECRET} {HIT_START}x{HIT_END}\x00")
    assert SECRET not in body and "[REDACTED" in body
    assert HIT_START not in body and HIT_END not in body and "\x00" not in body
    assert len(indexable("word " * MAX_BODY)) == MAX_BODY
