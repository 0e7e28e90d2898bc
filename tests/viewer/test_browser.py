"""End to end in headless Chromium (Debian's ``chromium``, driven by Playwright): the list,
a session, a folded result loaded on demand, a search, the tools chart; screenshots; and
proof that scripts injected through transcripts do not run.

Never ``playwright install``: the browser is the system's (``TRANSCRIPT_TEST_CHROMIUM``,
default ``/usr/bin/chromium``). When it cannot start the tests skip, and **fail** under CI.
Screenshots go to the test's temporary directory; with ``TRANSCRIPT_UPDATE_SCREENSHOTS=1``
the README's (``session.png``, ``tools.png``, of a realistic store: the corpus sessions under
one tool vocabulary, no test fixtures) also go to ``docs/images/``, so that an ordinary test
run leaves the work tree clean.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from viewer_helpers import BIG_RESULT, HOSTILE_ID, add_hostile, fill_corpus, running

from store import TranscriptStore

pytestmark = pytest.mark.corpus

CHROMIUM = os.environ.get("TRANSCRIPT_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
SESSION_TITLE = "Empty Repo Setup: CLAUDE.md Foundation Created"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"the browser tests need Chromium and Playwright under CI: {reason}")
    pytest.skip(f"no headless Chromium: {reason}")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A viewer on a store filled from the corpus plus hostile sessions."""
    url = f"sqlite:///{tmp_path_factory.mktemp('browser') / 'store.sqlite'}"
    with TranscriptStore.open(url) as opened:
        fill_corpus(opened)
        add_hostile(opened)
    with running(url) as server:
        yield server.url.rstrip("/")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _unavailable(f"playwright is not installed ({exc})")
    if not Path(CHROMIUM).exists() and shutil.which(CHROMIUM) is None:
        _unavailable(f"{CHROMIUM} not found (apt-get install chromium)")
    manager = sync_playwright().start()
    try:
        launched = manager.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
    except Exception as exc:
        manager.stop()
        _unavailable(str(exc).splitlines()[0])
    yield launched
    launched.close()
    manager.stop()


@dataclass
class Watch:
    """What the page did besides rendering: console errors, dialogs, requests."""

    base: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def check(self, page: Any) -> None:
        assert page.evaluate("() => window.__pwned") is None
        assert page.title() != "pwned"  # the payload would set it to exactly that
        assert page.evaluate("() => document.querySelectorAll('script:not([src])').length") == 0
        assert self.dialogs == [], self.dialogs
        assert self.console_errors == [], self.console_errors
        assert self.page_errors == [], self.page_errors
        foreign = [u for u in self.requests if not u.startswith(self.base + "/")]
        assert foreign == [], foreign


@pytest.fixture
def tab(browser: Any, base: str) -> Iterator[tuple[Any, Watch]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = Watch(base)
    page.on("console", lambda m: watch.console_errors.append(m.text) if m.type == "error"
            else None)
    page.on("pageerror", lambda e: watch.page_errors.append(str(e)))
    page.on("request", lambda r: watch.requests.append(r.url))

    def on_dialog(dialog: Any) -> None:
        watch.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    yield page, watch
    watch.check(page)
    context.close()


def _shot(page: Any, tmp_path: Path, name: str, *, docs: bool = False, **options: Any) -> None:
    path = tmp_path / name
    page.screenshot(path=str(path), **options)
    assert path.stat().st_size > 10_000
    if docs and os.environ.get("TRANSCRIPT_UPDATE_SCREENSHOTS"):
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_IMAGES / name)


