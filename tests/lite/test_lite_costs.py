"""The ``usage`` reports on the stdlib driver (issue 39, ``store/audit/lite_costs.py``) give
exactly what ``store.usage_report`` and ``store.sessions_without_usage`` give, per report
and filter, with and without the roll-up of subagents into their roots."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import store
from store.audit.lite_costs import lite_usage_report

FILTERS: list[dict[str, Any]] = [
    {}, {"since": datetime(2025, 9, 1, tzinfo=UTC)}, {"until": datetime(2025, 9, 15, tzinfo=UTC)},
    {"agent": "claude-code"}, {"agent": "codex"}, {"cwd": "/w"}, {"agent": "nobody"},
]


def test_every_report_and_filter_gives_what_the_store_gives(lite_url: str) -> None:
    prices = store.load_prices()
    counted = 0
    with store.TranscriptStore.open(lite_url, read_only=True) as db:
        sessions = [s.session_id for s in db.list_sessions(limit=None)][:3]
        for by, filters, session, rollup in itertools.product(
                ("day", "week", "month", "model", "session", "agent", "project"), FILTERS,
                [None, *sessions], (False, True)):
            found = lite_usage_report(lite_url, by=by, table=prices, session=session,
                                      rollup=rollup, **filters)
            expected = store.usage_report(db, by=by, prices=prices, session_id=session,
                                          rollup=rollup, **filters)
            missing = store.sessions_without_usage(db, session_id=session, **filters)
            assert found == (expected, missing), (by, filters, session)
            counted += bool(expected)
    assert counted > 30  # (the store holds usage: the comparison is not vacuous)
    rolled, own = (lite_usage_report(lite_url, by="session", table=prices, rollup=rollup)
                   for rollup in (True, False))
    assert rolled is not None and own is not None
    assert len(rolled[0]) < len(own[0])  # (subagents are stored: the roll-up is exercised)


def test_tools_usage_by_a_key_on_the_driver_gives_what_the_store_gives(lite_url: str) -> None:
    """``tools usage --by`` (``store.tool_context``) on the stdlib reader: the same rows for
    every key and filter; the command imports no SQLAlchemy."""
    from backends import imported_modules

    from store.cli.toolsby import _lite_context

    counted = 0
    with store.TranscriptStore.open(lite_url, read_only=True) as db:
        for by, filters in itertools.product(("day", "week", "agent", "model"), FILTERS):
            expected = store.tool_context(db, by=by, **filters)
            assert _lite_context(lite_url, by, filters.get("since"), filters.get("until"),
                                 agent=filters.get("agent"), cwd=filters.get("cwd")
                                 ) == expected, (by, filters)
            counted += sum(e.results for e in expected)
    assert counted > 100
    modules, out = imported_modules("tools", "usage", "--by", "week", "--json", "--db",
                                    lite_url, roots=("sqlalchemy",))
    assert out.strip() and "sqlalchemy" not in modules and "store.db.store" not in modules
