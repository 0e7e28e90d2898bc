"""CLI: ``tools usage``, ``calls search | show``, ``audit schema | reindex`` (edge layer;
public API only)."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import click
import orjson

import store
from store.cli._common import (
    CommandGroup,
    console,
    count,
    current_tool,
    db_option,
    emit_json,
    local_time,
    more_rows,
    nothing_found,
    open_store,
    page_limit,
    plural,
    redaction_options,
    redactor_from,
    resolve_session,
    scope_options,
    time_options,
    visible,
    wide_option,
)
from store.cli.fitted import Column, fitted_table
from store.cli.trust import audit_secrets, secret_calls
from store.core.depth import deep_dumps


@click.group(cls=CommandGroup)
def tools() -> None:
    """Tool usage across every session."""


@click.group(cls=CommandGroup)
def calls() -> None:
    """Find any tool call ever made, and show one."""


@click.group(cls=CommandGroup)
def audit() -> None:
    """Schema audit of stored calls; search-index upkeep."""


def _condition(spec: str, op: str) -> store.ArgumentCondition:
    try:
        return store.ArgumentCondition.parse(spec, op)  # type: ignore[arg-type]
    except store.UsageError as exc:
        raise click.BadParameter(str(exc)) from exc


def _query(tool: str | None, raw_name: str | None, session: str | None,
           since: datetime | None, until: datetime | None, status: tuple[str, ...],
           where: tuple[str, ...], contains: tuple[str, ...], text: str | None,
           views: dict[str, str | None] | None = None, ignore_case: bool = False,
           regex: bool = False, agent: str | None = None,
           cwd: str | None = None, with_children: bool = False,
           exact: bool = False) -> store.CallQuery:
    op = "regex" if regex else "icontains" if ignore_case else "contains"
    if regex and ignore_case:
        op = "regex"
    try:
        view_conditions = tuple(
            store.ViewCondition(view, f"(?i){value}" if regex and ignore_case else value,
                                op)  # type: ignore[arg-type]
            for view, value in (views or {}).items() if value is not None)
        return store.CallQuery(
            tool=tool, raw_name=raw_name, session_id=session, since=since,
            until=until, status=status or None, agent=agent, cwd=cwd,
            with_children=with_children, exact=exact,
            where=tuple(_condition(w, "eq") for w in where)
            + tuple(_condition(c, op) for c in contains),
            text=text, views=view_conditions)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


_WITH_CHILDREN = click.option(
    "--with-children", is_flag=True,
    help="With --session: also the sessions below it (its subagents, forks and "
         "continuations, and theirs).")


def _warn(message: str) -> None:
    """A search's warning (an index that does not line up with the transcript) on stderr."""
    click.echo(visible(f"warning: {message}"), err=True)


def _filters(function: Any) -> Any:
    for option in reversed([
        click.option("--tool", help="Current tool name (aliases apply)."),
        click.option("--raw-name", help="The name exactly as recorded."),
        click.option("--session", help="One session (its id or a unique prefix of it)."),
        _WITH_CHILDREN,
        scope_options,
        time_options("Calls made"),
        click.option("--status", multiple=True, type=click.Choice(store.CALL_STATUSES),
                     help="Any of these (repeatable)."),
        click.option("--where", multiple=True, metavar="PATH=VALUE",
                     help="Argument at PATH equals VALUE (JSON, else text). Repeatable."),
        click.option("--contains", multiple=True, metavar="PATH=TEXT",
                     help="String argument at PATH contains TEXT (-i, --regex apply). PATH: "
                          'keys and indexes, a.b[0]."key.with.dots". Repeatable.'),
        click.option("--text", help="Full text over arguments and results (3+ characters)."),
        click.option("--command", "command_view", metavar="TEXT",
                     help="The shell command (any agent's shape, as one string) contains TEXT."),
        click.option("--path", "path_view", metavar="TEXT",
                     help="The file path argument contains TEXT."),
        click.option("--pattern", "pattern_view", metavar="TEXT",
                     help="The search pattern argument contains TEXT."),
        click.option("--url", "url_view", metavar="TEXT",
                     help="The URL argument contains TEXT."),
        click.option("-i", "--ignore-case", is_flag=True,
                     help="--command/--path/--pattern/--url/--contains ignore case."),
        click.option("--regex", is_flag=True,
                     help="--command/--path/--pattern/--url/--contains are regular expressions."),
    ]):
        function = option(function)
    return function


