"""The ``usage`` reports of an SQLite file on the stdlib driver (or of a PostgreSQL database on
psycopg alone), for the command line's start-up (persistence; no SQLAlchemy).

:func:`lite_usage_report` answers ``store.usage_report`` and ``store.sessions_without_usage``
with the store's own reading and fold (``store.audit.cost_rows``: driver SQL) on a
``DriverConnection`` (PostgreSQL's on psycopg alone: :mod:`store.db.reading.pgread`). Only
the happy path: a plain SQLite file or a PostgreSQL database at head and a plain session
id or prefix (a subagent's usage rolled up into its root's session, agent and project as
the store rolls it: ``store.db.reading.usage.subagent_roots``); ``None`` for anything else
(the caller asks the store, which also words every error).
"""

from __future__ import annotations

from datetime import datetime

from store.audit.cost_rows import MissingUsage, UsageTotals, missing_rows, report_rows
from store.db.reading.lite import Reader, read_lite
from store.db.reading.pgread import driver_of
from store.db.reading.usage import subagent_roots
from store.usage.prices import PriceTable

__all__ = ["lite_usage_report"]


def lite_usage_report(url: str, *, by: str, table: PriceTable, since: datetime | None = None,
                      until: datetime | None = None, agent: str | None = None,
                      cwd: str | None = None, session: str | None = None,
                      rollup: bool = False
                      ) -> tuple[list[UsageTotals], list[MissingUsage]] | None:
    """The report's rows and the sessions without usage, as the store gives them."""
    if by not in ("day", "week", "month", "model", "session", "agent", "project"):
        return None

    def work(conn: Reader, session_id: str | None
             ) -> tuple[list[UsageTotals], list[MissingUsage]]:
        driver = driver_of(conn)
        roots = subagent_roots(driver) if rollup and by in ("session", "agent", "project") \
            else {}
        rows = report_rows(driver, by=by, since=since, until=until, agent=agent, cwd=cwd,
                           session_id=session_id, table=table, roots=roots)
        return rows, missing_rows(driver, since=since, until=until, agent=agent, cwd=cwd,
                                  session_id=session_id)

    return read_lite(url, session, work)
