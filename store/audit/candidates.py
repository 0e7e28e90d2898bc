"""The calls a rule set can match, asked of the search index (persistence side of
:mod:`store.rules.prefilter`).

:func:`candidates` returns which calls ``rules check`` must map and evaluate, or ``None``
(evaluate every call) when a rule has no requirement or the store has no usable search index
(an SQLite library without FTS5 trigram). The candidates are:

* **index hits**: the calls whose indexed text (``tool_calls.search_body``: decoded, folded,
  redacted) meets every clause of some rule's requirement: one FTS5 ``MATCH`` over
  ``search_fts`` on SQLite (``(a OR b) AND c OR ...``, each term's trigrams), ``LIKE`` over the
  pg_trgm GIN of ``search_body`` on PostgreSQL (bitmap scans ORed and ANDed); each
  such call is then evaluated against only the rules whose requirement its text meets;
* **spliced command lines**: the calls whose command view (``call_views``) has a quote or a
  backslash between two word characters (``cu''rl``, ``of="/dev/sda"``), which the shell
  parser joins into text the arguments do not hold as written (the views with a quote
  read, the test in Python); views with a path the mapping normalises (``/.``, ``//``), or
  cut (2,000 characters); and **normalised command lines**: command views the shell
  normalisation may rewrite (:func:`store.rules.evasion.may_unmask`: a ``$``, a pipe into a
  shell, ``find``, an interpreter ...), whose normalised forms hold text the arguments do not
  (``echo cm0gLXJmIC8= | base64 -d | sh`` runs ``rm -rf /``);
* **context**: every call of a session whose cwd or agent holds a term of a path field;
* **secrets**: every call whose indexed text holds a redaction marker (the text a rule looks
  for may be what was redacted);
* **the tail**: every call the index has not reached yet (``sessions.indexed_position``);
* **the unvouched**: every call of a session whose derived rows are not what the transcript
  gives (:func:`store.db.index.index_check.suspect_sessions`: its call items and command/path views
  recomputed from the transcript, as ``verify`` does, and on SQLite the full-text entries
  compared with the items): an edited, removed or added index row never hides a call; the
  session is evaluated whole, and a warning names it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from store.audit.sql import connect
from store.core.logs import logger
from store.db.index.index_check import suspect_sessions
from store.db.index.search_index import CALL_VIEWS, KIND_CALL, has_search_index
from store.db.index.search_schema import fts_rows_sql, fts_trigrams, like_pattern
from store.records.searchtext import fold
from store.rules.evasion import TRIGGERS, may_unmask
from store.rules.prefilter import AGENT, SECRET_TERM, Requirement, Term

if TYPE_CHECKING:
    from store.db.store import TranscriptStore
    from store.rules.sigma import Rule

__all__ = ["Candidates", "candidates"]

_log = logger(__name__)

_VIEW_CUT = 2000  # store.tools.vocabulary cuts a view there
_MARKS = tuple(dict.fromkeys(("'", '"', "\\", "/.", "//", *TRIGGERS)))
#: ``//`` not after ``:`` (a URL's is not a path the mapping normalises).
_SLASHES = re.compile(r"(?:^|[^:])//")
#: A quote or backslash between two characters of a word: the shell joins them (``cu''rl``).
_SPLICE = re.compile(r"[^\s'\"\\]['\"\\]+[^\s'\"\\]")


@dataclass(slots=True)
class Candidates:
    """Calls to evaluate: ``keys`` (session, position, call index), and whole sessions from a
    position on (``starts``: the context sessions from 0, the tail from the watermark)."""

    keys: set[tuple[str, int, int]] = field(default_factory=set)
    starts: dict[str, int] = field(default_factory=dict)
    #: Of a call the index found: the rules (bits, in the rule set's order) whose
    #: requirement its text meets; a call missing here may match any rule.
    rules: dict[tuple[str, int, int], int] = field(default_factory=dict)
    #: The indexed calls whose text holds a redaction marker (a secret), and where each
    #: lagging session's index ends: every other call is known to hold no secret.
    secrets: set[tuple[str, int, int]] = field(default_factory=set)
    indexed: dict[str, int] = field(default_factory=dict)

    def secret_free(self, session_id: str, position: int, index: int) -> bool:
        """Whether the index says this call holds no secret."""
        return (position < self.indexed.get(session_id, position + 1)
                and (session_id, position, index) not in self.secrets)


def candidates(opened: TranscriptStore, rules: Sequence[Rule], *,
               agent: str | None = None, session_id: str | None = None,
               warn: Callable[[str], None] | None = None) -> Candidates | None:
    """The calls ``rules`` may match (see the module), or None: evaluate every call.
    ``warn`` is told of each session evaluated whole because its derived rows are not what
    its transcript gives."""
    needs: list[Requirement] = []
    for rule in rules:
        if rule.needs is None:
            return None
        needs.append(rule.needs)
    with connect(opened) as conn:
        if not has_search_index(conn):
            return None
        found = Candidates()
        contexts = {t.context for need in needs for clause in need for t in clause
                    if t.context}
        where, params = _scope(conn, agent, session_id)
        for sid, cwd, who, indexed, following in conn.exec_driver_sql(
                "SELECT session_id, cwd, agent, indexed_position, next_position "
                f"FROM sessions{where}", params):
            place, agent_name = fold(cwd or ""), fold(who or "")
            if any(_in_context(place, agent_name, c) for c in contexts):
                found.starts[sid] = 0
            elif following > indexed:
                found.starts[sid] = indexed
            if following > indexed:
                found.indexed[sid] = indexed
        if needs:
            bits: dict[Requirement, int] = {}
            for bit, need in enumerate(needs):
                bits[need] = bits.get(need, 0) | 1 << bit
            for need, mask in bits.items():  # one search per requirement: its calls
                for key in _index_hits(conn, [need], session_id):
                    found.rules[key] = found.rules.get(key, 0) | mask
            found.keys |= found.rules.keys()
            for key in _spliced(conn, session_id):  # any rule
                found.keys.add(key)
                found.rules.pop(key, None)
            found.secrets = _index_hits(conn, [(frozenset({Term(SECRET_TERM)}),)], session_id)
            for key in found.secrets:  # redacted text: a rule's text may be under a marker
                found.keys.add(key)
                found.rules.pop(key, None)
        scope = None if agent is None and session_id is None else [
            str(sid) for (sid,) in conn.exec_driver_sql(
                f"SELECT session_id FROM sessions{where}", params)]
        for sid, why in sorted(suspect_sessions(conn, scope).items()):
            message = (f"session {sid}: the search index does not match the transcript "
                       f"({why}); every call of it is evaluated (run `transcript-store "
                       "verify`, repair with `transcript-store db index --rebuild`)")
            _log.warning("%s", message)
            if warn is not None:
                warn(message)
            found.starts[sid] = 0  # evaluated whole, no derived row trusted
            found.indexed[sid] = 0
        for key in [k for k in found.rules if k[1] >= found.starts.get(k[0], k[1] + 1)]:
            del found.rules[key]  # read whole (context, tail): any rule
        return found


def _in_context(cwd: str, agent: str, text: str) -> bool:
    """Whether a path field's ``text`` may come (in part) from the session: the cwd or agent
    holds it, or the cwd ends with its start up to a slash (the rest then in the arguments).
    A path literal's run (no slash) is held whole or not at all."""
    if text.startswith(AGENT):  # an Image's last component: the agent's (file events)
        return ("/" + agent).endswith("/" + text[1:])
    if text in cwd or text in agent:
        return True
    cwd = cwd.rstrip("/")
    return any(ch == "/" and cwd.endswith(text[:at]) for at, ch in enumerate(text))


