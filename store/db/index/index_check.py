"""The derived rows checked against the transcript they are derived from (persistence; reads
only).

The chain (``store/db/proofs/chains.py``) covers the transcript: messages, calls, results. What the
search catch-up (``store/db/index/search_index.py``) derives from it is not chained: the search
text (``search_body`` of each call and result; on SQLite its FTS5 table ``search_fts``), the
argument views (``call_views``) and the keyed digests of secrets (``call_secrets``). An edit
of those rows would hide a call from ``calls search`` and from the ``rules check`` prefilter
while ``verify`` stayed clean. :func:`check_derived` recomputes, for every call and result below
its session's watermark, exactly the rows the catch-up writes (the same functions: decoded
text, redaction, fold, views, digests) and compares them with the stored ones:

* ``index_missing`` / ``index_extra`` / ``index_altered``: a call or result below the
  watermark without its search text, one at or after it with a text (the catch-up has not
  written it), a text that differs from the one its transcript gives;
* ``view_missing`` / ``view_extra`` / ``view_altered``: the same for ``call_views``;
* ``secret_missing`` / ``secret_extra`` / ``secret_altered``: the same for ``call_secrets``;
* ``fts``: SQLite: an entry of ``search_fts`` that differs from the text of its row (the
  index is compared with one built afresh from the texts, in a temporary table; the terms
  whose counts differ are then looked up per document);
* ``index_watermark``: a watermark (``sessions.indexed_position``) past ``next_position``.

The work is batched: a chunk of sessions per statement of each table, the text of equal
arguments computed once (a cache), never one query per row. :func:`suspect_sessions` is the
part the ``rules check`` prefilter and the searches rely on (the call texts, the views, the
FTS entries): the sessions it names are scanned exactly, their derived rows unused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.core.logs import logger
from store.db.index.search_index import (
    CALL_VIEWS,
    KIND_CALL,
    KIND_RESULT,
    SEARCH_FTS,
    SEARCH_ITEMS,
    has_search_index,
    nul_safe,
    view_texts,
)
from store.db.index.search_schema import MIN_TEXT, fts_trigrams, unindexed_sql
from store.db.index.secrets import SecretRow, secret_rows, store_key
from store.db.schema.wiretext import wire_sql
from store.records.searchtext import call_search_text, fold, result_search_text
from store.trust.secrets import index_text

if TYPE_CHECKING:
    from sqlalchemy import Connection

__all__ = ["DERIVED_CHECKS", "IndexIssue", "check_derived", "index_gaps", "suspect_sessions"]

_log = logger(__name__)

#: The issue kinds (``VerifyProblem.check``) of :func:`check_derived`.
DERIVED_CHECKS = ("index_missing", "index_extra", "index_altered", "view_missing",
                  "view_extra", "view_altered", "secret_missing", "secret_extra",
                  "secret_altered", "fts", "index_watermark")
#: Sessions per statement.
_CHUNK = 100
#: Issues listed per session and kind; the rest are counted in one more issue.
_LISTED = 20
#: Distinct texts remembered (equal arguments are redacted once).
_CACHE = 50_000
_KINDS = {KIND_CALL: "call", KIND_RESULT: "result"}
#: What makes the rules prefilter select a call by its command or path view
#: (``store.audit.candidates``), and the length a view is cut at.
_VIEW_MARKS = ("'", '"', "\\", "/.", "//")
_VIEW_CUT = 2000


@dataclass(frozen=True, slots=True)
class IndexIssue:
    """One derived row that is not what the transcript gives (``check``: a
    :data:`DERIVED_CHECKS` kind); ``index`` is the call, result or item index."""

    check: str
    session_id: str | None
    position: int | None
    index: int | None
    detail: str


@dataclass(slots=True)
class _Scope:
    """What to compare: results and secrets (``verify``) or only what searches use."""

    results: bool = True
    secrets: bool = True
    views: tuple[str, ...] | None = None  # None: every view
    #: Only the views the prefilter can select (``store.audit.candidates``: a quote, a
    #: backslash, ``/.`` or ``//``, or cut): a call whose views, before redaction, hold none
    #: of these is not compared (redaction only puts markers without them in place of text,
    #: so its true views are not selected, and a stored row can only add it as a candidate).
    marked_only: bool = False


class _Texts:
    """The folded, redacted text of a searchable text and its secrets, once per text."""

    def __init__(self, pg: bool) -> None:
        self._pg = pg
        self._known: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        self._views: dict[str, str] = {}

    def __call__(self, build: Callable[[str], str], stored: str) -> tuple[str, list[
            tuple[str, str]]]:
        try:
            text = build(stored)
        except (ValueError, RecursionError, MemoryError):
            text = ""  # (the catch-up indexes it with no text; verify's "index" says why)
        known = self._known.get(text)
        if known is None:
            body, secrets = index_text(text)
            body = fold(body)
            known = (nul_safe(body) if self._pg else body, secrets)
            if len(self._known) >= _CACHE:
                self._known.clear()
            self._known[text] = known
        return known

    def view(self, value: str) -> str:
        """A view's redacted text (not folded, no NUL replaced: the views keep the case)."""
        known = self._views.get(value)
        if known is None:
            known = index_text(value)[0]
            if len(self._views) >= _CACHE:
                self._views.clear()
            self._views[value] = known
        return known


