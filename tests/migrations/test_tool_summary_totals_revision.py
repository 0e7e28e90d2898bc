"""Revision 0026 (issue 39): ``tool_summary`` keeps each session's agent, and
``ix_tool_summary_totals`` gives ``tools usage`` its totals without a join. The upgrade fills
the agent of the summaries kept before it (so they stay in use), ``tools usage`` answers as
from the calls, and the downgrade drops the column and the index."""

from __future__ import annotations

from sqlalchemy import Engine, inspect, text

from store import TranscriptStore, tool_usage
from store.db.schema import migrate

_AGENTS = {"cc": "claude-code", "cx": "codex", "none": None}


def _filled(url: str) -> None:
    with TranscriptStore.open(url) as opened:
        for sid, agent in _AGENTS.items():
            for n, name in enumerate(("bash", "Read", "bash")):
                opened.append(sid, [
                    {"role": "assistant", "content": None, "tool_calls": [{
                        "id": f"{sid}-{n}", "type": "function",
                        "function": {"name": name, "arguments": '{"command": "ls"}'}}]},
                    {"role": "tool", "tool_call_id": f"{sid}-{n}", "content": "ok"}],
                    agent=agent)
        opened.update_search_index()  # (the catch-up writes the summaries)


def _agents(engine: Engine) -> dict[str, str | None]:
    with engine.connect() as conn:
        return {str(sid): agent for sid, agent in conn.execute(text(
            "SELECT DISTINCT session_id, agent FROM tool_summary"))}


def _usage(url: str, **scope: str) -> list[tuple[str, int, int]]:
    with TranscriptStore.open(url, read_only=True) as opened:
        return [(u.name, u.calls, u.sessions) for u in tool_usage(opened, limit=None, **scope)]


def test_the_upgrade_fills_each_summary_s_agent_and_the_totals_answer_alike(
        engine: Engine, new_url: str) -> None:
    migrate.upgrade(engine)
    _filled(new_url)
    assert _agents(engine) == _AGENTS  # (written by the catch-up)
    whole = _usage(new_url)
    assert whole == [("bash", 6, 3), ("read", 3, 3)]
    codex = _usage(new_url, agent="codex")
    assert codex == [("bash", 2, 1), ("read", 1, 1)]

    # Summaries kept by the release before (no agent column): the upgrade fills it.
    migrate.downgrade(engine, "0025")
    assert "agent" not in {c["name"] for c in inspect(engine).get_columns("tool_summary")}
    assert "ix_tool_summary_totals" not in {
        i["name"] for i in inspect(engine).get_indexes("tool_summary")}
    migrate.upgrade(engine, "0026")
    assert _agents(engine) == _AGENTS
    assert "ix_tool_summary_totals" in {
        i["name"] for i in inspect(engine).get_indexes("tool_summary")}
    with engine.connect() as conn:  # the stamps still hold: the totals are read from them
        assert conn.execute(text("SELECT count(*) FROM session_summaries")).scalar() == 3
    migrate.upgrade(engine)  # (0027 forgets the stamps: the next catch-up fills its table)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM session_summaries")).scalar() == 0
    assert _usage(new_url) == whole
    assert _usage(new_url, agent="codex") == codex
    with TranscriptStore.open(new_url) as opened:
        assert opened.verify().ok
