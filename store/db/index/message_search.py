"""Message search over the message index, ranked and paged (persistence).

:func:`search_messages` reads a query (``store.core.textquery``: words ANDed, "phrases",
prefix*, -word), matches it with the backend's own full-text engine over
``message_search`` (``store/db/index/message_index.py``) and returns one
:class:`~store.core.textquery.MessageHit` per message, its best-ranked part:

* SQLite: ``message_fts MATCH`` (every term a quoted FTS5 string), ranked by ``bm25()``
  (negated: higher is better), the snippet by ``snippet()``.
* PostgreSQL: ``tsv @@`` a tsquery built from ``phraseto_tsquery('simple', term)`` (a prefix:
  ``to_tsquery('simple', 'stem:*')``) with ``&&`` and ``&& !!``, ranked by ``ts_rank(tsv,
  query, 1)`` (length-normalised), the snippet by ``ts_headline``.

Filters: a role (``store.core.textquery.SEARCH_ROLES``) and a session inside the match; the
session's agent, working folder (the folder or below it) and the message's time around it.
Ties in rank go to the newer message. Snippets are made for the page only.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Connection,
    Float,
    Integer,
    String,
    and_,
    column,
    func,
    literal,
    select,
    table,
    text,
)

from store.core.errors import DatabaseError, UsageError
from store.core.textquery import (
    HIT_END,
    HIT_START,
    SEARCH_ROLES,
    MessageHit,
    TextQuery,
    fts5_match,
    parse_text_query,
)
from store.core.times import as_utc
from store.db.base import StoreBase, driver_reason
from store.db.index.message_index import (
    MESSAGE_FTS,
    MESSAGE_SEARCH,
    has_message_index,
    messages_behind,
)
from store.db.index.search_index import IndexUpdate
from store.db.schema.tables import messages, sessions
from store.db.sessions import sessions_where

__all__ = ["MAX_LIMIT", "SNIPPET_WORDS", "MessageSearchMixin", "check_search",
           "search_messages"]

#: The most hits one page returns.
MAX_LIMIT = 1000
#: About how many words a snippet shows.
SNIPPET_WORDS = 24
#: PostgreSQL reads ASCII punctuation as spaces (the generated ``tsv`` of revision 0017, and
#: the terms here): words split as FTS5's ``unicode61`` splits them.
PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_AS_SPACES = str.maketrans(PUNCTUATION, " " * len(PUNCTUATION))
_SPACED = "translate(s.body, :punctuation, :spaces)"
#: The words before a PostgreSQL headline (which starts at the match) a snippet shows.
_LEAD = re.compile(r"(?:\S+\s+){0,6}\S*$")


def check_search(query: str, role: str | None, limit: int, offset: int) -> TextQuery:
    """The parsed query, after the page and role are checked (typed errors naming them)."""
    if role is not None and role not in SEARCH_ROLES:
        raise UsageError(f"unknown role {role!r}: use {', '.join(SEARCH_ROLES)}")
    if not isinstance(limit, int) or not isinstance(offset, int) or limit < 0 or offset < 0:
        raise UsageError("limit and offset must be integers, not negative")
    if limit > MAX_LIMIT:
        raise UsageError(f"limit {limit} is over {MAX_LIMIT}: page with offset")
    return parse_text_query(query)


def _pg_tsquery(parsed: TextQuery, params: dict[str, Any]) -> str:
    """The tsquery expression of ``parsed`` (every term a bound value)."""
    def one(number: int, term: Any) -> str:
        name = f"term_{number}"
        if term.prefix:
            params[name] = term.text + ":*"  # letters and digits only (the parser checks)
            return f"to_tsquery('simple', :{name})"
        params[name] = term.text.translate(_AS_SPACES)
        return f"phraseto_tsquery('simple', :{name})"

    numbered = list(enumerate(parsed.terms))
    found = " && ".join(one(n, t) for n, t in numbered if not t.negated)
    left_out = [one(n, t) for n, t in numbered if t.negated]
    if not left_out:
        return f"({found})"
    return f"(({found}) && !!({' || '.join(left_out)}))"


def _scored(conn: Connection, parsed: TextQuery, role: str | None, session_id: str | None,
            params: dict[str, Any], *, keyed: bool) -> Any:
    """The matching index rows with their score, as a subquery ``f``: ``key`` (SQLite: the
    row id; PostgreSQL: the role) and ``score``, and unless ``keyed`` (SQLite only, with no
    role or session) the row's session, position and role."""
    scope = ""
    if role is not None:
        scope += " AND s.role = :role"
        params["role"] = role
    if session_id is not None:
        scope += " AND s.session_id = :sid"
        params["sid"] = session_id
    key_type: Any = String if conn.dialect.name == "postgresql" else Integer
    if conn.dialect.name == "postgresql":
        sql = (f"SELECT s.role AS key, s.session_id, s.position, s.role, "
               f"ts_rank(s.tsv, {_pg_tsquery(parsed, params)}, 1) AS score "
               f"FROM {MESSAGE_SEARCH} AS s "
               f"WHERE s.tsv @@ {_pg_tsquery(parsed, params)}{scope}")
    else:
        params["match"] = fts5_match(parsed)
        if keyed:  # (the index alone: its rows are read for the best ones only)
            return text(f"SELECT {MESSAGE_FTS}.rowid AS key, -bm25({MESSAGE_FTS}) AS score "
                        f"FROM {MESSAGE_FTS} WHERE {MESSAGE_FTS} MATCH :match"
                        ).bindparams(**params).columns(key=key_type, score=Float).subquery("f")
        sql = (f"SELECT s.id AS key, s.session_id, s.position, s.role, "
               f"-bm25({MESSAGE_FTS}) AS score "
               f"FROM {MESSAGE_FTS} JOIN {MESSAGE_SEARCH} AS s ON s.id = {MESSAGE_FTS}.rowid "
               f"WHERE {MESSAGE_FTS} MATCH :match{scope}")
    return text(sql).bindparams(**params).columns(
        key=key_type, session_id=String, position=Integer, role=String, score=Float
    ).subquery("f")