def check_derived(conn: Connection, session_id: str | None = None) -> list[IndexIssue]:
    """Every derived row (search items, argument views, secret digests, SQLite FTS entries)
    of the store (or of one session) that is not what the catch-up writes from the
    transcript; reads only."""
    return _check(conn, _sessions(conn, session_id), _Scope(), fts=True)


def suspect_sessions(conn: Connection, session_ids: Iterable[str] | None = None
                     ) -> dict[str, str]:
    """The sessions (all, or these) whose derived rows a search or the rules prefilter
    uses cannot be vouched for (session -> the first issue): its call items, the command and
    path views, the FTS entries of its items (SQLite). Their calls are to be scanned
    exactly."""
    sessions = _sessions(conn, None)
    if session_ids is not None:
        wanted = set(session_ids)
        sessions = [s for s in sessions if s[0] in wanted]
    issues = _check(conn, sessions, _Scope(results=False, secrets=False,
                                           views=("command", "path"), marked_only=True),
                    fts=True)
    out: dict[str, str] = {}
    everywhere = [i for i in issues if i.session_id is None]
    for issue in issues:
        if issue.session_id is not None:
            out.setdefault(issue.session_id, f"[{issue.check}] {issue.detail}")
    if everywhere:  # an FTS entry no item accounts for: no session to blame, none trusted
        for sid, _, _ in sessions:
            out.setdefault(sid, f"[{everywhere[0].check}] {everywhere[0].detail}")
    return out


#: Structural checks (SQL only, ``{scope}`` for the session, ``{unindexed}`` the backend's
#: test of a row not caught up): the calls and results below the watermark without their
#: text (revision 0023: the text is a column of the row, so a row cannot lose it to an edit
#: of another table; on SQLite a row without its full-text id counts too;
#: ``ix_tool_calls_unindexed`` / ``ix_tool_results_unindexed`` hold only those rows, so each
#: is one probe of a nearly empty index) and a watermark past the stored messages.
_UNINDEXED = tuple(
    (f"a {what} below the watermark has no search text",
     f"SELECT DISTINCT t.session_id FROM {table} AS t JOIN sessions AS s "
     "ON s.session_id = t.session_id WHERE ({unindexed}) "
     "AND t.position < s.indexed_position{scope}")
    for what, table in (("call", "tool_calls"), ("result", "tool_results")))
_WATERMARK = ("the watermark is past the stored messages",
              "SELECT t.session_id FROM sessions AS t "
              "WHERE t.indexed_position > t.next_position{scope}")


def index_gaps(conn: Connection, session_id: str | None = None) -> dict[str, str]:
    """The sessions (all, or one) whose derived text does not line up with the transcript
    (session -> what): a call or result below the watermark without its search text (on
    SQLite: or without its full-text id), a watermark past ``next_position``. SQL only, a
    few probes, cheap enough for every search; what it cannot see (a text, an argument view
    or an FTS entry edited or removed) ``verify`` recomputes (:func:`check_derived`). An
    argument view no call accounts for only makes a search list a call it does not hold the
    text of, as an edited view does: ``verify`` reports both. Every search checks all of
    them, whatever it reads: a session whose text does not line up is not vouched for in any
    of its rows."""
    pg = conn.dialect.name == "postgresql"
    mark = "%s" if pg else "?"
    out: dict[str, str] = {}

    unindexed = unindexed_sql(pg, "t.")  # (the partial indexes' own predicate)

    def run(sql: str) -> list[Any]:
        params: tuple[str, ...] = ()
        if session_id is None:
            statement = sql.format(scope="", unindexed=unindexed)
        else:  # every table filtered by the session (on Citus: one shard, not all)
            statement = _CORRELATED.sub(
                lambda m: f"{m.group(0)} AND {m.group(1)}.session_id = {mark}",
                sql.format(scope=f" AND t.session_id = {mark}", unindexed=unindexed))
            params = (session_id,) * statement.count(mark)
        return list(conn.exec_driver_sql(statement, params).all())

    for what, sql in (*_UNINDEXED, _WATERMARK):
        for (sid,) in run(sql):
            out.setdefault(str(sid), what)
    return out


