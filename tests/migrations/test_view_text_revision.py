"""Revision 0024 (issue 39): on SQLite each argument view's texts have a partial index, so
that a search by view (``calls search --command``) reads that view's rows only; the answers
are those of a scan of the table. PostgreSQL is unchanged; the downgrade drops them."""

from __future__ import annotations

from sqlalchemy import Engine, text

from store import CallQuery, TranscriptStore, ViewCondition, search_calls
from store.db.schema import migrate
from store.tools.vocabulary import VIEW_NAMES


def _indexes(engine: Engine) -> dict[str, str]:
    with engine.connect() as conn:
        return {str(name): str(sql) for name, sql in conn.execute(text(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' "
            "AND tbl_name = 'call_views' AND name LIKE 'ix_call_views_%'"))}


def _calls(opened: TranscriptStore, view: str, value: str) -> list[tuple[str, int, int]]:
    query = CallQuery(views=(ViewCondition(view, value, "contains"),))
    return sorted((m.session_id, m.position, m.index)
                  for m in search_calls(opened, query, limit=None))


def test_each_view_has_its_index_and_a_search_by_view_reads_it(engine: Engine,
                                                               new_url: str) -> None:
    migrate.upgrade(engine, "0023")
    migrate.upgrade(engine)
    sqlite = engine.dialect.name == "sqlite"
    if not sqlite:
        with engine.connect() as conn:
            assert not conn.execute(text(
                "SELECT 1 FROM pg_indexes WHERE indexname LIKE 'ix_call_views_%'")).all()
        return
    indexes = _indexes(engine)
    assert sorted(indexes) == sorted(f"ix_call_views_{view}" for view in VIEW_NAMES)
    for view in VIEW_NAMES:
        assert f"WHERE view = '{view}'" in indexes[f"ix_call_views_{view}"]

    with TranscriptStore.open(new_url) as opened:
        for n in range(30):
            opened.append(f"s{n % 3}", [{"role": "assistant", "content": None, "tool_calls": [{
                "id": f"c{n}", "type": "function", "function": {
                    "name": "bash", "arguments":
                        '{"command": "git ' + ("push" if n % 4 == 0 else "pull") + '",'
                        ' "description": "x"}'}}]}])
        opened.update_search_index()
        want = sorted((f"s{n % 3}", n // 3, 0) for n in range(30) if n % 4 == 0)
        assert _calls(opened, "command", "git push") == want
        with opened._engine.connect() as conn:
            plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT session_id, position, call_index FROM call_views "
                "WHERE view = ? AND instr(text, ?) > 0", ("command", "git push")))
        assert "ix_call_views_command" in plan

    migrate.downgrade(engine, "0023")
    assert _indexes(engine) == {}
    assert migrate.current(engine) == "0023"
