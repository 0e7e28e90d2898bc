"""Message search's SQL, on any connection (persistence; no SQLAlchemy): the store's
(``store.db.index.message_search``) and the command line's stdlib reader
(``store.cli.search``: an SQLite file on ``sqlite3``, PostgreSQL on psycopg alone) run the
same statements through ``exec_driver_sql``.

:func:`search_messages` reads a query (``store.core.textquery``: words ANDed, "phrases",
prefix*, -word), matches it with the backend's own full-text engine over
``message_search`` (``store/db/index/message_index.py``) and returns one
:class:`~store.core.textquery.MessageHit` per message, its best-ranked part:

* SQLite: ``message_fts MATCH`` (every term a quoted FTS5 string, in the ``body`` column;
  a role, the ``role`` column's word: the index alone answers, revision 0029), ranked by
  ``bm25()`` of ``body`` (negated: higher is better), the snippet by ``snippet()``.
* PostgreSQL: ``tsv @@`` a tsquery built from ``phraseto_tsquery('simple', term)`` (a prefix:
  ``to_tsquery('simple', 'stem:*')``) with ``&&`` and ``&& !!``, ranked by ``ts_rank(tsv,
  query, 1)`` (length-normalised), the snippet by ``ts_headline``.

Filters: a role (``store.core.textquery.SEARCH_ROLES``) and a session inside the match; the
session's agent, working folder (the folder or below it) and the message's time around it.
Ties in rank go to the newer message. Only the rows that can reach the page are ranked per
message and joined to their message (see :func:`search_sql`); snippets are made for the page
only.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import partial
from typing import Any

from store.core.errors import UsageError
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
from store.db.reading.pgread import pg_named
from store.db.schema.sqlitefile import cwd_pattern, stored_time

__all__ = ["LAGGING", "MAX_LIMIT", "MESSAGE_FTS", "MESSAGE_SEARCH", "SNIPPET_WORDS",
           "check_search", "index_present", "messages_behind", "search_messages", "search_sql"]

MESSAGE_SEARCH = "message_search"
MESSAGE_FTS = "message_fts"
#: The sessions whose messages the index has not caught up with.
LAGGING = ("SELECT session_id, message_indexed_position, next_position FROM sessions "
           "WHERE next_position > message_indexed_position")
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
#: SQLite: ``message_fts``'s columns (revision 0029: the row's role beside its text).
_BODY, _ROLE = "body", "role"
#: SQLite: a row's score, higher is better: bm25 of its text alone (the role weighs nothing).
_RANK = f"-bm25({MESSAGE_FTS}, 1.0, 0.0)"
#: Below any score (the cut when fewer rows match than it counts).
_FLOOR = -1e308
#: SQLite keeps this many times the rows a page can need (``search_sql``'s ``wide``): room for
#: rows tied at the cut before every row is ranked instead.
_WIDE = 2


def _pg(conn: Any) -> bool:
    return bool(conn.dialect.name == "postgresql")


def _run(conn: Any, sql: str, params: dict[str, Any]) -> Any:
    """``sql`` with ``:name`` parameters on ``conn`` (psycopg spells them ``%(name)s``)."""
    return conn.exec_driver_sql(pg_named(sql) if _pg(conn) else sql, params)


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


def _fts_match(parsed: TextQuery, role: str | None) -> str:
    """SQLite: the ``MATCH`` of ``parsed`` in the rows' text (``body``: a query's word never
    matches a row's role), and ``role`` as one more term (revision 0029)."""
    found = f"{_BODY} : ({fts5_match(parsed)})"
    if role is None:
        return found
    quoted = role.replace('"', '""')  # (a string, whatever the caller of search_sql gave)
    return f'{found} AND {_ROLE} : "{quoted}"'


def _scored(pg: bool, parsed: TextQuery, role: str | None, session_id: str | None,
            params: dict[str, Any], *, keyed: bool) -> str:
    """The matching index rows with their score: ``key`` (SQLite: the row id; PostgreSQL: the
    role) and ``score``, and unless ``keyed`` (SQLite only, with no session or other
    filter) the row's ``session_id``, ``position`` and ``role``."""
    scope = ""
    if role is not None and pg:
        scope += " AND s.role = :role"
        params["role"] = role
    if session_id is not None:
        scope += " AND s.session_id = :sid"
        params["sid"] = session_id
    if pg:
        return (f"SELECT s.role AS key, s.session_id, s.position, s.role, "
                f"ts_rank(s.tsv, {_pg_tsquery(parsed, params)}, 1) AS score "
                f"FROM {MESSAGE_SEARCH} AS s "
                f"WHERE s.tsv @@ {_pg_tsquery(parsed, params)}{scope}")
    params["match"] = _fts_match(parsed, role)
    if keyed:  # (the index alone: its rows are read for the best ones only)
        return (f"SELECT {MESSAGE_FTS}.rowid AS key, {_RANK} AS score "
                f"FROM {MESSAGE_FTS} WHERE {MESSAGE_FTS} MATCH :match")
    return (f"SELECT s.id AS key, s.session_id, s.position, s.role, {_RANK} AS score "
            f"FROM {MESSAGE_FTS} JOIN {MESSAGE_SEARCH} AS s ON s.id = {MESSAGE_FTS}.rowid "
            f"WHERE {MESSAGE_FTS} MATCH :match{scope}")


