"""The habits people bring from git, llm, sqlite-utils and ccusage (issue 24): sessions by
their own activity with titles from the first real prompt, unique id prefixes, times as
people type them, --agent / --cwd, tables that fit the terminal, Did you mean, one -v, the
schema revisions, --db shown back, and imports and exports that say what they did. The
store-backed ones run on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import store
from store.cli.main import cli
from store.cli.timespec import parse_time
from store.importers.titles import prompt_title

AGENTS = Path(__file__).resolve().parents[1] / "fixtures" / "agents"


@pytest.fixture(autouse=True)
def _quiet_store_logger():
    logger = logging.getLogger("store")
    handlers, level = list(logger.handlers), logger.level
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


def run(*args: str, code: int = 0, env: dict[str, str] | None = None):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)
    assert result.exit_code == code, (result.output, result.stderr)
    return result


def rows(*args: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run(*args, "--json").stdout.splitlines()]


def said(stamp: str, text: str, n: int) -> dict[str, Any]:
    """A Claude Code style user line: the session's own time."""
    return {"type": "user", "uuid": f"u{n}-{text}", "timestamp": stamp,
            "message": {"role": "user", "content": text}, "session_id": "x"}


def bash(call_id: str, command: str, stamp: str = "2025-07-01T00:00:00Z") -> dict[str, Any]:
    """A Claude Code style assistant line with one Bash call, at ``stamp``."""
    return {"type": "assistant", "uuid": f"a-{call_id}", "timestamp": stamp,
            "session_id": "x", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": call_id, "name": "Bash",
                 "input": {"command": command}}]}}


@pytest.fixture
def seeded(store_url: str) -> str:
    """Three sessions appended in an order unlike their own times: "old" was stored last."""
    with store.TranscriptStore.open(store_url) as opened:
        opened.append("abc-new", [said("2025-09-20T10:00:00Z", "new", 0),
                                  bash("c1", "rm -rf build", "2025-09-20T10:00:00Z")],
                      agent="claude-code", cwd="/home/u/app", title="Stored by the agent")
        opened.append("abd-mid", [said("2025-09-01T10:00:00Z", "mid", 0),
                                  said("2025-09-10T10:00:00Z", "mid again", 1),
                                  *[bash(f"m{n}", "ls", "2025-09-10T10:00:00Z")
                                    for n in range(3)]],
                      agent="codex", cwd="/home/u/app/sub")
        opened.append("xyz-old", [said("2025-07-14T10:00:00Z", "old", 0),
                                  said("2025-07-15T10:00:00Z", "more", 1),
                                  said("2025-07-16T10:00:00Z", "and more", 2),
                                  said("2025-07-17T10:00:00Z", "still", 3)],
                      agent="codex", cwd="/home/u/other")
    return store_url


# -- finding things ---------------------------------------------------------------------------


def test_sessions_are_listed_by_their_own_last_activity_and_sorted_on_demand(seeded: str):
    def order(*extra: str) -> list[str]:
        return [r["session_id"] for r in rows("sessions", "list", "--db", seeded, *extra)]

    assert order() == ["abc-new", "abd-mid", "xyz-old"]  # not the order they were stored in
    assert order("--sort", "started") == ["abc-new", "abd-mid", "xyz-old"]
    assert order("--sort", "messages") == ["abd-mid", "xyz-old", "abc-new"]
    assert order("--sort", "calls") == ["abd-mid", "abc-new", "xyz-old"]
    (mid,) = [r for r in rows("sessions", "list", "--db", seeded) if r["session_id"] == "abd-mid"]
    assert (mid["started_at"], mid["updated_at"]) == ("2025-09-01T10:00:00Z",
                                                      "2025-09-10T10:00:00Z")
    assert (mid["messages"], mid["calls"]) == (5, 3)
    run("sessions", "list", "--sort", "size", "--db", seeded, code=2)


