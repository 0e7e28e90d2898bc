"""Tool usage folded into current names from rows grouped by raw name (persistence; stdlib
only, no SQLAlchemy).

The SQL of ``tools usage`` groups calls by raw name (and, for the names an alias scoped to an
agent renames or an editor tool's action names, by agent and action); the alias table then
folds those rows into current names here. Two sources feed the same fold: the store's
(:mod:`store.audit.usage`, SQLAlchemy Core on either backend) and the stdlib one of an SQLite
file (:mod:`store.audit.lite_usage`, the command line's start-up), so both answer alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from store.core.times import aware
from store.tools.actions import ACTION_ARGUMENT, action_key, split_action_key
from store.tools.names import AliasTable

__all__ = ["SummarySource", "ToolUsage", "UsageSource", "aware", "fold_usage"]


@dataclass(frozen=True, slots=True)
class ToolUsage:
    """Usage of one current tool name. ``raw_names``: the recorded names folded into it."""

    name: str
    raw_names: tuple[str, ...]
    calls: int
    sessions: int
    invalid_calls: int
    error_results: int  # calls with an error result
    calls_without_result: int
    first_seen: datetime | None
    last_seen: datetime | None


class UsageSource(Protocol):
    """The grouped rows of one usage question (its filters fixed by the source).

    Each row's counts: ``[calls, sessions, invalid, errors, without result, first, last]``.
    """

    #: No filter at all: :meth:`whole` answers from covering indexes.
    whole_store: bool

    def raw_names(self) -> set[str]:
        """The raw names of the store's calls (one scan of a covering index)."""

    def whole(self, raws: Sequence[str]) -> dict[str, list[Any]]:
        """The counts per raw name of ``raws`` over the whole store."""

    def grouped(self, raws: Sequence[str] | None, actions: bool) -> Iterable[Sequence[Any]]:
        """``[raw, *counts]`` per raw name; with ``raws``: those names only as
        ``[agent, raw, *counts]`` (``actions``: ``[agent, raw, action, *counts]``)."""

    def pairs(self, raws: Sequence[str], action: bool) -> Iterable[Sequence[Any]]:
        """The distinct ``(raw, session[, action])`` of the calls of ``raws``."""

    def agents(self) -> dict[str, str | None]:
        """Each session's agent (sessions with one)."""


_Key = tuple[str | None, str]  # (agent, raw name); agent None: calls of any agent


def fold_usage(source: UsageSource, aliases: AliasTable) -> list[ToolUsage]:
    """Usage per current name (unsorted): raw names an alias scoped to an agent renames are
    counted again per (agent, raw name), an editor tool's calls per action; the distinct
    sessions of a name made of several keys from the distinct (raw name, session) pairs."""
    stats: dict[_Key, list[Any]] = {}
    if source.whole_store:
        # The raw names first: those an agent's alias scopes are counted per agent only
        # (most of a store's calls are its agents' own tool names), the rest store-wide.
        present = source.raw_names()
        scoped_raws = sorted(aliases.scoped_names & present)
        rest = sorted(present - set(scoped_raws))
        if rest:
            for raw, row in source.whole(rest).items():
                stats[(None, raw)] = row
    else:
        for found in source.grouped(None, False):
            stats[(None, found[0])] = list(found[1:])
        scoped_raws = sorted(aliases.scoped_names & {raw for _, raw in stats})
        for raw in scoped_raws:
            del stats[(None, raw)]
    if scoped_raws:  # counted per agent
        for found in source.grouped(scoped_raws, False):
            stats[(found[0], found[1])] = list(found[2:])
    action_raws = sorted({raw for _, raw in stats} & set(ACTION_ARGUMENT))
    if action_raws:  # an editor tool's calls, counted again per action (view: read ...)
        for key in [k for k in stats if k[1] in action_raws]:
            del stats[key]
        for found in source.grouped(action_raws, True):
            stats[(found[0], action_key(found[1], found[2]))] = list(found[3:])
    groups: dict[str, list[_Key]] = {}
    for key in stats:
        groups.setdefault(aliases.display_name(key[1], key[0]), []).append(key)
    shared = {name: keys for name, keys in groups.items() if len(keys) > 1}
    sessions_of = _shared_sessions(source, aliases, shared)
    out = []
    for name, keys in groups.items():
        rows = [stats[key] for key in keys]
        firsts = [row[5] for row in rows if row[5] is not None]
        lasts = [row[6] for row in rows if row[6] is not None]
        out.append(ToolUsage(
            name, tuple(sorted({split_action_key(raw)[0] for _, raw in keys})),
            sum(int(row[0]) for row in rows),
            sessions_of[name] if name in sessions_of else int(rows[0][1]),
            sum(int(row[2] or 0) for row in rows),
            sum(int(row[3] or 0) for row in rows),
            sum(int(row[4] or 0) for row in rows),
            min(aware(t) for t in firsts) if firsts else None,
            max(aware(t) for t in lasts) if lasts else None,
        ))
    return out