def search_sql(pg: bool, parsed: TextQuery, *, role: str | None, session_id: str | None,
               since: datetime | None, until: datetime | None, agent: str | None,
               project: str | None, limit: int, offset: int, wide: int | None = None
               ) -> tuple[str, dict[str, Any]]:
    """The statement of one page of hits (``key``, session, position, role, score, the
    message's time, the session's agent, folder and title), with its ``:name`` parameters.

    Ranking every match of a common word through the per-message window, then joining each
    to its message for the time that breaks ties, cost ~1 s at 10^6 messages. A message has
    at most one row per role, so the ``limit + offset`` best messages are among the rows
    scoring at least the ``(limit + offset) x roles``-th best row's score (the cut): only
    those go on. Every filter is applied before the cut, so it counts the rows that can be
    shown.

    ``wide`` (SQLite): only the ``wide`` best rows are kept to find the cut and the rows
    above it (a sorter that keeps the best ``wide`` instead of a table of every match and
    its sort: a common word at 10^6 messages, 248 -> 190 ms; 374 -> 185 ms beside a
    writer's log), and each row of the page says in a last column, ``complete``, whether
    those were all the rows at or above the cut: fewer than ``wide`` matched, or the last
    kept one scores below the cut. When not (rows tied at the cut past the ``wide`` best),
    the statement without ``wide`` gives the page."""
    params: dict[str, Any] = {}
    filtered = since is not None or until is not None or agent is not None \
        or project is not None
    keyed = not pg and session_id is None and not filtered
    scored = _scored(pg, parsed, role, session_id, params, keyed=keyed)
    if keyed:
        found = f"SELECT f.key, f.score FROM ({scored}) AS f"
    else:
        conditions: list[str] = []
        joined = ""
        for clause, name, value in (("m.created_at >= :since", "since", since),
                                    ("m.created_at < :until", "until", until)):
            if value is not None:
                conditions.append(clause)
                params[name] = as_utc(value) if pg else stored_time(as_utc(value))
                joined = (" JOIN messages AS m ON m.session_id = f.session_id "
                          "AND m.position = f.position")
        if agent is not None or project is not None:
            within: list[str] = []
            if agent is not None:
                within.append("w.agent = :agent")
                params["agent"] = agent
            if project is not None:
                params["folder"], params["below"] = cwd_pattern(project)
                within.append("(w.cwd = :folder OR w.cwd LIKE :below ESCAPE '\\')")
            conditions.append("f.session_id IN (SELECT w.session_id FROM sessions AS w "
                              f"WHERE {' AND '.join(within)})")
        found = (f"SELECT f.key, f.session_id, f.position, f.role, f.score FROM ({scored}) "
                 f"AS f{joined}" + (f" WHERE {' AND '.join(conditions)}" if conditions
                                    else ""))
    params.update(cut=(limit + offset) * len(SEARCH_ROLES) - 1, floor=_FLOOR, limit=limit,
                  offset=offset)
    cut_score = ("coalesce((SELECT c.score FROM r AS c ORDER BY c.score DESC "
                 "LIMIT 1 OFFSET :cut), :floor)")
    best = f"r.score >= {cut_score}"
    complete = ""
    if wide is not None and not pg:
        found += " ORDER BY f.score DESC LIMIT :wide"
        params["wide"] = wide
        complete = (f", (SELECT count(*) < :wide OR min(k.score) < {cut_score} FROM r AS k) "
                    "AS complete")
    if keyed:
        rows = (f"SELECT r.key, s.session_id, s.position, s.role, r.score FROM r "
                f"JOIN {MESSAGE_SEARCH} AS s ON s.id = r.key WHERE {best}")
    else:
        rows = f"SELECT r.key, r.session_id, r.position, r.role, r.score FROM r WHERE {best}"
    return (f"WITH r AS MATERIALIZED ({found}), "
            f"h AS (SELECT b.key, b.session_id, b.position, b.role, b.score, row_number() "
            f"OVER (PARTITION BY b.session_id, b.position ORDER BY b.score DESC, b.role) AS n "
            f"FROM ({rows}) AS b) "
            "SELECT h.key, h.session_id, h.position, h.role, h.score, m.created_at, "
            f"s.agent, s.cwd, s.title{complete} FROM h "
            "JOIN messages AS m ON m.session_id = h.session_id "
            "AND m.position = h.position JOIN sessions AS s ON s.session_id = h.session_id "
            "WHERE h.n = 1 ORDER BY h.score DESC, m.created_at DESC, h.session_id, h.position "
            "LIMIT :limit OFFSET :offset"), params