def _scope(conn: Connection, agent: str | None, session_id: str | None
           ) -> tuple[str, tuple[Any, ...] | dict[str, Any]]:
    pg = conn.dialect.name == "postgresql"
    tests: list[str] = []
    values: dict[str, Any] = {}
    if agent is not None:
        tests.append("agent = %(agent)s" if pg else "agent = :agent")
        values["agent"] = agent
    if session_id is not None:
        tests.append("session_id = %(sid)s" if pg else "session_id = :sid")
        values["sid"] = session_id
    if not tests:
        return "", ()
    if pg:
        return " WHERE " + " AND ".join(tests), values
    return " WHERE " + " AND ".join(tests).replace(":agent", "?").replace(":sid", "?"), tuple(
        values[k] for k in ("agent", "sid") if k in values)


def _index_hits(conn: Connection, needs: Iterable[Requirement], session_id: str | None
                ) -> set[tuple[str, int, int]]:
    unique = sorted({tuple(sorted(need, key=sorted)) for need in needs})
    if conn.dialect.name == "postgresql":
        params: dict[str, Any] = {}
        ors: list[str] = []
        for need in unique:
            ands = []
            for clause in need:
                likes = []
                for term in sorted(clause):
                    name = f"p{len(params)}"
                    params[name] = like_pattern(term.text)
                    test = f"search_body LIKE %({name})s"
                    if term.also:
                        alts = []
                        for also in term.also:
                            extra = f"p{len(params)}"
                            params[extra] = like_pattern(also)
                            alts.append(f"search_body LIKE %({extra})s")
                        test = f"({test} AND ({' OR '.join(alts)}))"
                    likes.append(test)
                ands.append("(" + " OR ".join(likes) + ")")
            ors.append("(" + " AND ".join(ands) + ")")
        scoped = ""
        if session_id is not None:
            scoped, params["sid"] = " AND session_id = %(sid)s", session_id
        sql = ("SELECT session_id, position, call_index FROM tool_calls "
               f"WHERE search_body IS NOT NULL{scoped} AND ({' OR '.join(ors)})")
        return {(str(s), int(p), int(i)) for s, p, i in conn.exec_driver_sql(sql, params)}
    query = " OR ".join(
        "(" + " AND ".join("(" + " OR ".join(_fts_term(t) for t in sorted(clause)) + ")"
                           for clause in need) + ")" for need in unique)
    scoped_sqlite = " AND c.session_id = :sid" if session_id is not None else ""
    sql = fts_rows_sql(KIND_CALL, "c.session_id, c.position, c.call_index", ":query",
                       f"c.search_body IS NOT NULL{scoped_sqlite}")
    args = {"query": query, "sid": session_id} if session_id is not None else {"query": query}
    return {(str(s), int(p), int(i)) for s, p, i in conn.exec_driver_sql(sql, args)}