@contextmanager
def _output(path: Path | None, newline: str | None = None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    # Owner-only like the database (umask aside): the rows hold what the transcripts hold.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8", newline=newline) as handle:
        yield handle


@tools.command("usage")
@db_option
@time_options("Calls made")
@click.option("--session", help="One session (its id or a unique prefix of it).")
@_WITH_CHILDREN
@scope_options
@click.option("--limit", type=count(), default=100, show_default=True,
              help="At most this many tools (0: all).")
@click.option("--offset", type=count(), default=0)
@click.option("--by", type=click.Choice(["day", "week", "agent", "model"]),
              help="Per tool and per day, week, agent or model: calls and the tokens the "
                   "results carried into the context (estimated), with a sparkline or bar.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per tool.")
@wide_option
def audit_usage(db_url: str | None, since: datetime | None, until: datetime | None,
                session: str | None, with_children: bool, agent: str | None,
                cwd: str | None, limit: int, offset: int, by: str | None,
                as_json: bool, wide: bool) -> None:
    """Usage per current tool name (every agent's names folded into one vocabulary)."""
    from store.audit.lite_usage import lite_tool_usage
    from store.db.schema.revisions import default_url

    if with_children and session is None:
        raise click.UsageError("--with-children applies with --session")
    if by is not None:
        from store.cli.toolsby import tools_by

        tools_by(db_url, by, since, until, as_json, agent=agent, cwd=cwd)
        return
    url = db_url or default_url()
    every = None if with_children else lite_tool_usage(
        url, since=since, until=until, session=session, agent=agent, cwd=cwd)
    if every is not None and not every and not as_json and session is None \
            and _lite_nothing_found(url, "tool calls", agent=agent):
        return
    if every is None or (not every and not as_json):  # (the store words what is missing)
        with open_store(db_url, read_only=True) as opened:
            if session is not None:
                session = resolve_session(opened, session)
            every = store.tool_usage(opened, since=since, until=until, session_id=session,
                                     agent=agent, cwd=cwd, limit=None,
                                     with_children=with_children)
            if not every and not as_json:
                nothing_found(opened, "tool calls", agent=agent)
                return
    wanted = page_limit(limit)
    rows = every[offset:] if wanted is None else every[offset:offset + wanted]
    more_rows(len(rows), len(every), offset, "tools")
    if as_json:
        emit_json({"tool": row.name, "raw_tools": row.raw_names, "calls": row.calls,
                        "sessions": row.sessions, "invalid_calls": row.invalid_calls,
                        "error_results": row.error_results,
                        "calls_without_result": row.calls_without_result,
                   "first_seen": row.first_seen, "last_seen": row.last_seen} for row in rows)
        return
    # (the counts whole; at 80 columns the first, then the last time left out and said so,
    # rather than every column narrowed to a few letters)
    counts = [Column(name, keep=True) for name in ("calls", "sessions", "invalid", "errors",
                                                   "no result")]
    columns = [Column("tool", flexible=True, minimum=6),
               Column("raw names", flexible=True, minimum=9), *counts,
               Column("first seen", keep=True, drop=2), Column("last seen", keep=True, drop=1)]
    console(wide).print(fitted_table("tool usage", columns, [
        [row.name, ", ".join(row.raw_names), str(row.calls), str(row.sessions),
         str(row.invalid_calls), str(row.error_results), str(row.calls_without_result),
         local_time(row.first_seen), local_time(row.last_seen)] for row in rows], wide))


@calls.command("search")
@db_option
@_filters
@click.option("--limit", type=count(), default=50, show_default=True,
              help="At most this many calls (0: all).")
@click.option("--offset", type=count(), default=0)
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per call, streamed (every call asked for).")
@wide_option
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write every matching call (no paging) as CSV to this file ('-': stdout).")
@click.option("--keep-formulas", is_flag=True,
              help="With --csv: write cells starting with = + - @ tab or CR as they are (by "
                   "default they get a leading ' so that a spreadsheet does not run them).")
@click.option("--secret", metavar="VALUE",
              help="Only the calls that used this secret (found by its keyed digest; '-' "
                   "reads it from stdin). Other filters do not apply.")
@click.option("--exact", is_flag=True,
              help="Use no search index or argument view: scan every call exactly (slower; "
                   "the answer rests on the transcript alone, which the chain covers).")
@redaction_options
def calls_search(db_url: str | None, tool: str | None, raw_name: str | None,
                 session: str | None, with_children: bool, agent: str | None,
                 cwd: str | None, since: datetime | None, until: datetime | None,
                 status: tuple[str, ...], where: tuple[str, ...], contains: tuple[str, ...],
                 text: str | None, command_view: str | None, path_view: str | None,
                 pattern_view: str | None, url_view: str | None, ignore_case: bool,
                 regex: bool, limit: int, offset: int, as_json: bool, wide: bool,
                 csv_path: Path | None, keep_formulas: bool, secret: str | None,
                 exact: bool, redact: bool, patterns: tuple[str, ...]) -> None:
    """Search the stored calls (filters combine).

    --tool takes a canonical name (bash, read, write, edit, grep, ...: `aliases list`) and
    finds every agent's calls of it; --raw-name the name exactly as recorded.
    """
    if secret is not None:
        secret_calls(db_url, secret, as_json)
        return
    if with_children and session is None:
        raise click.UsageError("--with-children applies with --session")
    if keep_formulas and csv_path is None:
        raise click.UsageError("--keep-formulas applies with --csv only")
    views = {"command": command_view, "path": path_view, "pattern": pattern_view,
             "url": url_view}
    wanted = page_limit(limit)
    redactor = redactor_from(redact, patterns)

    def query_of(tool: str | None, session: str | None) -> store.CallQuery:
        return _query(tool, raw_name, session, since, until, status, where, contains, text,
                      views, ignore_case, regex, agent, cwd, with_children, exact)

    if csv_path is None and not (where or contains or exact or with_children) \
            and _lite_search(db_url, tool, session, agent, query_of, wanted, offset, as_json,
                             wide, redactor):
        return
    if session is not None or tool is not None:
        with open_store(db_url, read_only=True) as opened:
            if session is not None:
                session = resolve_session(opened, session)
            if tool is not None:
                tool = current_tool(opened, tool, agent)
    query = query_of(tool, session)
    if csv_path is not None:
        target = None if str(csv_path) == "-" else csv_path
        with open_store(db_url, read_only=True) as opened, _output(target, newline="") as out:
            stats = store.export_calls_csv(opened, query, out, redactor=redactor,
                                           formulas=keep_formulas)
        click.echo(f"{stats.records} calls, {stats.redactions} secrets redacted", err=True)
        return
    with open_store(db_url, read_only=True) as opened:
        found: Iterable[store.CallMatch]
        if wanted is None:  # every row, streamed from the database
            found = itertools.islice(store.iter_calls(opened, query, preview_chars=200,
                                                      redactor=redactor, warn=_warn),
                                     offset, None)
        else:  # a page: LIMIT / OFFSET in SQL
            found = store.search_calls(opened, query, limit=wanted, offset=offset,
                                       redactor=redactor, warn=_warn)
        _show_calls(found, lambda: store.count_calls(opened, query), opened, tool, agent,
                    wanted, offset, as_json, wide)


def _lite_nothing_found(url: str, what: str, *, agent: str | None) -> bool:
    """"no ... match" for an empty answer, worded from the stdlib reader (the agents and the
    tool names it knows) without opening the store; False when it declines."""
    import sqlite3

    from store.audit.lite_search import open_calls

    lite = open_calls(url)
    if lite is None:
        return False
    with lite:
        try:
            nothing_found(lite, what, agent=agent)
        except sqlite3.Error:
            return False
    return True


def _lite_search(db_url: str | None, tool: str | None, session: str | None,
                 agent: str | None, query_of: Any, wanted: int | None, offset: int,
                 as_json: bool, wide: bool, redactor: store.Redactor | None) -> bool:
    """``calls search`` on the stdlib driver (``store.audit.lite_search``: an SQLite file at
    head, no SQLAlchemy import); False when it declines (the store answers and words every
    error)."""
    import sqlite3

    from store.audit.lite_search import lite_query, open_calls
    from store.db.schema.revisions import default_url

    lite = open_calls(db_url or default_url())
    if lite is None:
        return False
    shown = _Shown()
    with lite:
        try:
            if session is not None:
                session = lite.session_id(session)
                if session is None:  # (none, several: the store words it)
                    return False
            if tool is not None:
                tool = current_tool(lite, tool, agent)
            query = query_of(tool, session)
            if not lite_query(query):
                return False
            found = lite.iter_calls(query, limit=wanted, offset=offset if wanted else 0,
                                    preview_chars=200, redactor=redactor, warn=_warn)
            if wanted is None:
                found = itertools.islice(found, offset, None)
            _show_calls(shown.counted(found), lambda: lite.count_calls(query), lite, tool,
                        agent, wanted, offset, as_json, wide)
        except sqlite3.Error as exc:
            if shown.rows:  # (rows are out: the answer cannot be taken back)
                raise store.DatabaseError(f"{db_url or default_url()}: {exc}") from exc
            return False
    return True


class _Shown:
    """How many rows went out (a lite search that fails after its first row cannot fall
    back to the store)."""

    rows = 0

    def counted(self, found: Iterable[store.CallMatch]) -> Iterator[store.CallMatch]:
        for match in found:
            self.rows += 1
            yield match


def _show_calls(found: Iterable[store.CallMatch], total_of: Any, opened: Any,
                tool: str | None, agent: str | None, wanted: int | None, offset: int,
                as_json: bool, wide: bool) -> None:
    """The matches as JSON lines (streamed) or a table, with "showing N of M"."""
    if as_json:  # one row at a time, whatever the number
        shown = emit_json(_call_json(match) for match in found)
        if wanted is not None and shown == wanted:  # (else nothing was cut)
            more_rows(shown, total_of(), offset, "calls")
        return
    matches = list(found)
    total = (total_of() if wanted is not None and len(matches) == wanted
             else offset + len(matches))
    if not matches:
        nothing_found(opened, "calls", tool=tool, agent=agent)
        return
    # (at 80 columns: the folder, agent and arguments' status left out, rather than every
    # column cut to a letter)
    columns = [Column("time", keep=True), Column("session", flexible=True, minimum=9),
               Column("pos", justify="right", keep=True), Column("agent", minimum=6, drop=3),
               Column("cwd", flexible=True, drop=4), Column("tool"),
               Column("args status", drop=2), Column("result status", drop=1),
               Column("arguments", flexible=True, minimum=12, weight=3),
               Column("result", flexible=True, minimum=10, weight=2)]
    cells = [[local_time(m.created_at), m.session_id, f"{m.position}.{m.index}", m.agent or "",
              m.cwd or "", m.name, m.arguments_status, m.result_status, m.arguments_text,
              m.result_preview or "-"]
             for m in matches]
    console(wide).print(fitted_table(f"{len(matches)} of {plural(total, 'call')}", columns, cells,
                                     wide))
    more_rows(len(matches), total, offset, "calls")


def _call_json(m: store.CallMatch) -> dict[str, Any]:
    """A call in the JSON field names every command uses (docs/json/call.schema.json)."""
    return {"session_id": m.session_id, "position": m.position, "call_index": m.index,
            "call_id": m.call_id, "tool": m.name, "raw_tool": m.raw_name,
            "arguments_status": m.arguments_status, "result_status": m.result_status,
            "status": m.status,  # (deprecated: arguments_status as stored; one more release)
            "agent": m.agent, "cwd": m.cwd, "arguments": m.arguments_text,
            "created_at": m.created_at, "result": m.result_preview,
            "result_is_error": m.result_is_error}


@calls.command("show")
@db_option
@click.argument("reference")
@click.option("--session", help="The session, when REFERENCE is a provider call id.")
@click.option("--json", "as_json", is_flag=True, help="The call as one JSON object.")
@redaction_options
def calls_show(db_url: str | None, reference: str, session: str | None, as_json: bool,
               redact: bool, patterns: tuple[str, ...]) -> None:
    """Show one call with its full arguments and result.

    REFERENCE is SESSION:POSITION.INDEX (as `calls search` prints it), or a call id with
    --session.
    """
    redactor = redactor_from(redact, patterns)
    sid, position, index, call_id = _reference(reference, session)
    with open_store(db_url, read_only=True) as opened:
        sid = resolve_session(opened, sid)
        transcript = opened.load(sid)
    if redactor is not None:
        transcript, _ = store.redact_transcript(transcript, redactor)
    found = [c for c in transcript.calls()
             if (call_id is None and (c.position, c.index) == (position, index))
             or (call_id is not None and c.call.id == call_id)]
    if not found:
        raise click.ClickException(f"no call {reference!r} in session {sid!r}")
    for loaded in found:
        call = loaded.call
        arguments: Any = call.input if isinstance(call, store.ToolCall) else call.arguments_text
        result = loaded.result.content if loaded.result is not None else None
        is_error = loaded.result.is_error if loaded.result else None
        row = {"session_id": sid, "position": loaded.position, "call_index": loaded.index,
               "call_id": call.id, "tool": call.name, "raw_tool": call.raw_name,
               "arguments_status": store.arguments_status(call.status),
               "result_status": store.result_status(is_error),
               "status": call.status,  # (deprecated: arguments_status as stored)
               "arguments": arguments, "result": result, "result_is_error": is_error}
        if as_json:
            emit_json([row])
            continue
        click.echo(visible(f"{sid} {loaded.position}.{loaded.index}  {call.name}"
                           + (f" (recorded as {call.raw_name})" if call.raw_name else "")
                           + f"  id={call.id}  arguments {row['arguments_status']}, "
                           f"result {row['result_status']}"))
        if isinstance(arguments, str):
            click.echo(visible(arguments))
        else:
            try:
                click.echo(orjson.dumps(arguments, option=orjson.OPT_INDENT_2).decode())
            except TypeError:  # nested over orjson's limit (stored before the depth rule)
                click.echo(deep_dumps(arguments))
        if loaded.result is None:
            click.echo("-> no result")
        else:
            flag = "ERROR " if loaded.result.is_error else ""
            text = result if isinstance(result, str) else _compact(result)
            click.echo(f"-> {flag}{visible(text)}")


def _reference(reference: str, session: str | None) -> tuple[str, int, int, str | None]:
    if session is not None:
        return session, -1, -1, reference
    sid, sep, place = reference.rpartition(":")
    position, dot, index = place.partition(".")
    if not sep or not dot or not position.isdigit() or not index.isdigit():
        raise click.BadParameter(
            f"expected SESSION:POSITION.INDEX or a call id with --session, got {reference!r}")
    return sid, int(position), int(index), None


@audit.command("schema")
@db_option
@click.option("--session", help="One session (its id or a unique prefix of it).")
@click.option("--tool", help="Current tool name.")
@click.option("--schema", "schema_file", type=click.Path(exists=True, dir_okay=False,
                                                         path_type=Path),
              help="Tool definitions (any provider's shape) or {name: JSON Schema}; default: "
                   "the definitions recorded with each session.")
@click.option("--limit", type=count())
@click.option("--json", "as_json", is_flag=True)
@redaction_options
def audit_schema(db_url: str | None, session: str | None, tool: str | None,
                 schema_file: Path | None, limit: int | None, as_json: bool, redact: bool,
                 patterns: tuple[str, ...]) -> None:
    """Validate stored calls against their tool schemas; exit 1 when any is rejected."""
    with open_store(db_url, read_only=True) as opened:
        if session is not None:
            session = resolve_session(opened, session)
        violations = store.schema_audit(opened, session_id=session, tool=tool,
                                        schema=schema_file, limit=limit,
                                        redactor=redactor_from(redact, patterns))
    if as_json:
        emit_json({"session_id": v.session_id, "position": v.position, "call_index": v.index,
                   "call_id": v.call_id, "tool": v.name, "raw_tool": v.raw_name,
                   "kind": v.kind, "problems": v.problems, "arguments": v.arguments_text,
                   "source": v.source} for v in violations)
    for v in violations if not as_json else ():
        click.echo(visible(f"{v.session_id} {v.position}.{v.index} {v.name} ({v.kind}): "
                           + "; ".join(v.problems)))
    if violations:
        sys.exit(1)
    if not as_json:
        with open_store(db_url, read_only=True) as opened:
            count = opened.count_calls(session)
        scope = f" of session {session}" if session else ""
        against = (f"the schemas in {schema_file}" if schema_file else
                   "the tool definitions recorded with each session (sessions without "
                   "definitions are skipped)")
        click.echo(visible(f"no schema violations: checked the {count} stored calls{scope}"
                           + (f" to {tool}" if tool else "") + f" against {against}"))


@audit.command("reindex")
@db_option
def audit_reindex(db_url: str | None) -> None:
    """Forget the search index and build it again from the tables."""
    with open_store(db_url) as opened:
        done = store.refill_search_index(opened)
    click.echo("full-text indexes refilled" if done else "nothing to refill")

audit.add_command(audit_secrets)

#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [tools, calls, audit]


def _compact(value: object) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # nested over orjson's limit, or integers beyond 64 bits
        return deep_dumps(value)