def test_agent_and_cwd_select_sessions_and_calls(seeded: str):
    def listed(*extra: str) -> list[str]:
        return sorted(r["session_id"] for r in rows("sessions", "list", "--db", seeded, *extra))

    assert listed("--agent", "codex") == ["abd-mid", "xyz-old"]
    assert listed("--cwd", "/home/u/app") == ["abc-new", "abd-mid"]  # the folder and below
    assert listed("--cwd", "/home/u/app/") == ["abc-new", "abd-mid"]
    assert listed("--cwd", "/home/u/ap") == []  # a folder, not a string prefix
    assert listed("--agent", "codex", "--cwd", "/home/u/app") == ["abd-mid"]
    calls = rows("calls", "search", "--db", seeded, "--agent", "claude-code")
    assert [(c["call_id"], c["agent"], c["cwd"]) for c in calls] == [
        ("c1", "claude-code", "/home/u/app")]
    assert len(rows("calls", "search", "--db", seeded, "--cwd", "/home/u/app/sub")) == 3
    table = run("calls", "search", "--db", seeded, "--tool", "bash", "--command", "rm",
                env={"COLUMNS": "200"}).stdout
    assert "claude-code" in table and "/home/u/app" in table


def test_agent_and_cwd_select_the_tools_and_usage_reports(seeded: str):
    def tools(*extra: str) -> dict[str, int]:
        return {r["tool"]: r["calls"] for r in rows("tools", "usage", "--db", seeded, *extra)}

    assert tools() == {"bash": 4}
    assert tools("--agent", "claude-code") == {"bash": 1}
    assert tools("--agent", "codex", "--cwd", "/home/u/app") == {"bash": 3}
    assert tools("--cwd", "/home/u/other") == {}
    assert tools("--cwd", "/home/u/ap") == {}  # a folder, not a string prefix
    by_agent = rows("tools", "usage", "--by", "agent", "--cwd", "/home/u/app/sub", "--db",
                    seeded)
    assert [(r["agent"], r["tool"], r["calls"]) for r in by_agent] == [("codex", "bash", 3)]
    # usage takes the same scope (nothing recorded here: no rows, and no error)
    assert rows("usage", "--by", "agent", "--cwd", "/home/u/app", "--db", seeded) == []


def test_a_unique_prefix_names_a_session_everywhere(seeded: str):
    shown = rows("sessions", "show", "abd", "--db", seeded)
    assert {r["session_id"] for r in shown} == {"abd-mid"}
    assert run("calls", "show", "abc:1.0", "--db", seeded, "--json").stdout.count("c1") == 1
    assert {c["session_id"] for c in rows("calls", "search", "--session", "xyz", "--db",
                                          seeded)} == set()  # (xyz-old has no calls)
    assert len(rows("calls", "search", "--session", "abd", "--db", seeded)) == 3
    exported = json.loads(run("export", "abc", "--to", "openai-chat", "--repair", "--db",
                              seeded).stdout)
    assert exported["messages"][0]["content"] == "new"
    assert "abc-new: tags t" in run("sessions", "tag", "abc-n", "t", "--db", seeded).stdout
    assert "exactly" not in run("verify", "--session", "xyz", "--db", seeded).stdout


def test_an_ambiguous_prefix_lists_the_candidates(seeded: str):
    out = run("sessions", "show", "ab", "--db", seeded, code=1)
    assert "'ab' is ambiguous" in out.stderr
    assert "abc-new" in out.stderr and "abd-mid" in out.stderr
    missing = run("sessions", "show", "zzz", "--db", seeded, code=1)
    assert "no session with id 'zzz'" in missing.stderr


def test_resolving_a_prefix_on_the_store(store: store.TranscriptStore):
    for sid in ("Abc-1", "abc-2", "ab%_", "other"):
        store.create_session(sid)
    assert store.resolve_session_id("Abc") == "Abc-1"  # case counts, on SQLite too
    assert store.resolve_session_id("ab%") == "ab%_"  # LIKE characters are plain text
    assert store.resolve_session_id("other") == "other"
    with pytest.raises(store_errors().AmbiguousSessionId) as raised:
        store.resolve_session_id("ab")
    assert raised.value.candidates == ("ab%_", "abc-2") and not raised.value.more
    for n in range(12):
        store.create_session(f"many-{n:02}")
    with pytest.raises(store_errors().AmbiguousSessionId) as many:
        store.resolve_session_id("many")
    assert len(many.value.candidates) == 10 and many.value.more
    with pytest.raises(store_errors().SessionNotFound):
        store.resolve_session_id("nothing")


def store_errors() -> Any:
    return store


# -- times ------------------------------------------------------------------------------------