#: The message index's rows: one per message and role (``ux_message_search_key``).
_SEARCH_ROWS = table(MESSAGE_SEARCH, column("id", Integer), column("session_id", String),
                     column("position", Integer), column("role", String))


def _matches(conn: Connection, parsed: TextQuery, *, role: str | None,
             session_id: str | None, since: datetime | None, until: datetime | None,
             agent: str | None, project: str | None, depth: int) -> Any:
    """The matching messages that can be among the ``depth`` best, each with its best part,
    as a subquery ``h`` (``key``, session, position, role, score, ``n`` = 1 for a message's
    best part).

    Ranking every match of a common word through the per-message window, then joining each
    to its message for the time that breaks ties, cost ~1 s at 10^6 messages. A message has
    at most one row per role, so the ``depth`` best messages are among the rows scoring at
    least the ``depth x roles``-th best row's score (the cut): only those go on. Every
    filter is applied before the cut, so it counts the rows that can be shown."""
    m = messages
    filtered = since is not None or until is not None or agent is not None \
        or project is not None
    keyed = conn.dialect.name != "postgresql" and role is None and session_id is None \
        and not filtered
    f = _scored(conn, parsed, role, session_id, {}, keyed=keyed)
    if keyed:
        base = select(f.c.key, f.c.score)
    else:
        base = select(f.c.key, f.c.session_id, f.c.position, f.c.role, f.c.score)
        conditions: list[Any] = []
        if since is not None:
            conditions.append(m.c.created_at >= as_utc(since))
        if until is not None:
            conditions.append(m.c.created_at < as_utc(until))
        if since is not None or until is not None:
            base = base.select_from(f.join(m, and_(m.c.session_id == f.c.session_id,
                                                   m.c.position == f.c.position)))
        if agent is not None or project is not None:
            conditions.append(f.c.session_id.in_(sessions_where(agent=agent, cwd=project)))
        base = base.where(*conditions)
    r = base.cte("r").prefix_with("MATERIALIZED")
    cut = (select(r.c.score).order_by(r.c.score.desc()).limit(1)
           .offset(depth * len(SEARCH_ROLES) - 1).scalar_subquery())
    best = r.c.score >= func.coalesce(cut, literal(-1e308, Float))
    if keyed:
        s = _SEARCH_ROWS
        rows = (select(r.c.key, s.c.session_id, s.c.position, s.c.role, r.c.score)
                .select_from(r.join(s, s.c.id == r.c.key)).where(best).subquery("b"))
    else:
        rows = select(r.c.key, r.c.session_id, r.c.position, r.c.role, r.c.score) \
            .where(best).subquery("b")
    return select(rows.c.key, rows.c.session_id, rows.c.position, rows.c.role, rows.c.score,
                  func.row_number().over(partition_by=[rows.c.session_id, rows.c.position],
                                         order_by=[rows.c.score.desc(), rows.c.role])
                  .label("n")).subquery("h")