def index_present(conn: Any) -> bool:
    """Whether this database has the message index (an SQLite library without FTS5 has none,
    revision 0017)."""
    if _pg(conn):
        return True
    found = conn.exec_driver_sql(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)",
        (MESSAGE_SEARCH, MESSAGE_FTS)).scalar_one()
    return bool(found == 2)


def messages_behind(conn: Any, session_id: str | None = None) -> int:
    """How many sessions (of ``session_id`` only, with it) have messages the index has not
    caught up with (``ix_sessions_messages_behind``)."""
    sql = LAGGING.replace("session_id, message_indexed_position, next_position", "count(*)")
    params: tuple[str, ...] = ()
    if session_id is not None:
        sql += " AND session_id = " + ("%s" if _pg(conn) else "?")
        params = (session_id,)
    return int(conn.exec_driver_sql(sql, params).scalar_one())


def search_messages(conn: Any, query: str, *, agent: str | None = None,
                    project: str | None = None, since: datetime | None = None,
                    until: datetime | None = None, role: str | None = None,
                    session_id: str | None = None, limit: int = 20, offset: int = 0,
                    present: bool | None = None) -> list[MessageHit]:
    """The messages matching ``query`` (see the module docstring), best first, paged, on
    ``conn`` (the store's connection or a stdlib driver's); ``present``: whether the index
    is there, when the caller knows."""
    parsed = check_search(query, role, limit, offset)
    if not (index_present(conn) if present is None else present):
        raise UsageError("message search needs SQLite's FTS5, which this SQLite library "
                         "lacks (use PostgreSQL, or a Python built with FTS5)")
    if limit == 0:
        return []
    pg = _pg(conn)
    page = partial(search_sql, pg, parsed, role=role, session_id=session_id, since=since,
                   until=until, agent=agent, project=project, limit=limit, offset=offset)
    rows: list[Any] | None = None
    if not pg:  # the best rows kept by a sorter (search_sql's ``wide``)
        kept = [tuple(row) for row in
                _run(conn, *page(wide=_WIDE * (limit + offset) * len(SEARCH_ROLES))).all()]
        # (an empty page past the first: whether the rows kept were all is not told)
        if all(row[-1] for row in kept) and (kept or not offset):
            rows = [row[:-1] for row in kept]
    if rows is None:  # PostgreSQL; or rows tied at the cut past the ones kept: every row
        rows = list(_run(conn, *page()).all())
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


def _snippets(conn: Any, parsed: TextQuery, rows: list[Any]
              ) -> dict[tuple[str, int, str], str]:
    """The snippet of each hit's matched part, with the hit marks, for this page only."""
    if not rows:
        return {}
    params: dict[str, Any] = {}
    if _pg(conn):
        tsquery = _pg_tsquery(parsed, params)
        options = (f'StartSel="{HIT_START}", StopSel="{HIT_END}", MaxWords={SNIPPET_WORDS}, '
                   f'MinWords={SNIPPET_WORDS // 3}')
        params.update(sids=[r[1] for r in rows], positions=[r[2] for r in rows],
                      roles=[r[3] for r in rows], options=options, punctuation=PUNCTUATION,
                      spaces=" " * len(PUNCTUATION))
        found = [(sid, pos, role, _restore(body, headline)) for sid, pos, role, body, headline
                 in _run(conn,
                     f"SELECT s.session_id, s.position, s.role, s.body, ts_headline('simple', "
                     f"{_SPACED}, {tsquery}, CAST(:options AS TEXT)) FROM {MESSAGE_SEARCH} AS s "
                     "JOIN unnest(CAST(:sids AS VARCHAR[]), CAST(:positions AS INTEGER[]), "
                     "CAST(:roles AS VARCHAR[])) AS k(session_id, position, role) "
                     "ON s.session_id = k.session_id AND s.position = k.position "
                     "AND s.role = k.role", params)]
    else:
        ids = [int(r[0]) for r in rows]
        params.update(match=_fts_match(parsed, None), start=HIT_START, end=HIT_END)
        marks = ", ".join(f":id_{i}" for i in range(len(ids)))
        params.update({f"id_{i}": value for i, value in enumerate(ids)})
        found = [tuple(row) for row in _run(conn,
            f"SELECT s.session_id, s.position, s.role, snippet({MESSAGE_FTS}, 0, :start, :end, "
            f"'…', {SNIPPET_WORDS}) FROM {MESSAGE_FTS} JOIN {MESSAGE_SEARCH} AS s "
            f"ON s.id = {MESSAGE_FTS}.rowid WHERE {MESSAGE_FTS} MATCH :match "
            f"AND {MESSAGE_FTS}.rowid IN ({marks})", params)]
    return {(str(sid), int(pos), str(role)): str(snippet or "")
            for sid, pos, role, snippet in found}