NOW = datetime(2025, 7, 20, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(("text", "expected"), [
    ("2025-07", datetime(2025, 7, 1, tzinfo=UTC)),
    ("2025-07-14", datetime(2025, 7, 14, tzinfo=UTC)),
    ("2025-07-14T09:30Z", datetime(2025, 7, 14, 9, 30, tzinfo=UTC)),
    ("2025-07-14T09:30:00+02:00", datetime(2025, 7, 14, 7, 30, tzinfo=UTC)),
    ("7d", NOW - timedelta(days=7)), ("12h", NOW - timedelta(hours=12)),
    ("2w", NOW - timedelta(weeks=2)), ("90m", NOW - timedelta(minutes=90)),
    ("now", NOW), ("today", datetime(2025, 7, 20, tzinfo=UTC)),
    ("yesterday", datetime(2025, 7, 19, tzinfo=UTC)), (" Yesterday ", datetime(2025, 7, 19,
                                                                               tzinfo=UTC)),
])
def test_times_as_people_type_them(text: str, expected: datetime, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    import time

    time.tzset()
    assert parse_time(text, NOW) == expected


def test_a_time_without_a_zone_is_local(monkeypatch):
    import time

    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        assert parse_time("2025-07-14", NOW) == datetime(2025, 7, 13, 22, tzinfo=UTC)
        assert parse_time("yesterday", NOW) == datetime(2025, 7, 18, 22, tzinfo=UTC)
    finally:
        monkeypatch.setenv("TZ", "UTC")
        time.tzset()


@pytest.mark.parametrize("bad", ["lastweek", "7x", "2025-13", "", "99999999999d"])
def test_a_bad_time_is_a_usage_error_naming_the_option(bad: str, tmp_path: Path):
    out = run("calls", "search", "--since", bad, "--db", str(tmp_path / "x.sqlite"), code=2)
    assert "Invalid value for '--since'" in out.stderr and "yesterday" in out.stderr


def test_every_time_filter_takes_the_same_forms(seeded: str):
    def listed(*extra: str) -> list[str]:
        return sorted(r["session_id"] for r in rows("sessions", "list", "--db", seeded, *extra))

    assert listed("--since", "2025-09") == ["abc-new", "abd-mid"]
    assert listed("--until", "2025-07-15") == ["xyz-old"]
    assert listed("--since", "2025-07", "--until", "2025-08") == ["xyz-old"]
    assert listed("--since", "7d") == []  # (months ago)
    assert [c["call_id"] for c in rows("calls", "search", "--since", "2025-09-15", "--db",
                                       seeded)] == ["c1"]
    assert {u["tool"] for u in rows("tools", "usage", "--since", "2025-09-15", "--db",
                                    seeded)} == {"bash"}
    assert rows("tools", "usage", "--since", "yesterday", "--db", seeded) == []


# -- titles -----------------------------------------------------------------------------------


def test_a_title_is_the_first_real_prompt():
    user = store.normalize_message
    messages = [
        user({"role": "user", "content": "<command-name>/clear</command-name>\n"
                                         "<command-message>clear</command-message>"}),
        user({"role": "user", "content": "<local-command-stdout></local-command-stdout>"}),
        user({"role": "user", "content": "Caveat: The messages below were generated by the "
                                         "user while running local commands."}),
        user({"role": "user", "content": "/review PR 12"}),
        user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                           "content": "a result"}]}),
        user({"role": "user", "content": "<system-reminder>be brief</system-reminder>\n\n"
                                         "  Fix the   flaky test\nin tests/"}),
    ]
    assert prompt_title(messages) == "Fix the flaky test"
    assert prompt_title(messages[:5]) is None
    long = prompt_title([user({"role": "user", "content": "word " * 40})])
    assert long is not None and len(long) <= 80 and long.endswith("…")