def search_messages(conn: Connection, query: str, *, agent: str | None = None,
                    project: str | None = None, since: datetime | None = None,
                    until: datetime | None = None, role: str | None = None,
                    session_id: str | None = None, limit: int = 20, offset: int = 0
                    ) -> list[MessageHit]:
    """The messages matching ``query`` (see the module docstring), best first, paged."""
    parsed = check_search(query, role, limit, offset)
    if not has_message_index(conn):
        raise UsageError("message search needs SQLite's FTS5, which this SQLite library "
                         "lacks (use PostgreSQL, or a Python built with FTS5)")
    if limit == 0:
        return []
    h = _matches(conn, parsed, role=role, session_id=session_id, since=since, until=until,
                 agent=agent, project=project, depth=limit + offset)
    m, s = messages, sessions
    statement = (
        select(h.c.key, h.c.session_id, h.c.position, h.c.role, h.c.score, m.c.created_at,
               s.c.agent, s.c.cwd, s.c.title)
        .select_from(h.join(m, and_(m.c.session_id == h.c.session_id,
                                    m.c.position == h.c.position))
                     .join(s, s.c.session_id == h.c.session_id))
        .where(h.c.n == 1)
        .order_by(h.c.score.desc(), m.c.created_at.desc(), h.c.session_id, h.c.position)
        .limit(limit).offset(offset))
    rows = list(conn.execute(statement).all())
    snippets = _snippets(conn, parsed, rows)
    return [MessageHit(str(sid), int(pos), str(found_role), as_utc(_time(created)), agent_,
                       cwd, title, snippets.get((str(sid), int(pos), str(found_role)), ""),
                       float(score))
            for key, sid, pos, found_role, score, created, agent_, cwd, title in rows]


def _restore(body: str, headline: str) -> str:
    """The headline PostgreSQL made of the body read with punctuation as spaces, as a piece
    of the body itself (one character for one: the same place holds the original text), with
    the hit marks kept and ``…`` where the body goes on."""
    plain = headline.replace(HIT_START, "").replace(HIT_END, "")
    at = body.translate(_AS_SPACES).find(plain)
    if at < 0 or not plain:
        return headline
    out: list[str] = []
    i = at
    for char in headline:
        if char in (HIT_START, HIT_END):
            out.append(char)
        else:
            out.append(body[i])
            i += 1
    before = _LEAD.search(body[max(0, at - 160):at])  # a few words of what leads to it
    lead = before.group() if before is not None else ""
    start = "…" if body[:at - len(lead)].strip() else ""
    end = "…" if body[i:].strip() else ""
    return start + (lead + "".join(out)).strip() + end


