"""The viewer's message search (``/messages``, issue 35 item 2): best match first, each hit a
link to its message, the snippet escaped with the match in ``<mark>``, filters kept in the
form, a bad query a 400 naming it, and a note when the read-only viewer's index is behind;
on both backends."""

from __future__ import annotations

from viewer_helpers import fetcher, running

from store import Message, TextPart, TranscriptStore


def said(role: str, text: str) -> Message:
    return Message(role, (TextPart(text),))  # type: ignore[arg-type]


def test_messages_are_found_escaped_and_linked(store: TranscriptStore, store_url: str) -> None:
    store.append("one/<b>", [
        said("user", "<script>window.__pwned = 1</script> what is a zebra?"),
        said("assistant", "A zebra is a striped horse; zebra herds roam."),
    ], agent="claude-code", title="<i>animals</i>")
    store.append("two", [said("user", "no animals here")], agent="codex")
    store.update_search_index()
    with running(store_url) as server:
        fetch = fetcher(server)
        page = fetch("/messages?q=zebra")
        assert page.status == 200
        text = page.text
        assert text.index("striped horse") < text.index("what is a")  # the better match first
        assert "<mark>zebra</mark>" in text
        assert "<script>window" not in text and "&lt;script&gt;window" in text
        assert "<i>animals</i>" not in text and "&lt;i&gt;animals&lt;/i&gt;" in text
        assert 'href="/session/one%2F%3Cb%3E?at=1#m-1"' in text
        assert 'name="q" value="zebra"' in text  # the form keeps the query
        users = fetch("/messages?q=zebra&role=user").text
        assert "what is a" in users and "striped horse" not in users
        assert "No messages match" in fetch("/messages?q=zebra&agent=codex").text
        bad = fetch("/messages?q=%22zebra")
        assert bad.status == 400 and "a quote is not closed" in bad.text
        assert "Search messages" in fetch("/messages").text  # the empty form


def test_the_page_says_when_the_index_is_behind(store: TranscriptStore, store_url: str) -> None:
    store.append("one", [said("user", "okapi sighting")])
    with running(store_url) as server:  # (the viewer opens the store read-only)
        text = fetcher(server)("/messages?q=okapi").text
        assert "1 session with messages not indexed yet" in text and "No messages match" in text
    store.update_search_index()
    with running(store_url) as server:
        text = fetcher(server)("/messages?q=okapi").text
        assert "<mark>okapi</mark>" in text and "not indexed yet" not in text