def test_imports_title_sessions_by_their_prompt_and_keep_the_agents_title(tmp_path: Path):
    db = f"sqlite:///{tmp_path / 't.sqlite'}"
    run("import", "--settle", "0", "-q", "--db", db, str(AGENTS / "claude"),
        str(AGENTS / "codex"), str(AGENTS / "gemini"))
    titles = {r["session_id"]: r["title"] for r in rows("sessions", "list", "--db", db)}
    files = [t for t in titles.values() if t.endswith((".jsonl", ".json"))]
    assert not files, titles
    kward = tmp_path / "kward.jsonl"
    kward.write_text(json.dumps({"type": "session", "id": "kw", "version": 1}) + "\n"
                     + json.dumps({"type": "session_info", "name": "Named by the agent"}) + "\n"
                     + json.dumps({"type": "message", "message": {
                         "role": "user", "content": "not the title"}}) + "\n")
    run("import", "--settle", "0", "-q", "--db", db, str(kward))
    titles = {r["session_id"]: r["title"] for r in rows("sessions", "list", "--db", db)}
    assert "Named by the agent" in titles.values()


def test_a_reimport_replaces_a_file_name_title(tmp_path: Path):
    db = tmp_path / "old.sqlite"
    run("import", "--settle", "0", "-q", "--db", str(db), str(AGENTS / "codex"))
    (session,) = rows("sessions", "list", "--db", str(db))
    name = "rollout-2025-09-12T08-00-00-22222222-2222-4222-8222-222222222222.jsonl"
    with sqlite3.connect(db) as conn:  # what an import before prompt titles stored (and
        conn.execute("UPDATE sessions SET title = ?", (name,))  # before per-file states)
        conn.execute("DELETE FROM source_files")
    conn.close()
    assert rows("sessions", "list", "--db", str(db))[0]["title"] == name
    run("import", "--settle", "0", "-q", "--db", str(db), str(AGENTS / "codex"))
    assert rows("sessions", "list", "--db", str(db))[0]["title"] == session["title"] != name


# -- tables -----------------------------------------------------------------------------------


def test_tables_fit_the_terminal_and_wide_shows_everything(seeded: str):
    with store.TranscriptStore.open(seeded) as opened:
        opened.append("abc-new", [bash("long", "echo " + "x" * 300)])
    for args in (("sessions", "list"), ("calls", "search"), ("demo",)):
        out = run(*args, "--db", seeded, env={"COLUMNS": "100"}).stdout
        # (the demo's "stored in <url>" line is whole on purpose: a URL is never cut)
        widths = [len(line) for line in out.splitlines() if not line.startswith("stored in ")]
        assert max(widths) <= 100, (args, out)
    cut = run("calls", "search", "--db", seeded, env={"COLUMNS": "100"}).stdout
    assert "…" in cut and "x" * 300 not in cut
    wide = run("calls", "search", "--db", seeded, "--wide", env={"COLUMNS": "100"}).stdout
    assert "x" * 300 in wide
    assert max(len(line) for line in wide.splitlines()) > 100
    times = run("sessions", "list", "--db", seeded, env={"COLUMNS": "100"}).stdout
    assert "2025-09-20 10:00" in times  # local time (TZ unset: UTC), to the minute


# -- one vocabulary ---------------------------------------------------------------------------


def test_a_mistyped_command_gets_did_you_mean():
    assert "Did you mean 'sessions'?" in run("sesions", code=2).stderr
    assert "Did you mean 'search'?" in run("calls", "serch", code=2).stderr
    assert "Did you mean" not in run("zzzzz", code=2).stderr


def test_the_log_level_comes_from_v_or_the_environment(tmp_path: Path):
    db = f"sqlite:///{tmp_path / 'log.sqlite'}"
    quiet = run("db", "upgrade", "--db", db)
    assert "INFO" not in quiet.stderr
    db2 = f"sqlite:///{tmp_path / 'log2.sqlite'}"
    logged = run("db", "upgrade", "--db", db2, env={"TRANSCRIPT_STORE_LOG": "info"})
    assert "INFO store" in logged.stderr
    bad = run("db", "current", "--db", db, env={"TRANSCRIPT_STORE_LOG": "loud"}, code=2)
    assert "TRANSCRIPT_STORE_LOG" in bad.stderr
    # (no -v option of its own: the global one; "mistral-vibe" is a format name)
    assert not re.search(r"(^|[\s,])-v\b(?!ibe)", run("import", "--help").stdout
                         .replace("-v import", ""), re.M)


