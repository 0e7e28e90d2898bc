"""Full-text search over every message (issue 35 item 2), on both backends.

``TranscriptStore.search_messages`` finds prompts, answers, reasoning, tool arguments and
results through the message index (``store/db/index/message_index.py``, revision 0017): ranked by
the backend's engine (bm25 / ts_rank), a snippet with the matched words marked, filters,
paging, redacted text only, caught up off the write path and never stale on a writable store,
rows gone with their session, and a typed error for a query it cannot read.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text as sql

from store import (
    Message,
    MessageHit,
    SearchQueryError,
    TextPart,
    ThinkingPart,
    TranscriptStore,
    UsageError,
    refill_search_index,
)
from store.core.textquery import HIT_END, HIT_START
from store.db.index.message_index import check_message_index

#: A secret the built-in detectors know (a GitHub token's shape).
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def said(role: str, text: str, when: str, thinking: str | None = None) -> Message:
    parts: tuple[Any, ...] = (TextPart(text),)
    if thinking is not None:
        parts = (ThinkingPart(thinking, "sig"), *parts)
    return Message(role, parts, metadata={"timestamp": when})  # type: ignore[arg-type]


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def result(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def keys(hits: list[MessageHit]) -> list[tuple[str, int]]:
    return [(h.session_id, h.position) for h in hits]


@pytest.fixture
def stocked(store: TranscriptStore) -> TranscriptStore:
    store.append("s-local", [
        said("user", "How do I run a model locally with LM Studio?", "2026-01-10T10:00:00Z"),
        said("assistant", "LM Studio serves an OpenAI API. LM Studio is local; LM Studio "
                          "loads GGUF files.", "2026-01-10T10:01:00Z",
             thinking="the user wants ollama or something similar"),
    ], agent="claude-code", cwd="/work/alpha", title="local models")
    store.append("s-tools", [
        said("user", "list the files", "2026-02-01T09:00:00Z"),
        call("c1", "bash", {"command": "ls /srv/quartzite"}),
        result("c1", "quartzite.txt\nreadme.md"),
        said("assistant", "There are two files; we might try lm studio at some point, "
                          "among many other things worth a look later on this week.",
             "2026-02-01T09:02:00Z"),
    ], agent="codex", cwd="/work/beta/sub", title="files")
    return store


def test_prompts_answers_thinking_and_tool_results_are_found(stocked: TranscriptStore) -> None:
    assert keys(stocked.search_messages("locally")) == [("s-local", 0)]
    assert [h.role for h in stocked.search_messages("GGUF")] == ["assistant"]
    thinking = stocked.search_messages("ollama")
    assert [(h.session_id, h.position, h.role) for h in thinking] == [("s-local", 1, "thinking")]
    # a call's arguments and a result are found as the messages holding them
    assert sorted((h.position, h.role) for h in stocked.search_messages("quartzite")) == [
        (1, "tool"), (2, "tool")]
    assert keys(stocked.search_messages("readme")) == [("s-tools", 2)]
    assert keys(stocked.search_messages("bash")) == [("s-tools", 1)]  # the tool's name


def test_the_clearer_match_ranks_first_and_the_hit_carries_its_session(
        stocked: TranscriptStore) -> None:
    hits = stocked.search_messages("lm studio")
    assert keys(hits) == [("s-local", 1), ("s-local", 0), ("s-tools", 3)]
    assert hits[0].rank > hits[1].rank >= hits[2].rank
    first = hits[0]
    assert (first.agent, first.cwd, first.title) == ("claude-code", "/work/alpha",
                                                     "local models")
    assert first.created_at == datetime(2026, 1, 10, 10, 1, tzinfo=UTC)


def test_snippets_mark_the_matched_words(stocked: TranscriptStore) -> None:
    hit = stocked.search_messages("GGUF")[0]
    assert f"{HIT_START}GGUF{HIT_END}" in hit.snippet
    assert ("GGUF", True) in hit.segments()
    plain = hit.plain_snippet
    assert HIT_START not in plain and "loads GGUF files" in plain
    start, end = hit.highlights()[0]
    assert plain[start:end] == "GGUF"


def test_phrases_prefixes_and_left_out_words(stocked: TranscriptStore) -> None:
    assert keys(stocked.search_messages('"studio is local"')) == [("s-local", 1)]
    assert keys(stocked.search_messages('"local is studio"')) == []
    assert sorted(keys(stocked.search_messages("quartz*"))) == [("s-tools", 1), ("s-tools", 2)]
    assert keys(stocked.search_messages("studio -GGUF -files")) == [("s-local", 0)]
    # words are ANDed; operators of the engines are plain words
    assert keys(stocked.search_messages("studio ollama")) == []
    assert keys(stocked.search_messages("lm AND studio")) == []


def test_filters(stocked: TranscriptStore) -> None:
    assert keys(stocked.search_messages("studio", agent="codex")) == [("s-tools", 3)]
    assert keys(stocked.search_messages("studio", project="/work/beta")) == [("s-tools", 3)]
    assert keys(stocked.search_messages("studio", project="/work/bet")) == []
    assert keys(stocked.search_messages("studio", since=datetime(2026, 1, 31, tzinfo=UTC))) \
        == [("s-tools", 3)]
    assert sorted(keys(stocked.search_messages(
        "studio", until=datetime(2026, 1, 10, 10, 1, tzinfo=UTC)))) == [("s-local", 0)]
    assert keys(stocked.search_messages("studio", role="user")) == [("s-local", 0)]
    assert keys(stocked.search_messages("ollama", role="assistant")) == []
    assert keys(stocked.search_messages("ollama", role="thinking")) == [("s-local", 1)]
    assert keys(stocked.search_messages("quartzite", role="user")) == []
    assert keys(stocked.search_messages("studio", session_id="s-tools")) == [("s-tools", 3)]


def test_paging(stocked: TranscriptStore) -> None:
    every = keys(stocked.search_messages("studio"))
    assert len(every) == 3
    pages = [keys(stocked.search_messages("studio", limit=1, offset=n)) for n in range(4)]
    assert pages == [[every[0]], [every[1]], [every[2]], []]
    assert stocked.search_messages("studio", limit=0) == []


def test_a_secret_is_neither_indexed_nor_shown(store: TranscriptStore) -> None:
    store.append("s-secret", [said("user", f"deploy with token {SECRET} please",
                                   "2026-03-01T00:00:00Z")])
    hits = store.search_messages("deploy")
    assert keys(hits) == [("s-secret", 0)]
    assert SECRET not in hits[0].snippet and "REDACTED" in hits[0].snippet
    with store.engine.connect() as conn:
        bodies = [row[0] for row in conn.execute(sql("SELECT body FROM message_search"))]
    assert bodies and not [b for b in bodies if SECRET in b]
    assert store.search_messages(SECRET) == []


def test_a_message_appended_after_a_search_is_found_by_the_next(
        stocked: TranscriptStore) -> None:
    assert stocked.search_messages("zanzibar") == []
    stocked.append("s-local", [said("user", "what about zanzibar?", "2026-01-10T11:00:00Z")])
    assert keys(stocked.search_messages("zanzibar")) == [("s-local", 2)]
    assert stocked.messages_behind() == 0


def test_a_read_only_store_searches_what_is_indexed_and_says_how_far_behind(
        stocked: TranscriptStore, store_url: str) -> None:
    assert stocked.search_messages("studio")  # (caught up)
    stocked.append("s-local", [said("user", "and zanzibar", "2026-01-10T11:00:00Z")])
    with TranscriptStore.open(store_url, read_only=True) as reader:
        assert reader.search_messages("zanzibar") == []
        assert reader.messages_behind() == 1
        assert keys(reader.search_messages("GGUF")) == [("s-local", 1)]
    assert keys(stocked.search_messages("zanzibar")) == [("s-local", 2)]


def test_delete_erase_and_truncate_take_the_rows_out(stocked: TranscriptStore) -> None:
    assert stocked.search_messages("GGUF") and stocked.search_messages("quartzite")
    stocked.erase(["s-local"], reason="asked")
    assert stocked.search_messages("GGUF") == []
    stocked.truncate("s-tools", 2)
    assert keys(stocked.search_messages("quartzite")) == [("s-tools", 1)]
    stocked.append("s-tools", [result("c1", "basalt.txt")])
    assert keys(stocked.search_messages("basalt")) == [("s-tools", 2)]
    stocked.delete_session("s-tools")
    assert stocked.search_messages("quartzite") == []
    with stocked.engine.connect() as conn:
        assert conn.execute(sql("SELECT count(*) FROM message_search")).scalar_one() == 0


@pytest.mark.parametrize(("query", "problem"), [
    ('"lm studio', "quote is not closed"),
    ('""', "empty phrase"),
    ("*", "a * goes at the end"),
    ("st*io", "a * goes at the end"),
    ("lm-st*", "a * goes at the end"),
    ('"lm studio"*', "ends a word, not a phrase"),
    ("-studio", "nothing to find"),
    ("- && ?", "nothing to find"),
    ("", "nothing to find"),
    (" ".join(["word"] * 33), "more than 32 terms"),
])
def test_a_query_it_cannot_read_is_a_typed_error(stocked: TranscriptStore, query: str,
                                                 problem: str) -> None:
    with pytest.raises(SearchQueryError, match="search query") as caught:
        stocked.search_messages(query)
    assert problem in caught.value.problem
    assert isinstance(caught.value, UsageError)


def test_what_users_type_is_searched_as_text(stocked: TranscriptStore) -> None:
    for query in ("studio (", "studio)", "studio:", "^studio", "studio + -", "{studio}",
                  "'studio'", "studio*", "(studio)", "locally?"):
        assert ("s-local", 0) in keys(stocked.search_messages(query)), query


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"role": "boss"}, "role"), ({"limit": -1}, "limit"), ({"offset": -1}, "offset"),
    ({"limit": 1001}, "limit"),
])
def test_bad_filters_are_usage_errors(stocked: TranscriptStore, kwargs: dict[str, Any],
                                      word: str) -> None:
    with pytest.raises(UsageError, match=word):
        stocked.search_messages("studio", **kwargs)


def test_appends_write_nothing_to_the_index(store: TranscriptStore) -> None:
    store.append("s-new", [said("user", "hello there", "2026-01-01T00:00:00Z")])
    with store.engine.connect() as conn:
        assert conn.execute(sql("SELECT count(*) FROM message_search")).scalar_one() == 0
    assert store.messages_behind() == 1
    done = store.update_search_index()
    assert done.messages == 1
    assert store.messages_behind() == 0


def test_punctuation_splits_words_alike_on_both_backends(store: TranscriptStore) -> None:
    store.append("s-paths", [
        said("user", "open /srv/quartzite/notes.md and lm-studio's config_file",
             "2026-01-01T00:00:00Z"),
    ])
    for query, word in (("quartzite", "quartzite"), ("notes md", "notes"), ("lm studio", "lm"),
                        ("lm-studio", "studio"), ("config", "config"),
                        ('"srv quartzite"', "srv")):
        hits = store.search_messages(query)
        assert keys(hits) == [("s-paths", 0)], query
        marked = [text for text, matched in hits[0].segments() if matched]
        assert any(word in text for text in marked), (query, hits[0].snippet)
        assert "/srv/" in hits[0].plain_snippet  # the text as written, punctuation and all


def test_a_reindex_builds_the_message_index_again(stocked: TranscriptStore) -> None:
    assert keys(stocked.search_messages("GGUF")) == [("s-local", 1)]
    with stocked.engine.begin() as conn:  # rows lost behind the watermark's back
        conn.execute(sql("DELETE FROM message_search"))
    assert stocked.search_messages("GGUF") == []

    assert refill_search_index(stocked)

    assert keys(stocked.search_messages("GGUF")) == [("s-local", 1)]
    assert sorted(keys(stocked.search_messages("quartzite"))) == [("s-tools", 1), ("s-tools", 2)]


def test_case_folds_alike_beyond_ascii_and_accents_count(store: TranscriptStore) -> None:
    store.append("s-fr", [said("user", "un éclair au café", "2026-01-01T00:00:00Z")])
    assert keys(store.search_messages("ÉCLAIR")) == [("s-fr", 0)]
    assert store.search_messages("eclair") == []


def test_the_index_check_for_verify(stocked: TranscriptStore) -> None:
    stocked.update_search_index()
    with stocked.engine.connect() as conn:
        assert check_message_index(conn) == []
    with stocked.engine.begin() as conn:
        conn.execute(sql("UPDATE message_search SET body = 'tampered' "
                         "WHERE session_id = 's-local' AND position = 0"))
        conn.execute(sql("DELETE FROM message_search WHERE session_id = 's-tools' "
                         "AND position = 2"))
    with stocked.engine.connect() as conn:
        problems = check_message_index(conn)
    found = {(sid, pos): what for sid, pos, what in problems}
    assert "text differs for user" in found[("s-local", 0)]
    assert "missing tool" in found[("s-tools", 2)]
    report = stocked.verify()  # ... and verify reports them
    assert {(p.check, p.session_id, p.position) for p in report.problems} >= {
        ("message_index", "s-local", 0), ("message_index", "s-tools", 2)}
    refill_search_index(stocked)  # db index --rebuild repairs them
    assert not [p for p in stocked.verify().problems if p.check == "message_index"]


def test_every_page_is_the_slice_of_the_whole_ranking(store: TranscriptStore) -> None:
    """Only the rows that can reach a page are ranked per message and joined to their
    message (the cut at the page's depth times the roles a message can have): each page, with
    or without filters, is exactly that slice of the whole ranking, ties included."""
    words = ["drill", "drill drill", "drill and more words around it here", "drill drill drill"]
    for n in range(12):
        batch: list[Any] = []
        for k in range(8):
            when = f"2026-03-{1 + (n + k) % 5:02d}T10:{k:02d}:00Z"  # (times tie too)
            text_ = words[(n + k) % 4]
            thinking = words[(n * k) % 4] if k % 3 else None
            batch.append(said("assistant" if k % 2 else "user", text_, when, thinking=thinking))
            if k % 4 == 1:
                batch.append(call(f"c{n}-{k}", "bash", {"command": f"echo {words[k % 4]}"}))
                batch.append(result(f"c{n}-{k}", words[(k + 1) % 4]))
        store.append(f"s-{n:02d}", batch, agent="codex" if n % 2 else "claude-code",
                     cwd=f"/work/p{n % 3}")
    filters: list[dict[str, Any]] = [
        {}, {"role": "tool"}, {"role": "thinking"}, {"agent": "codex"},
        {"project": "/work/p1"}, {"since": datetime(2026, 3, 3, tzinfo=UTC)},
        {"session_id": "s-04"}]
    for scope in filters:
        whole = [(h.session_id, h.position, h.role, h.rank)
                 for h in store.search_messages("drill", limit=1000, **scope)]
        assert len(whole) >= 8, scope
        assert len({(sid, pos) for sid, pos, _, _ in whole}) == len(whole)  # one per message
        for limit in (1, 3, 7):
            for offset in range(0, len(whole) + 2, 5):
                page = [(h.session_id, h.position, h.role, h.rank) for h in
                        store.search_messages("drill", limit=limit, offset=offset, **scope)]
                assert page == whole[offset:offset + limit], (scope, limit, offset)
