"""Issue 26: a session's page links its parent (with how it came from it and the parent's
call) and its children, on both backends; titles go through the viewer's redactor."""

from __future__ import annotations

from viewer_helpers import check_page, fetcher, running

from store import Redactor, SessionLink, TranscriptStore


def test_the_session_page_links_parent_and_children(store: TranscriptStore,
                                                    store_url: str) -> None:
    store.append("root", [{"role": "user", "content": "start"}], title="the root")
    store.append("kid", [{"role": "user", "content": "sub task"}], title="a subagent",
                 parent=SessionLink("root", "subagent", "toolu_9"))
    store.append("kid2", [{"role": "user", "content": "again"}],
                 title="key ghp_" + "a1B2" * 9, parent=SessionLink("root", "continuation"))
    with running(store_url) as server:
        root = fetcher(server)("/session/root")
        kid = fetcher(server)("/session/kid")
    with running(store_url, redactor=Redactor()) as server:
        redacted = fetcher(server)("/session/root")

    assert root.status == 200 and kid.status == 200
    check_page(root.text)
    assert 'href="/session/kid"' in root.text and "a subagent" in root.text
    assert "toolu_9" in root.text and "continuation" in root.text
    assert 'href="/session/root"' in kid.text and "subagent of" in kid.text
    assert "ghp_a1B2" in root.text and "ghp_a1B2" not in redacted.text