#: A table correlated with the checked rows (``t``) by the session: filtered by it too.
_CORRELATED = re.compile(r"\b([a-z])\.session_id = t\.session_id")


def _sessions(conn: Connection, session_id: str | None) -> list[tuple[str, int, int]]:
    pg = conn.dialect.name == "postgresql"
    sql = "SELECT session_id, indexed_position, next_position FROM sessions"
    params: tuple[Any, ...] = ()
    if session_id is not None:
        sql += " WHERE session_id = " + ("%s" if pg else "?")
        params = (session_id,)
    return [(str(s), int(i), int(n)) for s, i, n in
            conn.exec_driver_sql(sql + " ORDER BY session_id", params).all()]


def _check(conn: Connection, sessions: Sequence[tuple[str, int, int]], scope: _Scope, *,
           fts: bool) -> list[IndexIssue]:
    pg = conn.dialect.name == "postgresql"
    indexed = has_search_index(conn)
    issues = _Issues()
    for sid, watermark, following in sessions:
        if watermark > following:
            issues.add("index_watermark", sid, None, None,
                       f"indexed_position {watermark} is past next_position {following}: the "
                       "index claims messages that are not stored")
    texts = _Texts(pg)
    key = store_key(conn) if scope.secrets else b""
    cursor = conn.connection.cursor()
    try:
        for at in range(0, len(sessions), _CHUNK):
            chunk = [sid for sid, _, _ in sessions[at:at + _CHUNK]]
            _compare_chunk(cursor, pg, chunk, scope, texts, key, issues)
    finally:
        cursor.close()
    if fts and indexed and not pg:
        for issue in _fts_issues(conn, [sid for sid, _, _ in sessions]):
            issues.add(*issue)
    return issues.done()


class _Issues:
    """Issues, at most :data:`_LISTED` per session and kind (the rest counted)."""

    def __init__(self) -> None:
        self.items: list[IndexIssue] = []
        self.counts: dict[tuple[str | None, str], int] = {}

    def add(self, check: str, sid: str | None, position: int | None, index: int | None,
            detail: str) -> None:
        count = self.counts[(sid, check)] = self.counts.get((sid, check), 0) + 1
        if count <= _LISTED:
            self.items.append(IndexIssue(check, sid, position, index, detail))

    def done(self) -> list[IndexIssue]:
        for (sid, check), count in sorted(self.counts.items(), key=lambda kv: (
                kv[0][0] or "", kv[0][1])):
            if count > _LISTED:
                self.items.append(IndexIssue(check, sid, None, None,
                                             f"{count - _LISTED} more rows like the above"))
        return self.items