def test_db_upgrade_and_downgrade_take_the_revision_alike_and_history_lists_them(
        tmp_path: Path):
    db = f"sqlite:///{tmp_path / 'rev.sqlite'}"
    history = rows("db", "history", "--db", db)
    ids = [r["revision"] for r in history]
    assert ids == sorted(ids) and history[-1]["is_head"] and not any(
        r["is_current"] for r in history)
    assert history[0]["down_revision"] is None
    assert f"at revision {ids[1]}" in run("db", "upgrade", ids[1], "--db", db).stdout
    assert f"at revision {ids[-1]}" in run("db", "upgrade", "--db", db).stdout
    assert f"at revision {ids[-2]}" in run("db", "downgrade", ids[-2], "--yes", "--db",
                                           db).stdout
    assert f"at revision {ids[-1]}" in run("db", "upgrade", "head", "--db", db).stdout
    text = run("db", "history", "--db", db).stdout
    assert f"{ids[-2]} -> {ids[-1]} (head, current)" in text


def test_db_path_is_shown_back_and_a_missing_folder_is_refused(tmp_path: Path,
                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = run("demo", "--db", "here.sqlite").stdout
    assert "stored in here.sqlite" in out and "unparseable" not in out
    assert "imported into here.sqlite" in run("import", "--settle", "0", "-q", "--db",
                                              "here.sqlite", str(AGENTS / "codex")).stdout
    missing = run("import", "--db", "/no/such/dir/x.sqlite", str(AGENTS / "codex"), code=1)
    assert "the folder /no/such/dir does not exist" in missing.stderr
    assert not Path("/no/such/dir").exists()
    assert "does not exist" in run("demo", "--db", "sqlite:///nope/x.sqlite", code=1).stderr
    assert not (tmp_path / "nope").exists()


def test_a_forced_format_that_does_not_fit_is_an_error(tmp_path: Path):
    db = f"sqlite:///{tmp_path / 'f.sqlite'}"
    out = run("import", "--format", "codex", "--settle", "0", "-q", "--db", db,
              str(AGENTS / "claude"), code=1)
    assert "--format codex does not fit it: it looks like claude-code" in out.stderr
    assert rows("sessions", "list", "--db", db) == []
    plain = tmp_path / "chat.json"
    plain.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    nothing = run("import", "--format", "gemini-cli", "--settle", "0", "-q", "--db", db,
                  str(plain), code=1)
    assert "--format gemini-cli read no message from it" in nothing.stderr


def test_exports_keep_recorded_names_and_include_the_tools(seeded: str):
    with store.TranscriptStore.open(seeded) as opened:
        opened.record_tools("abc-new", [{"type": "function", "function": {
            "name": "Bash", "description": "Run a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}])
    current = json.loads(run("export", "abc", "--to", "openai-chat", "--repair",
                             "--include-tools", "--db", seeded).stdout)
    (call,) = [c for m in current["messages"] for c in m.get("tool_calls") or []]
    assert call["function"]["name"] == "bash"
    assert [t["function"]["name"] for t in current["tools"]] == ["bash"]
    recorded = json.loads(run("export", "abc", "--to", "anthropic", "--repair",
                              "--keep-recorded-names", "--include-tools", "--db",
                              seeded).stdout)
    uses = [b for m in recorded["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_use"]
    assert [u["name"] for u in uses] == ["Bash"]
    assert recorded["tools"][0]["name"] == "Bash" and "input_schema" in recorded["tools"][0]
    bedrock = json.loads(run("export", "abc", "--to", "bedrock", "--repair",
                             "--include-tools", "--db", seeded).stdout)
    assert bedrock["toolConfig"]["tools"][0]["toolSpec"]["name"] == "bash"
    plain = json.loads(run("export", "abc", "--to", "openai-chat", "--repair", "--db",
                           seeded).stdout)
    assert "tools" not in plain
    run("export", "--to", "jsonl", "--include-tools", "--db", seeded, code=2)


# -- a fresh clone ----------------------------------------------------------------------------


def test_a_missing_corpus_skips_with_its_reason_and_fails_under_ci(monkeypatch, tmp_path):
    import backends

    monkeypatch.setattr(backends, "CORPUS", tmp_path / "no-corpus")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="corpus not found"):
        backends.corpus("claude_code")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="corpus not found"):
        backends.corpus("claude_code")
    (tmp_path / "no-corpus" / "codex").mkdir(parents=True)
    assert backends.corpus("codex") == tmp_path / "no-corpus" / "codex"