def _time(value: Any) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def _snippets(conn: Connection, parsed: TextQuery, rows: list[Any]
              ) -> dict[tuple[str, int, str], str]:
    """The snippet of each hit's matched part, with the hit marks, for this page only."""
    if not rows:
        return {}
    params: dict[str, Any] = {}
    if conn.dialect.name == "postgresql":
        tsquery = _pg_tsquery(parsed, params)
        options = (f'StartSel="{HIT_START}", StopSel="{HIT_END}", MaxWords={SNIPPET_WORDS}, '
                   f'MinWords={SNIPPET_WORDS // 3}')
        params.update(sids=[r[1] for r in rows], positions=[r[2] for r in rows],
                      roles=[r[3] for r in rows], options=options, punctuation=PUNCTUATION,
                      spaces=" " * len(PUNCTUATION))
        found = [(sid, pos, role, _restore(body, headline)) for sid, pos, role, body, headline
                 in conn.execute(text(
                     f"SELECT s.session_id, s.position, s.role, s.body, ts_headline('simple', "
                     f"{_SPACED}, {tsquery}, CAST(:options AS TEXT)) FROM {MESSAGE_SEARCH} AS s "
                     "JOIN unnest(CAST(:sids AS VARCHAR[]), CAST(:positions AS INTEGER[]), "
                     "CAST(:roles AS VARCHAR[])) AS k(session_id, position, role) "
                     "ON s.session_id = k.session_id AND s.position = k.position "
                     "AND s.role = k.role").bindparams(**params))]
    else:
        ids = [int(r[0]) for r in rows]
        params.update(match=fts5_match(parsed), start=HIT_START, end=HIT_END)
        marks = ", ".join(f":id_{i}" for i in range(len(ids)))
        params.update({f"id_{i}": value for i, value in enumerate(ids)})
        found = [tuple(row) for row in conn.execute(text(
            f"SELECT s.session_id, s.position, s.role, snippet({MESSAGE_FTS}, 0, :start, :end, "
            f"'…', {SNIPPET_WORDS}) FROM {MESSAGE_FTS} JOIN {MESSAGE_SEARCH} AS s "
            f"ON s.id = {MESSAGE_FTS}.rowid WHERE {MESSAGE_FTS} MATCH :match "
            f"AND {MESSAGE_FTS}.rowid IN ({marks})").bindparams(**params))]
    return {(str(sid), int(pos), str(role)): str(snippet or "")
            for sid, pos, role, snippet in found}


class MessageSearchMixin(StoreBase):
    """``search_messages`` and ``messages_behind`` on ``TranscriptStore``."""

    if TYPE_CHECKING:
        def update_search_index(self, *, progress: Any = None) -> IndexUpdate: ...

    def search_messages(self, query: str, *, agent: str | None = None,
                        project: str | None = None, since: datetime | None = None,
                        until: datetime | None = None, role: str | None = None,
                        session_id: str | None = None, limit: int = 20, offset: int = 0
                        ) -> list[MessageHit]:
        """Full-text search over every message's text: prompts, answers, reasoning, tool
        arguments and results. ``query`` takes words (all must match), ``"a phrase"``, a
        ``prefix*`` and ``-word`` (``store.core.textquery``; anything else is a
        :class:`~store.core.errors.SearchQueryError`). Filters: the session's ``agent``,
        its working folder ``project`` (that folder or below it), the message's time
        (``since`` inclusive, ``until`` exclusive), ``role`` (``user``, ``assistant``,
        ``system``, ``developer``, ``tool``, ``thinking``), one ``session_id``. One hit per
        message, best first (ties: newer first), ``limit`` (at most 1000) from ``offset``.

        A writable store first brings the index up to date (so a message appended before
        the call is found); a read-only store searches what is indexed (see
        :meth:`messages_behind`). Snippets are of the redacted text the index holds."""
        check_search(query, role, limit, offset)
        if not self.read_only:
            self.update_search_index()
        try:
            with self._read() as conn:
                return search_messages(conn, query, agent=agent, project=project, since=since,
                                       until=until, role=role, session_id=session_id,
                                       limit=limit, offset=offset)
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    def messages_behind(self, session_id: str | None = None) -> int:
        """How many sessions hold messages the message index has not caught up with yet (0
        after ``update_search_index``; a read-only store's searches miss those messages)."""
        with self._read() as conn:
            if not has_message_index(conn):
                return 0
            return messages_behind(conn, session_id)
