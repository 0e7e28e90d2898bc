"""Issue 35 in headless Chromium, on both backends: keyboard navigation, the search box on
every page, live updates as new messages are stored, the usage page's charts, the lineage
tree, and the docs' screenshots of each page (``TRANSCRIPT_UPDATE_SCREENSHOTS=1``, from the
SQLite run: the corpus's real Claude Code and Codex sessions, nothing hostile)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from test_browser import Watch, _shot, browser  # noqa: F401  (the module's browser fixture)
from viewer_helpers import fill_corpus, running

from store import TranscriptStore

pytestmark = pytest.mark.corpus

CODEX = "019a93b9-f380-7600-98ff-940e6b99603c"
PARENT = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"


def _tab(browser: Any, base: str) -> tuple[Any, Any, Watch]:  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = Watch(base)
    page.on("console", lambda m: watch.console_errors.append(m.text) if m.type == "error"
            else None)
    page.on("pageerror", lambda e: watch.page_errors.append(str(e)))
    page.on("request", lambda r: watch.requests.append(r.url))
    page.on("dialog", lambda d: (watch.dialogs.append(d.message), d.dismiss()))
    return context, page, watch


def test_keyboard_and_the_search_box(browser: Any, store: TranscriptStore,  # noqa: F811
                                     store_url: str) -> None:
    fill_corpus(store)
    store.update_search_index()
    with running(store_url) as server:
        base = server.url.rstrip("/")
        context, page, watch = _tab(browser, base)
        try:
            page.goto(base + "/sessions")
            page.keyboard.press("j")
            rows = page.locator("table.sessions tbody tr")
            assert "kb-current" in (rows.nth(0).get_attribute("class") or "")
            page.keyboard.press("j")
            page.keyboard.press("k")
            page.keyboard.press("j")
            assert "kb-current" in (rows.nth(1).get_attribute("class") or "")
            expected = rows.nth(1).locator("a").first.get_attribute("href")
            page.keyboard.press("Enter")
            page.wait_for_url("**" + (expected or "/session/"))
            page.keyboard.press("j")
            page.keyboard.press("j")
            assert page.locator("article.msg.kb-current").count() == 1
            page.keyboard.press("/")
            assert page.evaluate("() => document.activeElement.id") == "quick-search"
            page.keyboard.type("LM Studio")
            page.keyboard.press("Enter")
            page.wait_for_url("**/messages?q=LM+Studio")
            hits = page.locator("table.matches tbody tr")
            assert hits.count() >= 1 and "LM" in hits.first.inner_text()
            page.keyboard.press("j")
            page.keyboard.press("Enter")
            page.wait_for_url(f"**/session/{CODEX}*")
            watch.check(page)
        finally:
            context.close()


def test_live_updates_as_messages_are_stored(browser: Any, store: TranscriptStore,  # noqa: F811
                                             store_url: str) -> None:
    store.append("long", [{"role": "user" if i % 2 == 0 else "assistant",
                           "content": f"message {i}\n\n" + "line\n" * 5} for i in range(40)],
                 title="a long one")
    with running(store_url) as server:
        base = server.url.rstrip("/")
        context, page, watch = _tab(browser, base)
        try:
            page.goto(base + "/sessions")
            store.append("fresh", [{"role": "user", "content": "hello"}], title="fresh arrival")
            page.get_by_role("link", name="fresh arrival").wait_for(timeout=20_000)
            # a session read at its end shows the new message by itself
            page.goto(base + "/session/fresh")
            store.append("fresh", [{"role": "assistant", "content": "a **live** answer"}])
            page.locator("article.msg strong", has_text="live").wait_for(timeout=20_000)
            # read higher up: it is offered, not forced
            page.goto(base + "/session/long")
            page.evaluate("() => window.scrollTo(0, 0)")
            store.append("long", [{"role": "user", "content": "one more"}])
            note = page.locator("#live-note")
            note.wait_for(state="visible", timeout=20_000)
            assert page.locator("article.msg", has_text="one more").count() == 0
            note.locator("button").click()
            page.locator("article.msg", has_text="one more").wait_for(timeout=20_000)
            watch.check(page)
        finally:
            context.close()


def test_each_page_of_the_archive(browser: Any, store: TranscriptStore,  # noqa: F811
                                  store_url: str, tmp_path: Path) -> None:
    """The pages as a reader sees them, screenshots for the docs (SQLite run)."""
    fill_corpus(store)
    store.update_search_index()
    docs = store_url.startswith("sqlite") and bool(os.environ.get("TRANSCRIPT_UPDATE_SCREENSHOTS"))
    with running(store_url) as server:
        base = server.url.rstrip("/")
        context, page, watch = _tab(browser, base)
        try:
            page.goto(base + "/sessions")
            nested = page.locator("table.sessions tr.depth-1")
            assert nested.count() == 2 and ":sidechain" in nested.first.inner_text()
            assert page.locator("table.sessions td.num", has_text="$").count() >= 4
            _shot(page, tmp_path, "sessions.png", docs=docs)

            page.goto(f"{base}/session/{CODEX}")
            assert page.locator("pre.cmd").first.inner_text() == "$ ls"
            result = page.locator("details.call .result pre").first.inner_text()
            assert result.startswith("LM Studio configuration.md\nREADME.md\n")
            assert page.locator("details.thinking[open]").count() == 0
            _shot(page, tmp_path, "transcript.png", docs=docs, full_page=True,
                  clip={"x": 0, "y": 0, "width": 1280, "height": 1400})

            page.goto(f"{base}/session/{PARENT}")
            tree = page.locator("nav.lineage ul.tree")
            assert tree.first.locator("b.here").count() == 1
            assert tree.first.locator("li.child a").count() == 1
            assert page.locator("div.md").count() >= 1
            _shot(page, tmp_path, "lineage.png", docs=docs)

            page.goto(base + "/usage")
            for chart in ("chart-models", "chart-agents"):
                svg = page.locator(f"svg[aria-labelledby={chart}]")
                assert svg.is_visible() and svg.locator("rect").count() >= 2
            assert page.locator("#by-session tbody tr").count() == 4
            _shot(page, tmp_path, "usage.png", docs=docs, full_page=True,
                  clip={"x": 0, "y": 0, "width": 1280, "height": 1500})

            page.goto(base + "/messages?q=LM+Studio")
            assert page.locator("table.matches mark").count() >= 1
            _shot(page, tmp_path, "messages.png", docs=docs)

            page.goto(base + "/findings")
            assert "The built-in rules ran" in page.locator("section.live").inner_text()
            _shot(page, tmp_path, "findings.png", docs=docs)
            watch.check(page)
        finally:
            context.close()