def _in(pg: bool, values: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
    if pg:
        return "= ANY(%s)", (list(values),)
    return f"IN ({', '.join('?' * len(values))})", tuple(values)


def _compare_chunk(cursor: Any, pg: bool, chunk: Sequence[str], scope: _Scope,
                   texts: _Texts, key: bytes, issues: _Issues) -> None:
    test, params = _in(pg, chunk)
    joined = ("JOIN sessions AS s ON s.session_id = t.session_id "
              f"WHERE t.session_id {test} AND ")
    below = joined + "t.position < s.indexed_position"
    cursor.execute("SELECT t.session_id, t.position, t.call_index, t.raw_name, t.arguments, "
                   f"{wire_sql(pg, 't')}, t.search_body, t.search_id FROM tool_calls AS t "
                   f"{below}",
                   params)
    want_views: dict[tuple[str, int, int, str], str] = {}
    want_secrets: dict[tuple[Any, ...], set[SecretRow]] = {}
    unchecked: set[tuple[str, int, int]] = set()
    for sid, pos, idx, raw_name, arguments, wire, stored, entry in cursor.fetchall():
        body, secrets = texts(call_search_text, wire)
        _diff_text(issues, "call", sid, pos, idx, body, stored, pg or entry is not None)
        for row in secret_rows(key, sid, pos, KIND_CALL, idx, pos, idx, secrets):
            want_secrets.setdefault(row[:5], set()).add(row)
        if scope.marked_only and not any(
                view in (scope.views or ()) and _selectable(value)
                for view, value in view_texts(raw_name, arguments, _as_is)):
            unchecked.add((sid, pos, idx))
            continue
        for view, value in view_texts(raw_name, arguments, texts.view):
            if scope.views is None or view in scope.views:
                want_views[(sid, pos, idx, view)] = value
    if scope.results or scope.secrets:
        cursor.execute("SELECT t.session_id, t.position, t.result_index, t.call_position, "
                       f"t.call_index, t.content_json, t.search_body, t.search_id "
                       f"FROM tool_results AS t {below}", params)
        for sid, pos, idx, cpos, cidx, content, stored, entry in cursor.fetchall():
            body, secrets = texts(result_search_text, content)
            if scope.results:
                _diff_text(issues, "result", sid, pos, idx, body, stored,
                           pg or entry is not None)
            for row in secret_rows(key, sid, pos, KIND_RESULT, idx, cpos, cidx, secrets):
                want_secrets.setdefault(row[:5], set()).add(row)
    tables = (("call", "tool_calls", "call_index"),) + (
        (("result", "tool_results", "result_index"),) if scope.results else ())
    for what, table, index in tables:  # text the catch-up has not written (yet)
        cursor.execute(f"SELECT t.session_id, t.position, t.{index} FROM {table} AS t "
                       f"{joined}t.position >= s.indexed_position "
                       "AND (t.search_body IS NOT NULL OR t.search_id IS NOT NULL)", params)
        for sid, pos, idx in cursor.fetchall():
            issues.add("index_extra", str(sid), int(pos), int(idx),
                       f"{what} {idx} has a search text but is not below the watermark")
    views = ""
    if scope.views is not None:
        views = " AND view IN (" + ", ".join(f"'{v}'" for v in scope.views) + ")"
    cursor.execute(f"SELECT session_id, position, call_index, view, text FROM {CALL_VIEWS} "
                   f"WHERE session_id {test}{views}", params)
    _diff_views(want_views, [row for row in cursor.fetchall()
                             if (row[0], row[1], row[2]) not in unchecked], issues)
    if scope.secrets:
        cursor.execute("SELECT session_id, position, item, item_index, digest, kind, "
                       f"call_position, call_index FROM call_secrets WHERE session_id {test}",
                       params)
        _diff_secrets(want_secrets, cursor.fetchall(), issues)


def _as_is(value: str) -> str:
    return value


def _selectable(value: str) -> bool:
    """Whether the prefilter may select a view of this text before redaction."""
    return len(value) >= _VIEW_CUT or any(mark in value for mark in _VIEW_MARKS)


def _diff_text(issues: _Issues, what: str, sid: Any, pos: Any, idx: Any, body: str,
               stored: Any, entered: bool) -> None:
    """A call's or result's stored search text against the one its transcript gives;
    ``entered``: it has its full-text id (SQLite; always on PostgreSQL)."""
    if stored is None or not entered:
        issues.add("index_missing", str(sid), int(pos), int(idx),
                   f"{what} {idx} is below the watermark but has no search text"
                   + ("" if stored is None else " in the full-text index"))
    elif stored != body:
        issues.add("index_altered", str(sid), int(pos), int(idx),
                   f"the search text of {what} {idx} differs from the text of the transcript")


def _diff_views(want: dict[tuple[str, int, int, str], str], rows: Iterable[Any],
                issues: _Issues) -> None:
    for sid, pos, idx, view, value in rows:
        key = (str(sid), int(pos), int(idx), str(view))
        expected = want.pop(key, None)
        if expected is None:
            issues.add("view_extra", key[0], key[1], key[2],
                       f"a {view!r} view that the call's arguments do not give")
        elif value != expected:
            issues.add("view_altered", key[0], key[1], key[2],
                       f"the {view!r} view differs from the call's arguments")
    for sid, pos, idx, view in sorted(want):
        issues.add("view_missing", sid, pos, idx,
                   f"the call's {view!r} view is missing (below the watermark)")


def _diff_secrets(want: dict[tuple[Any, ...], set[SecretRow]], rows: Iterable[Any],
                  issues: _Issues) -> None:
    """(A value found twice in one item, as two kinds, is stored once, as either.)"""
    for row in rows:
        sid, pos, item, idx, digest, kind, cpos, cidx = row
        key = (str(sid), int(pos), int(item), int(idx), str(digest))
        what = _KINDS.get(key[2], f"item {item}")
        expected = want.pop(key, None)
        if expected is None:
            issues.add("secret_extra", key[0], key[1], key[3],
                       f"a {kind!r} secret digest of {what} {idx} that its text does not hold")
        elif (kind, cpos, cidx) not in {row[5:] for row in expected}:
            issues.add("secret_altered", key[0], key[1], key[3],
                       f"the secret digest of {what} {idx} has a different kind or call")
    for key in sorted(want):
        sid, pos, item, idx = key[:4]
        issues.add("secret_missing", sid, pos, idx,
                   f"a {min(want[key])[5]!r} secret of {_KINDS[item]} {idx} has no digest")


def _fts_issues(conn: Connection, sids: Sequence[str]
                ) -> Iterator[tuple[str, str | None, int | None, int | None, str]]:
    """SQLite: the entries of ``search_fts`` that differ from the rows' text (the view
    ``search_items``: each call's and result's ``search_body`` with its entry id). A
    temporary FTS5 table (the same tokenizer) is built from the texts; the two are compared
    term by term (document counts: ``fts5vocab`` ``row``), then, for the terms that differ,
    document by document (``instance``, looked up by term). Counts cannot show a session
    whose entries moved as a whole (its number changed: the same entries under other ids), so
    each session's first call with a text is also looked up under the id it must have
    (:func:`_misplaced`). Temporary tables only: this works on a read-only connection and
    changes nothing in the database."""
    yield from _misplaced(conn, sids)
    scoped = len(sids) < _count(conn, "SELECT count(*) FROM sessions")
    scope: set[int] = set()
    statements = [
        "CREATE VIRTUAL TABLE temp.ts_fts_check USING fts5(body, content='', columnsize=0, "
        f"{_fts_detail(conn)}tokenize='trigram')",  # (contentless: the index, no texts)
        f"CREATE VIRTUAL TABLE temp.ts_fts_main_row USING fts5vocab(main, {SEARCH_FTS}, row)",
        "CREATE VIRTUAL TABLE temp.ts_fts_check_row USING fts5vocab(temp, ts_fts_check, row)",
        f"CREATE VIRTUAL TABLE temp.ts_fts_main_inst USING fts5vocab(main, {SEARCH_FTS}, "
        "instance)",
        "CREATE VIRTUAL TABLE temp.ts_fts_check_inst USING fts5vocab(temp, ts_fts_check, "
        "instance)",
    ]
    cursor = conn.connection.cursor()
    try:
        _drop_fts_check(cursor)
        for statement in statements:
            cursor.execute(statement)
        cursor.execute("CREATE TEMP TABLE ts_fts_scope (id INTEGER PRIMARY KEY)")
        if scoped:
            for at in range(0, len(sids), 500):
                part = sids[at:at + 500]
                cursor.execute("INSERT INTO temp.ts_fts_scope SELECT id FROM "
                               f"{SEARCH_ITEMS} WHERE session_id IN "
                               f"({', '.join('?' * len(part))})", tuple(part))
            source = "WHERE id IN (SELECT id FROM temp.ts_fts_scope)"
        else:
            source = ""
        cursor.execute("INSERT INTO temp.ts_fts_check (rowid, body) SELECT id, body FROM "
                       f"{SEARCH_ITEMS} {source}")
        if scoped:  # the store's counts hold other sessions: every term of the scope
            cursor.execute("SELECT id FROM temp.ts_fts_scope")
            scope = {int(i) for (i,) in cursor.fetchall()}
            cursor.execute("SELECT term FROM temp.ts_fts_check_row")
        else:  # the terms whose counts differ
            cursor.execute("SELECT term FROM (SELECT term, doc, cnt FROM temp.ts_fts_main_row "
                           "EXCEPT SELECT term, doc, cnt FROM temp.ts_fts_check_row) UNION "
                           "SELECT term FROM (SELECT term, doc, cnt FROM "
                           "temp.ts_fts_check_row EXCEPT SELECT term, doc, cnt FROM "
                           "temp.ts_fts_main_row)")
        terms = [str(t) for (t,) in cursor.fetchall()]
        docs: set[int] = set()
        for term in terms:  # (a term constraint is pushed into fts5vocab)
            cursor.execute("SELECT doc, offset FROM temp.ts_fts_main_inst WHERE term = ?",
                           (term,))
            main = set(cursor.fetchall())
            if scoped:
                main = {(doc, at) for doc, at in main if doc in scope}
            cursor.execute("SELECT doc, offset FROM temp.ts_fts_check_inst WHERE term = ?",
                           (term,))
            docs.update(int(doc) for doc, _ in main ^ set(cursor.fetchall()))
        where: dict[int, tuple[str, int, int, int]] = {}
        ordered = sorted(docs)
        for at in range(0, len(ordered), 500):  # (an entry's id is its row's search_id)
            chunk = ordered[at:at + 500]
            marks = ", ".join("?" * len(chunk))
            cursor.execute(f"SELECT search_id, session_id, position, 0, call_index FROM "
                           f"tool_calls WHERE search_id IN ({marks}) UNION ALL SELECT "
                           "search_id, session_id, position, 1, result_index FROM "
                           f"tool_results WHERE search_id IN ({marks})", (*chunk, *chunk))
            for doc, sid, pos, kind, idx in cursor.fetchall():
                where[int(doc)] = (str(sid), int(pos), int(kind), int(idx))
    finally:
        _drop_fts_check(cursor)
        cursor.close()
    for doc in ordered:
        found = where.get(doc)
        if found is None:
            yield ("fts", None, None, None,
                   f"the full-text index holds document {doc}, which no call or result has")
        else:
            sid, pos, kind, idx = found
            yield ("fts", sid, pos, idx,
                   f"the full-text entry of {_KINDS.get(kind, 'item')} {idx} differs from "
                   "its indexed text")


def _misplaced(conn: Connection, sids: Sequence[str]
               ) -> Iterator[tuple[str, str | None, int | None, int | None, str]]:
    """SQLite: the sessions whose first call with a text (three characters or more) has no
    entry under its ``search_id`` holding that text's trigrams: the ids no longer name the
    entries (moved as a whole, which term counts cannot show). One indexed lookup per
    session; a single row's id exchanged with another's is left to ``db index --rebuild``
    (its entry's terms are all still counted)."""
    wanted = set(sids)
    cursor = conn.connection.cursor()
    try:
        cursor.execute(  # (each session's first such call: one statement for all)
            "SELECT s.session_id, c.search_id, c.position, c.call_index, c.search_body "
            "FROM sessions AS s JOIN tool_calls AS c ON c.rowid = (SELECT t.rowid FROM "
            "tool_calls AS t WHERE t.session_id = s.session_id AND t.search_id IS NOT NULL "
            f"AND length(t.search_body) >= {MIN_TEXT} LIMIT 1) ORDER BY s.session_id")
        for sid, entry, position, index, body in cursor.fetchall():
            if sid not in wanted:
                continue
            cursor.execute(f"SELECT count(*) FROM {SEARCH_FTS} WHERE {SEARCH_FTS} MATCH ? "
                           "AND rowid = ?", (fts_trigrams(body), entry))
            hit = cursor.fetchone()
            if hit is None or not hit[0]:
                yield ("fts", str(sid), int(position), int(index),
                       f"the full-text entry of call {index} is not under its id {entry}")
    finally:
        cursor.close()


def _fts_detail(conn: Connection) -> str:
    """The ``detail`` option of ``search_fts`` as declared (``detail=none, `` since revision
    0021; the positional default before), for a check table that indexes the same way."""
    sql = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = ?",
                               (SEARCH_FTS,)).scalar()
    return "detail=none, " if sql is not None and "detail=none" in str(sql) else ""


def _drop_fts_check(cursor: Any) -> None:
    for name in ("ts_fts_main_row", "ts_fts_check_row", "ts_fts_main_inst",
                 "ts_fts_check_inst", "ts_fts_check", "ts_fts_scope"):
        cursor.execute(f"DROP TABLE IF EXISTS temp.{name}")


def _count(conn: Connection, sql: str) -> int:
    return int(conn.exec_driver_sql(sql).scalar_one())