def _fts_term(term: Term) -> str:
    """The items that may hold ``term`` (its trigrams: a superset, revision 0021; each
    candidate is then evaluated against the rule, which decides)."""
    if not term.also:
        return fts_trigrams(term.text)
    return (f"({fts_trigrams(term.text)} AND ("
            + " OR ".join(fts_trigrams(a) for a in term.also) + "))")


def _spliced(conn: Connection, session_id: str | None) -> set[tuple[str, int, int]]:
    """Calls whose command line the shell parser may join across quotes or the shell
    normalisation may rewrite, or whose paths the mapping normalises, or whose view is cut
    (one scan of the views with a quote, a backslash, ``/.``, ``//`` or a trigger of the
    normalisation, or cut; the test in Python)."""
    pg = conn.dialect.name == "postgresql"
    mark = "%s" if pg else "?"
    scoped = f" AND session_id = {mark}" if session_id is not None else ""
    scope: tuple[Any, ...] = (session_id,) if session_id is not None else ()
    find = "strpos" if pg else "instr"
    marks = " OR ".join(f"{find}(text, {mark}) > 0" for _ in _MARKS)
    found: set[tuple[str, int, int]] = set()
    for sid, position, index, view, text in conn.exec_driver_sql(
            f"SELECT session_id, position, call_index, view, text FROM {CALL_VIEWS} "
            f"WHERE view IN ('command', 'path'){scoped} AND ({marks} "
            f"OR length(text) >= {_VIEW_CUT})", (*scope, *_MARKS)):
        if (len(text) >= _VIEW_CUT or "/." in text
                or ("//" in text and (view == "path" or _SLASHES.search(text)))
                or (view == "command" and (_SPLICE.search(text) or may_unmask(text)))):
            found.add((str(sid), int(position), int(index)))
    return found
