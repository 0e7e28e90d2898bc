"""Seeding the agents' own tool names into ``tool_aliases`` (persistence).

An agent declares its tool names in its definition (``AgentDefinition.tools``,
:func:`store.agents.registry.vocabulary_rows`); revision 0020's ``alias_seeds`` remembers each
``(agent, raw name)`` ever seeded. :func:`seed_vocabulary`, run when a store is opened for
writing, adds the rows whose key was never seeded (to ``tool_aliases`` when no row has the key,
a user's own row winning) and records their keys, in one transaction. So a new agent's names
reach every database without a revision of their own, a row a user removed is not seeded
again, and a read (a read-only open, the viewer) never writes: it sees the rows the last
writable open seeded.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError

from store.agents.registry import vocabulary_rows
from store.db.schema.tables import alias_seeds, tool_aliases

__all__ = ["seed_vocabulary"]


def seed_vocabulary(engine: Engine) -> int:
    """Seed the vocabulary rows never seeded into ``engine``'s database; the number added
    to ``tool_aliases`` (``0`` when every key was seeded before: one small read)."""
    wanted = {(agent or "", raw): current for agent, raw, current in vocabulary_rows()}
    with engine.connect() as conn:
        seeded = {(a, r) for a, r in conn.execute(
            select(alias_seeds.c.agent, alias_seeds.c.raw_name))}
    missing = {key: current for key, current in wanted.items() if key not in seeded}
    if not missing:
        return 0
    now = datetime.now(UTC)
    try:
        return _seed(engine, missing, now)
    except IntegrityError:  # another writer seeded them first: nothing left to do
        return 0


def _seed(engine: Engine, missing: dict[tuple[str, str], str], now: datetime) -> int:
    added = 0
    # The write lock up front on SQLite (BEGIN IMMEDIATE): a read transaction that later
    # writes would deadlock with another opener doing the same.
    with engine.execution_options(sqlite_begin="IMMEDIATE").begin() as conn:
        # Again in the transaction: another process may have seeded them meanwhile.
        seeded = {(a, r) for a, r in conn.execute(
            select(alias_seeds.c.agent, alias_seeds.c.raw_name))}
        present = {(a, r) for a, r in conn.execute(
            select(tool_aliases.c.agent, tool_aliases.c.raw_name))}
        rows = [(key, current) for key, current in missing.items() if key not in seeded]
        aliases = [{"agent": a, "raw_name": r, "current_name": c, "created_at": now}
                   for (a, r), c in rows if (a, r) not in present]
        if aliases:
            conn.execute(insert(tool_aliases), aliases)
            added = len(aliases)
        if rows:
            conn.execute(insert(alias_seeds), [{"agent": a, "raw_name": r, "seeded_at": now}
                                               for (a, r), _ in rows])
    return added
