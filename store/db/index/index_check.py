"""The derived rows checked against the transcript they are derived from (persistence; reads
only).

The chain (``store/db/proofs/chains.py``) covers the transcript: messages, calls, results. What the
search catch-up (``store/db/index/search_index.py``) derives from it is not chained: the search
index (``search_items``; on SQLite its FTS5 table ``search_fts``), the argument views
(``call_views``) and the keyed digests of secrets (``call_secrets``). An edit of those rows
would hide a call from ``calls search`` and from the ``rules check`` prefilter while
``verify`` stayed clean. :func:`check_derived` recomputes, for every call and result below
its session's watermark, exactly the rows the catch-up writes (the same functions: decoded
text, redaction, fold, views, digests) and compares them with the stored ones:

* ``index_missing`` / ``index_extra`` / ``index_altered``: a ``search_items`` row that should
  be there and is not, one that no call or result (below the watermark) accounts for, one
  whose text or call link differs;
* ``view_missing`` / ``view_extra`` / ``view_altered``: the same for ``call_views``;
* ``secret_missing`` / ``secret_extra`` / ``secret_altered``: the same for ``call_secrets``;
* ``fts``: SQLite: an entry of ``search_fts`` that differs from the text of its item (the
  index is compared with one built afresh from ``search_items.body``, in a temporary table;
  the terms whose counts differ are then looked up per document);
* ``index_watermark``: a watermark (``sessions.indexed_position``) past ``next_position``.

The work is batched: a chunk of sessions per statement of each table, the text of equal
arguments computed once (a cache), never one query per row. :func:`suspect_sessions` is the
part the ``rules check`` prefilter and the searches rely on (the call items, the views, the
FTS entries): the sessions it names are scanned exactly, their derived rows unused.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.db.index.search_index import (
    CALL_VIEWS,
    KIND_CALL,
    KIND_RESULT,
    SEARCH_FTS,
    SEARCH_ITEMS,
    has_search_index,
    index_folded,
    nul_safe,
    view_texts,
)
from store.db.index.secrets import SecretRow, secret_rows, store_key
from store.records.searchtext import call_search_text, fold, result_search_text
from store.trust.secrets import index_text

if TYPE_CHECKING:
    from sqlalchemy import Connection

__all__ = ["DERIVED_CHECKS", "IndexIssue", "check_derived", "index_gaps", "suspect_sessions"]

_log = logging.getLogger(__name__)

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


#: Structural checks (keys only, in SQL), ``{scope}`` / ``{where}`` for the session. Per
#: session: the calls (results) below the watermark and how many of them have no item.
_OWN_ITEM = (
    ("a call below the watermark has no search item",
     "SELECT t.session_id, count(*), sum(CASE WHEN NOT EXISTS (SELECT 1 FROM "
     f"{SEARCH_ITEMS} AS i WHERE i.session_id = t.session_id AND i.position = t.position "
     f"AND i.kind = {KIND_CALL} AND i.item_index = t.call_index "
     "AND i.call_position = t.position AND i.call_index = t.call_index) THEN 1 ELSE 0 END) "
     "FROM tool_calls AS t JOIN sessions AS s ON s.session_id = t.session_id "
     "WHERE t.position < s.indexed_position{scope} GROUP BY t.session_id"),
    ("a result below the watermark has no search item",
     "SELECT t.session_id, count(*), sum(CASE WHEN NOT EXISTS (SELECT 1 FROM "
     f"{SEARCH_ITEMS} AS i WHERE i.session_id = t.session_id AND i.position = t.position "
     f"AND i.kind = {KIND_RESULT} AND i.item_index = t.result_index "
     "AND (i.call_position = t.call_position OR i.call_position IS NULL "
     "AND t.call_position IS NULL) AND (i.call_index = t.call_index OR i.call_index IS NULL "
     "AND t.call_index IS NULL)) THEN 1 ELSE 0 END) "
     "FROM tool_results AS t JOIN sessions AS s ON s.session_id = t.session_id "
     "WHERE t.position < s.indexed_position{scope} GROUP BY t.session_id"),
)
#: Per session: its call items, its result items, all its items (the key index only).
_ITEM_COUNTS = (f"SELECT t.session_id, sum(CASE WHEN t.kind = {KIND_CALL} THEN 1 ELSE 0 END), "
                f"sum(CASE WHEN t.kind = {KIND_RESULT} THEN 1 ELSE 0 END), count(*) "
                f"FROM {SEARCH_ITEMS} AS t{{where}} GROUP BY t.session_id")
_EXTRA_ITEM = "a search item that no call or result below the watermark accounts for"
_VIEW_GAP = (
    "an argument view that no call below the watermark accounts for",
    f"SELECT DISTINCT t.session_id FROM {CALL_VIEWS} AS t LEFT JOIN sessions AS s "
    "ON s.session_id = t.session_id WHERE (s.session_id IS NULL "
    "OR t.position >= s.indexed_position OR NOT EXISTS (SELECT 1 FROM tool_calls AS c "
    "WHERE c.session_id = t.session_id AND c.position = t.position "
    "AND c.call_index = t.call_index)){scope}")
_WATERMARK = ("the watermark is past the stored messages",
              "SELECT t.session_id FROM sessions AS t "
              "WHERE t.indexed_position > t.next_position{scope}")


def index_gaps(conn: Connection, session_id: str | None = None) -> dict[str, str]:
    """The sessions (all, or one) whose derived rows do not line up with the transcript by
    their keys (session -> what): a call or result below the watermark without its search
    item, an item or argument view that no stored call or result below the watermark
    accounts for, a watermark past ``next_position``. SQL only, cheap enough for every
    search; what it cannot see (an item's text, a view's text or a view removed, an FTS
    entry) :func:`check_derived` recomputes. Every search checks all of them, whatever it
    reads: a session whose keys were changed is not vouched for in any of its rows.

    The items are checked by count, not by a second anti-join: each call (result) below the
    watermark must find its own item (the anti-joins); then a session holding exactly as
    many call (result) items as it has calls (results) below the watermark holds no other
    item (each call found a distinct one: their keys differ), which a scan of the items'
    key index counts per session."""
    pg = conn.dialect.name == "postgresql"
    mark = "%s" if pg else "?"
    out: dict[str, str] = {}

    def run(sql: str) -> list[Any]:
        params: tuple[str, ...] = ()
        if session_id is None:
            statement = sql.format(scope="", where="")
        else:  # every table filtered by the session (on Citus: one shard, not all)
            statement = _CORRELATED.sub(
                lambda m: f"{m.group(0)} AND {m.group(1)}.session_id = {mark}",
                sql.format(scope=f" AND t.session_id = {mark}",
                           where=f" WHERE t.session_id = {mark}"))
            params = (session_id,) * statement.count(mark)
        return list(conn.exec_driver_sql(statement, params).all())

    if has_search_index(conn):
        expected: dict[str, list[int]] = {}
        for kind, (missing_what, sql) in enumerate(_OWN_ITEM):
            for sid, count, missing in run(sql):
                expected.setdefault(str(sid), [0, 0])[kind] = int(count)
                if missing:
                    out.setdefault(str(sid), missing_what)
        for sid, calls, results, total in run(_ITEM_COUNTS):
            want = expected.get(str(sid), [0, 0])
            if (int(calls), int(results)) != (want[0], want[1]) or int(total) != want[0] + want[1]:
                out.setdefault(str(sid), _EXTRA_ITEM)
    for what, sql in (_VIEW_GAP, _WATERMARK):
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
    if indexed and not index_folded(conn):
        # an index built before the one folding is never used (searches scan every row) and
        # the next catch-up of a writable store builds it again: its items are not compared
        _log.info("the search index holds unfolded text: unused until it is built again")
        indexed = False
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
            _compare_chunk(cursor, pg, chunk, indexed, scope, texts, key, issues)
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


def _compare_chunk(cursor: Any, pg: bool, chunk: Sequence[str], indexed: bool, scope: _Scope,
                   texts: _Texts, key: bytes, issues: _Issues) -> None:
    test, params = _in(pg, chunk)
    below = ("JOIN sessions AS s ON s.session_id = t.session_id "
             f"WHERE t.session_id {test} AND t.position < s.indexed_position")
    cursor.execute("SELECT t.session_id, t.position, t.call_index, t.raw_name, t.arguments, "
                   f"t.wire_json FROM tool_calls AS t {below}", params)
    want_items: dict[tuple[str, int, int, int], tuple[Any, Any, str]] = {}
    want_views: dict[tuple[str, int, int, str], str] = {}
    want_secrets: dict[tuple[Any, ...], set[SecretRow]] = {}
    unchecked: set[tuple[str, int, int]] = set()
    for sid, pos, idx, raw_name, arguments, wire in cursor.fetchall():
        body, secrets = texts(call_search_text, wire)
        if indexed:
            want_items[(sid, pos, KIND_CALL, idx)] = (pos, idx, body)
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
    if indexed and (scope.results or scope.secrets):  # (the catch-up reads results then)
        cursor.execute("SELECT t.session_id, t.position, t.result_index, t.call_position, "
                       f"t.call_index, t.content_json FROM tool_results AS t {below}", params)
        for sid, pos, idx, cpos, cidx, content in cursor.fetchall():
            body, secrets = texts(result_search_text, content)
            if scope.results:
                want_items[(sid, pos, KIND_RESULT, idx)] = (cpos, cidx, body)
            for row in secret_rows(key, sid, pos, KIND_RESULT, idx, cpos, cidx, secrets):
                want_secrets.setdefault(row[:5], set()).add(row)
    if indexed:
        kinds = "" if scope.results else f" AND kind = {KIND_CALL}"
        cursor.execute("SELECT session_id, position, kind, item_index, call_position, "
                       f"call_index, body FROM {SEARCH_ITEMS} WHERE session_id {test}{kinds}",
                       params)
        _diff_items(want_items, cursor.fetchall(), issues)
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


def _diff_items(want: dict[tuple[str, int, int, int], tuple[Any, Any, str]],
                rows: Iterable[Any], issues: _Issues) -> None:
    for sid, pos, kind, idx, cpos, cidx, body in rows:
        item = (str(sid), int(pos), int(kind), int(idx))
        what = _KINDS.get(item[2], f"kind {kind}")
        expected = want.pop(item, None)
        if expected is None:
            issues.add("index_extra", item[0], item[1], item[3],
                       f"a search item of {what} {idx} that no stored {what} below the "
                       "watermark accounts for")
        elif (cpos, cidx) != expected[:2]:
            issues.add("index_altered", item[0], item[1], item[3],
                       f"the search item of {what} {idx} links call {(cpos, cidx)}, the "
                       f"transcript {expected[:2]}")
        elif body != expected[2]:
            issues.add("index_altered", item[0], item[1], item[3],
                       f"the indexed text of {what} {idx} differs from the text of the "
                       "transcript")
    for (sid, pos, kind, idx) in sorted(want):
        what = _KINDS[kind]
        issues.add("index_missing", sid, pos, idx,
                   f"{what} {idx} is below the watermark but has no search item")


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
    """SQLite: the entries of ``search_fts`` that differ from ``search_items.body``. A
    temporary FTS5 table (the same tokenizer) is built from the bodies; the two are compared
    term by term (document counts: ``fts5vocab`` ``row``), then, for the terms that differ,
    document by document (``instance``, looked up by term). Temporary tables only: this
    works on a read-only connection and changes nothing in the database."""
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
        for at in range(0, len(ordered), 500):
            chunk = ordered[at:at + 500]
            cursor.execute("SELECT id, session_id, position, kind, item_index FROM "
                           f"{SEARCH_ITEMS} WHERE id IN ({', '.join('?' * len(chunk))})",
                           tuple(chunk))
            for doc, sid, pos, kind, idx in cursor.fetchall():
                where[int(doc)] = (str(sid), int(pos), int(kind), int(idx))
    finally:
        _drop_fts_check(cursor)
        cursor.close()
    for doc in ordered:
        found = where.get(doc)
        if found is None:
            yield ("fts", None, None, None,
                   f"the full-text index holds document {doc}, which no search item has")
        else:
            sid, pos, kind, idx = found
            yield ("fts", sid, pos, idx,
                   f"the full-text entry of {_KINDS.get(kind, 'item')} {idx} differs from "
                   "its indexed text")


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