def _shared_sessions(source: UsageSource, aliases: AliasTable,
                     shared: dict[str, list[_Key]]) -> dict[str, int]:
    """Distinct sessions of each current name made of several (agent, raw) keys: one query
    for the distinct (raw name, session) pairs of their raw names (and, when a scoped alias or
    an action is among them, one for the sessions' agents)."""
    if not shared:
        return {}
    raws = sorted({split_action_key(raw)[0] for keys in shared.values() for _, raw in keys})
    action = bool(set(raws) & set(ACTION_ARGUMENT))
    rows = list(source.pairs(raws, action))
    agents: dict[str, str | None] = {}
    if action or any(agent is not None for keys in shared.values() for agent, _ in keys):
        agents = source.agents()
    found: dict[str, set[str]] = {name: set() for name in shared}
    for raw, sid, *act in rows:
        name = aliases.display_name(raw, agents.get(sid), act[0] if act else None)
        if name in found:
            found[name].add(sid)
    return {name: len(sids) for name, sids in found.items()}


class SummarySource(UsageSource):
    """The grouped rows of :func:`fold_usage` from the summaries
    (``store.db.reading.summary_reads.ToolGroups``): rows per (agent, raw name, action) with
    their sessions counted, folded here. Sessions add up across agents (a session has one)
    and, for a raw name without actions, are each counted once; the counts of an editor
    tool's raw name across its actions are never used (``fold_usage`` counts those per
    action)."""

    whole_store = True

    def __init__(self, groups: Any) -> None:
        self._groups = groups
        self._rows: list[tuple[Any, ...]] = groups.rows

    def raw_names(self) -> set[str]:
        return {str(row[1]) for row in self._rows}

    def _fold(self, key: Callable[[tuple[Any, ...]], Any], raws: Sequence[str] | None
              ) -> dict[Any, list[Any]]:
        wanted = None if raws is None else set(raws)
        out: dict[Any, list[Any]] = {}
        for row in self._rows:
            if wanted is not None and row[1] not in wanted:
                continue
            k = key(row)
            found = out.get(k)
            if found is None:
                out[k] = [int(row[3]), int(row[4]), int(row[5]), int(row[6]), int(row[7]),
                          row[8], row[9]]
                continue
            for i in range(5):
                found[i] += int(row[3 + i])
            if row[8] < found[5]:
                found[5] = row[8]
            if row[9] > found[6]:
                found[6] = row[9]
        return out

    def whole(self, raws: Sequence[str]) -> dict[str, list[Any]]:
        return self._fold(lambda row: row[1], raws)

    def grouped(self, raws: Sequence[str] | None, actions: bool) -> Iterable[Sequence[Any]]:
        if raws is None:
            return [[raw, *counts] for raw, counts in self._fold(lambda row: row[1],
                                                                  None).items()]
        if actions:
            return [[*key, *counts] for key, counts in self._fold(
                lambda row: (row[0], row[1], row[2]), raws).items()]
        return [[*key, *counts] for key, counts in self._fold(
            lambda row: (row[0], row[1]), raws).items()]

    def pairs(self, raws: Sequence[str], action: bool) -> Iterable[Sequence[Any]]:
        return list(self._groups.pairs(raws, action))

    def agents(self) -> dict[str, str | None]:
        return dict(self._groups.agents())