def test_list_then_session(tab: tuple[Any, Watch], base: str, tmp_path: Path) -> None:
    page, watch = tab
    page.goto(base + "/sessions")
    assert page.locator("table.sessions tbody tr").count() >= 7
    _shot(page, tmp_path, "sessions.png")
    page.get_by_role("link", name=SESSION_TITLE, exact=True).click()
    page.wait_for_url("**/session/*")
    assert page.locator("h1").inner_text() == SESSION_TITLE
    assert page.locator("article.msg, span.anchor").count() == 9  # results: no card
    assert page.locator("article.msg").count() == 5
    calls = page.locator("details.call")
    assert calls.count() >= 3
    first = calls.first
    assert first.locator(".args dl.fields, .args pre").first.is_visible()
    assert first.locator(".result").is_visible()
    _shot(page, tmp_path, "session.png", full_page=True,
          clip={"x": 0, "y": 0, "width": 1280, "height": 1500})
    watch.check(page)


def test_expand_a_call_and_load_its_result(tab: tuple[Any, Watch], base: str) -> None:
    page, watch = tab
    from urllib.parse import quote

    page.goto(f"{base}/session/{quote(HOSTILE_ID, safe='')}")
    call = page.locator("#c-2-0")
    assert "&lt;" not in call.locator("summary .tool").inner_text()
    assert call.locator("summary .tool").inner_text() == "<img src=x onerror=window.__pwned=5>"
    call.locator("summary").first.click()  # fold the call ...
    assert not call.locator(".call-body").is_visible()
    call.locator("summary").first.click()  # ... and expand it again
    assert call.locator(".call-body").is_visible()
    assert "END-OF-BIG-RESULT" not in call.locator(".result").inner_text()
    call.locator("details.more > summary").click()  # load the whole result on demand
    full = call.locator("pre.full")
    full.filter(has_text="END-OF-BIG-RESULT").wait_for()
    assert full.text_content() == BIG_RESULT
    assert call.locator("pre.full *").count() == 0  # text, never elements
    assert not call.locator("pre.preview").is_visible()
    assert page.locator("#c-2-1 > summary .badge.bad").inner_text() == "error result"
    assert page.locator("#c-4-0 > summary .badge.bad").inner_text().startswith("invalid arguments")
    assert page.locator("#c-6-0 > summary .badge.warn").inner_text() == "dangling: no result"
    assert page.locator("main a[href^='javascript:']").count() == 0
    assert page.locator("main img, main iframe, main form[action^='http']").count() == 0
    watch.check(page)


def test_search_then_follow_a_match(tab: tuple[Any, Watch], base: str, tmp_path: Path
                                    ) -> None:
    page, watch = tab
    page.goto(base + "/search")
    page.fill("input[name=tool]", "glob")  # Claude Code Glob, canonical
    page.fill("textarea[name=where]", 'pattern="README.md"')
    page.click("form.search button[type=submit]")
    page.wait_for_url("**/search?*")
    matches = page.locator("table.matches tbody tr")
    assert matches.count() >= 1
    assert "README.md" in matches.first.inner_text()
    _shot(page, tmp_path, "search.png")
    matches.first.locator("a").first.click()
    page.wait_for_url("**/session/*#c-*")
    target = page.locator(":target")
    assert target.count() == 1 and "README.md" in target.inner_text()
    page.go_back()
    page.fill("input[name=text]", "pwned")
    page.fill("input[name=tool]", "")
    page.fill("textarea[name=where]", "")
    page.click("form.search button[type=submit]")
    page.wait_for_url("**text=pwned*")
    assert page.locator("table.matches tbody tr").count() >= 1
    watch.check(page)


def test_tools_chart(tab: tuple[Any, Watch], base: str, tmp_path: Path) -> None:
    page, watch = tab
    page.goto(base + "/tools")
    chart = page.locator("svg.usage")
    assert chart.is_visible() and chart.locator("rect").count() >= 3
    assert page.locator("ul.legend li").count() >= 3
    assert page.locator("table.tools tbody tr").count() >= 8
    _shot(page, tmp_path, "tools.png", full_page=True,
          clip={"x": 0, "y": 0, "width": 1280, "height": 1100})
    watch.check(page)


