"""The viewer over HTTP, on both backends: every page and filter, escaping of hostile content,
read-only methods, errors, access control, headers, exports, and large data."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote

import pytest
from sqlalchemy import insert
from viewer_helpers import (
    BIG_RESULT,
    HOSTILE_ID,
    Fetch,
    add_hostile,
    check_page,
    fetcher,
    fill_corpus,
    running,
)

from store import CALL_STATUSES, TARGETS, TranscriptStore, tool_usage
from store.db.schema.tables import sessions
from store.viewer.app import CSP

pytestmark = pytest.mark.corpus

H = quote(HOSTILE_ID, safe="")
CODEX = "019a93b9-f380-7600-98ff-940e6b99603c"
PARALLEL = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"


@pytest.fixture
def site(store: TranscriptStore, store_url: str):
    fill_corpus(store)
    add_hostile(store)
    with running(store_url) as server:
        yield fetcher(server)


def ok_page(fetch: Fetch, path: str) -> str:
    reply = fetch(path)
    assert reply.status == 200, (path, reply.status, reply.body[:500])
    assert reply.headers["content-type"] == "text/html; charset=utf-8"
    assert reply.headers["content-security-policy"] == CSP
    assert reply.headers["x-content-type-options"] == "nosniff"
    check_page(reply.text)
    return reply.text


def session_ids(page: str) -> set[str]:
    """The sessions a list page lists: each row's first link (a subagent's "subagent of"
    link to its parent is not a row)."""
    return {unquote(html.unescape(m)) for m in re.findall(
        r'<td(?: class="title")?><a href="/session/([^"?#/]+)[?#"]', page)}


def rows(page: str) -> int:
    return len(re.findall(r"<tr[ >]", page)) - page.count("<thead><tr>")


# -- every page -------------------------------------------------------------------------------


LIST_PAGES = [
    "/sessions", "/sessions?provider=anthropic", "/sessions?model=gpt-5.1-codex",
    "/sessions?tag=codex", "/sessions?q=repo", "/sessions?since=2000-01-01&until=2100-01-01",
    "/sessions?tool=Glob", "/sessions?tool=Glob&provider=anthropic&page=1",
    "/sessions?page=2", "/tools", "/tools?since=2025-09-01&until=2025-09-30", "/tools?page=2",
    "/search", "/search?tool=Glob", "/search?raw_name=Glob", f"/search?session={H}",
    "/search?since=2025-09-03&until=2025-09-03", "/search?where=pattern%3D%22README.md%22",
    "/search?contains=command%3Dfind", "/search?text=files", "/search?page=2",
    *(f"/search?status={s}" for s in CALL_STATUSES),
]


def test_every_list_page_and_filter_renders_safely(site: Fetch) -> None:
    for path in LIST_PAGES:
        ok_page(site, path)


def test_every_session_page_export_and_repair_report(site: Fetch,
                                                     store: TranscriptStore) -> None:
    for info in store.list_sessions(limit=100):
        sid = quote(info.session_id, safe="")
        page = ok_page(site, f"/session/{sid}")
        assert page.count(' id="m-') == info.message_count  # a card or, results only, an anchor
        for target in TARGETS:
            assert f'href="/session/{sid}/export/{target}?repair=1"' in page
            report = ok_page(site, f"/session/{sid}/repair?target={target}")
            assert "Repair report" in report
            for suffix in ("", "?repair=1"):
                reply = site(f"/session/{sid}/export/{target}{suffix}")
                if reply.status == 422:  # as stored, beyond the target's rules
                    assert suffix == "" and b"repair=1" in reply.body
                    continue
                assert reply.status == 200, (info.session_id, target, reply.body[:300])
                assert reply.headers["content-type"] == "application/json"
                disposition = reply.headers["content-disposition"]
                assert re.fullmatch(r'attachment; filename="[A-Za-z0-9._-]+\.json"',
                                    disposition)
                assert isinstance(json.loads(reply.body), dict)


def test_static_files_and_home(site: Fetch) -> None:
    home = site("/")
    assert home.status == 302 and home.headers["location"] == "/sessions"
    css = site("/static/viewer.css")
    assert css.status == 200 and css.headers["content-type"].startswith("text/css")
    assert b"url(" not in css.body and b"http" not in css.body and b"@import" not in css.body
    script = site("/static/viewer.js")
    assert script.status == 200 and script.headers["content-type"].startswith("text/javascript")
    assert b"http" not in script.body and b"innerHTML" not in script.body
    assert site("/favicon.ico").headers["content-type"] == "image/svg+xml"


# -- filters ----------------------------------------------------------------------------------


def test_session_filters_select_the_right_sessions(site: Fetch,
                                                   store: TranscriptStore) -> None:
    everything = {i.session_id for i in store.list_sessions(limit=100)}
    anthropic = {i.session_id for i in store.list_sessions(provider="anthropic")}
    assert session_ids(ok_page(site, "/sessions")) == everything
    assert session_ids(ok_page(site, "/sessions?provider=anthropic")) == anthropic
    assert session_ids(ok_page(site, "/sessions?model=gpt-5.1-codex")) == {CODEX}
    sidechains = session_ids(ok_page(site, "/sessions?tag=sidechain"))
    assert sidechains and all(s.endswith(":sidechain") for s in sidechains)
    assert session_ids(ok_page(site, "/sessions?q=empty+repo")) == {
        s for s in everything if s.startswith("fe5e1c67")}
    # Codex's shell is the canonical bash, with every other agent's shell tool
    import store as api

    bash = {m.session_id for m in api.iter_calls(store, api.CallQuery(tool="bash"))}
    assert CODEX in bash and len(bash) > 1
    assert session_ids(ok_page(site, "/sessions?tool=bash")) == bash
    assert session_ids(ok_page(site, "/sessions?tool=Dangle")) == {HOSTILE_ID}
    assert session_ids(ok_page(site, "/sessions?tool=Glob&provider=openai")) == set()
    tomorrow = (datetime.now(UTC) + timedelta(days=2)).date().isoformat()
    assert session_ids(ok_page(site, f"/sessions?since={tomorrow}")) == set()
    assert session_ids(ok_page(site, f"/sessions?until={tomorrow}")) == everything
    assert "No sessions match" in ok_page(site, "/sessions?provider=nobody")


def test_search_filters_and_links_into_sessions(site: Fetch) -> None:
    invalid = ok_page(site, "/search?status=invalid")
    assert rows(invalid) == 1 and "broken" in invalid
    assert f'href="/session/{H}?at=4#c-4-0"' in invalid
    errors = ok_page(site, "/search?status=error")
    assert "Bash" in errors and rows(errors) >= 2
    unanswered = ok_page(site, "/search?status=no_result")
    assert "Dangle" in unanswered
    readme = ok_page(site, "/search?where=pattern%3D%22README.md%22")
    assert rows(readme) >= 1 and "README.md" in readme
    assert rows(ok_page(site, "/search?where=pattern%3D%22nothing-like-it%22")) == 0
    finds = ok_page(site, "/search?contains=command%3Dfind+.")
    assert rows(finds) >= 1 and f'href="/session/{PARALLEL}?at=4#c-4-0"' in finds
    text = ok_page(site, "/search?text=pwned")
    assert session_ids(text) == {HOSTILE_ID}
    only_hostile = ok_page(site, f"/search?session={H}")
    assert session_ids(only_hostile) == {HOSTILE_ID} and rows(only_hostile) == 4
    glob_day = ok_page(site, "/search?tool=Glob&since=2025-09-03&until=2025-09-03")
    late = ok_page(site, "/search?tool=Glob&since=2025-09-04")
    assert rows(glob_day) + rows(late) == rows(ok_page(site, "/search?tool=Glob"))
    assert rows(ok_page(site, "/search?tool=Glob&raw_name=Bash")) == 0
    for bad in ("/search?text=ab", "/search?where=no-equals-sign", "/search?status=bogus",
                "/search?since=yesterday"):
        reply = site(bad)
        assert reply.status == 400, bad
        check_page(reply.text)
        assert 'class="error"' in reply.text


def test_tools_page_counts_and_chart(site: Fetch, store: TranscriptStore) -> None:
    page = ok_page(site, "/tools")
    assert '<svg class="usage"' in page and page.count("<rect ") > 3
    for usage in tool_usage(store):
        cells = re.search(r"class=\"tool\">" + re.escape(html.escape(usage.name)) + r"</a>.*?</tr>",
                          page, re.S)
        assert cells is not None, usage.name
        numbers = [int(n) for n in re.findall(r'class="num[^"]*">(?:<a [^>]*>)?(\d+)',
                                              cells.group(0))]
        assert numbers == [usage.calls, usage.sessions, usage.invalid_calls,
                           usage.error_results, usage.calls_without_result], usage.name
    september = ok_page(site, "/tools?since=2025-09-01&until=2025-09-30")
    assert "shell" not in september and "Glob" in september
    assert site("/tools?since=2025-09-02&until=2025-09-01").status == 400


# -- hostile content --------------------------------------------------------------------------


def test_hostile_session_renders_as_text_with_marks(site: Fetch) -> None:
    page = ok_page(site, f"/session/{H}")
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=window.__pwned=5&gt;" in page
    assert "javascript:window.__pwned = 6" in page  # as text inside <pre>, never a link
    assert "<script>window" not in page and "<img" not in page and "<iframe" not in page
    assert "invalid arguments: invalid_json" in page
    assert "error result" in page and "dangling: no result" in page
    assert "result without a call" in page
    assert f'data-src="/session/{H}/result/3/0"' in page
    assert "END-OF-BIG-RESULT" not in page  # folded: loaded on demand
    full = site(f"/session/{H}/result/3/0")
    assert full.status == 200 and full.headers["content-type"] == "text/plain; charset=utf-8"
    assert full.text == BIG_RESULT
    arguments = site(f"/session/{H}/text/2/1")
    assert json.loads(arguments.text)["url"] == "javascript:window.__pwned = 6"
    for path in ("/sessions", "/tools", "/search", f"/search?session={H}",
                 f"/session/{H}/repair?target=anthropic", "/search?text=pwned"):
        body = ok_page(site, path)
        assert "<script>window" not in body and "onerror=alert" not in body.replace(
            "onerror=alert(1)&gt;", "")


def test_repair_report_lists_the_changes(site: Fetch) -> None:
    page = ok_page(site, f"/session/{H}/repair?target=anthropic")
    for kind in ("synthesized_result", "dropped_orphan_result", "substituted_arguments"):
        assert f"<code>{kind}</code>" in page
    assert site(f"/session/{H}/repair?target=cohere").status == 400
    assert site(f"/session/{H}/repair").status == 400
    exported = json.loads(site(f"/session/{H}/export/anthropic?repair=1").body)
    assert exported["messages"][0]["role"] == "user"


# -- methods, errors, headers, access ---------------------------------------------------------


def test_only_get_and_head(site: Fetch) -> None:
    for path in ("/sessions", f"/session/{H}", "/static/viewer.css", "/nope", "/search"):
        for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"):
            reply = site(path, method, body=b"x=1")
            assert reply.status == 405, (method, path)
            assert reply.headers["allow"] == "GET, HEAD"
            assert reply.headers["content-security-policy"] == CSP
    get, head = site("/sessions"), site("/sessions", "HEAD")
    assert head.status == 200 and head.body == b""
    assert head.headers["content-length"] == get.headers["content-length"]


def test_not_found_and_bad_requests(site: Fetch) -> None:
    for path in ("/nope", "/session/nope", f"/session/{H}/result/99/0",
                 f"/session/{H}/result/3/9", f"/session/{H}/text/0/9",
                 f"/session/{H}/export/cohere", "/static/app.py", "/static/../app.py",
                 f"/session/{H}?page=99", f"/session/{H}/nothing", "/sessions/extra"):
        reply = site(path)
        assert reply.status == 404, path
        assert reply.headers["content-security-policy"] == CSP
        assert reply.headers["x-content-type-options"] == "nosniff"
    for path in ("/sessions?page=0", "/sessions?page=abc", "/sessions?since=yesterday",
                 f"/session/{H}/result/x/0", "/tools?page=-1"):
        assert site(path).status == 400, path
    hostile_404 = site("/session/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    assert hostile_404.status == 404 and b"<script>alert" not in hostile_404.body


def test_security_headers_everywhere(site: Fetch) -> None:
    for path in ("/sessions", "/static/viewer.js", "/nope", f"/session/{H}/result/3/0",
                 f"/session/{H}/export/openai-chat?repair=1"):
        headers = site(path).headers
        assert headers["content-security-policy"] == CSP
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["server"].startswith("transcript-store-viewer")
        assert "Python" not in headers["server"]


def test_loopback_host_header_is_required_without_a_token(site: Fetch) -> None:
    assert site("/sessions", headers={"Host": "evil.example"}).status == 403
    assert site("/sessions", headers={"Host": "evil.example:8765"}).status == 403
    assert site("/sessions", headers={"Host": "localhost:1"}).status == 200
    assert site("/sessions", headers={"Host": "[::1]:1"}).status == 200


def test_concurrent_requests_share_the_store(site: Fetch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    paths = ["/sessions", "/tools", f"/session/{H}", "/search?status=error",
             f"/session/{PARALLEL}", f"/session/{H}/result/3/0"] * 8
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda p: site(p).status, paths))
    assert statuses == [200] * len(paths)


# -- large data -------------------------------------------------------------------------------


def test_ten_thousand_sessions_are_listed_fifty_a_page(store: TranscriptStore,
                                           store_url: str) -> None:
    start = datetime(2025, 1, 1, tzinfo=UTC)
    rows_ = [{"session_id": f"bulk-{i:05d}", "title": f"bulk session {i}",
              "provider": "openai" if i % 2 else "anthropic", "model": "m", "cwd": None,
              "tags_json": "[]", "metadata_json": "{}",
              "created_at": start + timedelta(minutes=i),
              "updated_at": start + timedelta(minutes=i), "next_position": 0}
             for i in range(10_000)]
    with store.engine.begin() as conn:
        conn.execute(insert(sessions), rows_)
    with running(store_url) as server:
        fetch = fetcher(server)
        first = ok_page(fetch, "/sessions")
        assert "bulk-09999" in first and rows(first) == 50 and 'rel="next"' in first
        last = ok_page(fetch, "/sessions?page=200")
        assert "bulk-00000" in last and rows(last) == 50 and 'rel="next"' not in last
        assert "No sessions match" in ok_page(fetch, "/sessions?page=201")
        odd = ok_page(fetch, "/sessions?provider=openai&page=100")
        assert rows(odd) == 50 and "bulk-00001" in odd


def test_sixteen_thousand_message_session_shows_one_page(store: TranscriptStore,
                                                        store_url: str) -> None:
    records: list[dict[str, object]] = []
    for i in range(8_000):
        records.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function",
             "function": {"name": "Bash", "arguments": json.dumps({"command": f"ls {i}"})}}]})
        records.append({"role": "tool", "tool_call_id": f"c{i}",
                        "content": ("y" * 3000 if i == 7_999 else f"out {i}")})
    store.append("huge", records, title="huge")
    with running(store_url) as server:
        fetch = fetcher(server)
        first = ok_page(fetch, "/session/huge")
        # 200 messages a page: 100 calls in cards, 100 results beside them (no card: an anchor)
        assert first.count(' id="m-') == 200 and "page 1 of 80" in first
        assert first.count("<article ") == 100 and first.count('<span class="anchor"') == 100
        assert len(first) < 1_000_000
        last = ok_page(fetch, "/session/huge?at=15999")
        assert last.count(' id="m-') == 200 and "page 80 of 80" in last
        assert 'id="m-15800"' in last and 'id="m-15799"' not in last
        assert 'data-src="/session/huge/result/15999/0"' in last
        assert fetch("/session/huge/result/15999/0").text == "y" * 3000
        middle = ok_page(fetch, "/session/huge?page=40")
        assert 'id="m-7800"' in middle and middle.count(' id="m-') == 200