def test_injected_scripts_do_not_run(tab: tuple[Any, Watch], base: str, browser: Any) -> None:
    page, watch = tab
    from urllib.parse import quote

    hostile = quote(HOSTILE_ID, safe="")
    for path in ("/sessions", f"/session/{hostile}", f"/session/{hostile}/repair?target=gemini",
                 "/search?text=pwned", f"/search?session={hostile}", "/tools",
                 "/sessions?tool=Dangle", "/usage", "/findings", "/messages?q=pwned",
                 "/sessions?flat=1", f"/usage?cwd={quote('javascript:alert(1)')}"):
        page.goto(base + path)
        page.wait_for_load_state("load")
        for folded in page.locator("details.more > summary").all():
            folded.click()
        watch.check(page)
    # The control: the same payload does run on a page without the viewer's escaping.
    control = browser.new_page()
    try:
        control.set_content("<script>window.__pwned = 8</script>")
        assert control.evaluate("() => window.__pwned") == 8
    finally:
        control.close()


def test_an_idle_connection_flood_does_not_stall_the_browser(tab: tuple[Any, Watch],
                                                            base: str) -> None:
    """Issue 13: 250 clients that connect and send half a request (or nothing) hold no thread;
    the browser still loads and navigates the viewer while they are held."""
    import resource
    import socket
    from urllib.parse import urlsplit

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 1024:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
    page, watch = tab
    port = urlsplit(base).port
    flood: list[socket.socket] = []
    try:
        for number in range(250):
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            if number % 2:
                sock.sendall(b"GET /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            flood.append(sock)
        page.goto(base + "/sessions", timeout=30_000)
        assert page.locator("table.sessions tbody tr").count() >= 7
        page.get_by_role("link", name=SESSION_TITLE, exact=True).click()
        page.wait_for_url("**/session/*", timeout=30_000)
        assert page.locator("h1").inner_text() == SESSION_TITLE
    finally:
        for sock in flood:
            sock.close()
    watch.check(page)


def test_a_missing_browser_fails_under_ci_and_skips_locally(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="under CI"):
        _unavailable("no chromium")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        _unavailable("no chromium")


# -- the README's screenshots: a realistic store ------------------------------------------------

@pytest.fixture(scope="module")
def realistic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A viewer on the corpus's agent sessions under the store's one tool vocabulary (Claude
    Code's ``Bash`` and Codex's ``shell`` are one ``bash``), nothing hostile."""
    import store

    url = f"sqlite:///{tmp_path_factory.mktemp('readme') / 'store.sqlite'}"
    with TranscriptStore.open(url) as opened:
        fill_corpus(opened)  # the store's own seeded cross-agent vocabulary names the tools
        names = {u.name for u in store.tool_usage(opened)}
    assert {"bash", "read", "write"} <= names and not names & {"Bash", "shell"}
    with running(url) as server:
        yield server.url.rstrip("/")


def test_readme_screenshots_show_a_realistic_store(browser: Any, realistic: str,
                                                   tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = Watch(realistic)
    page.on("request", lambda r: watch.requests.append(r.url))
    try:
        page.goto(realistic + "/sessions")
        page.get_by_role("link", name=SESSION_TITLE, exact=True).click()
        page.wait_for_url("**/session/*")
        assert page.locator("details.call").count() >= 3
        _shot(page, tmp_path, "session.png", docs=True, full_page=True,
              clip={"x": 0, "y": 0, "width": 1280, "height": 1500})
        page.goto(realistic + "/tools")
        legend = page.locator("ul.legend li").all_inner_texts()
        table = " ".join(page.locator("table.tools tbody").all_inner_texts())
        assert any("bash" in item for item in legend)
        assert "Bash" not in legend and "shell" not in " ".join(legend)
        assert "<" not in table and "pwned" not in table  # no fixture payloads
        _shot(page, tmp_path, "tools.png", docs=True, full_page=True,
              clip={"x": 0, "y": 0, "width": 1280, "height": 1100})
        watch.check(page)
    finally:
        context.close()
