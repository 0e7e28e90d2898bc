"""CLI: ``sessions list | show | fork | delete | rename | tag`` (``erase | hold | release``
from :mod:`store.cli.trust`), ``verify`` (edge layer; public API only)."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import click
import orjson

import store
from store.cli._common import (
    CommandGroup,
    confirmed,
    console,
    count,
    db_option,
    emit_json,
    local_time,
    more_rows,
    open_store,
    page_limit,
    plural,
    print_markup,
    redaction_options,
    redactor_from,
    resolve_session,
    scope_options,
    time_options,
    visible,
    wide_option,
)
from store.cli._common import safe_markup as escape
from store.cli.fitted import Column, fitted_table
from store.cli.lineage import lineage_lines, session_json, sessions_tree
from store.cli.trust import erase, explain_missing, hold, release
from store.core.depth import deep_dumps

#: ``sessions list --sort`` (``store.db.sessions.SESSION_SORTS``, written out here so that
#: ``--help`` loads no database code).
SORTS = ("active", "started", "messages", "calls", "updated")


@click.group(cls=CommandGroup)
def sessions() -> None:
    """List, show, fork, rename, tag, delete, erase and hold stored sessions."""


for _command in (erase, hold, release, sessions_tree):
    sessions.add_command(_command)


@sessions.command("list")
@db_option
@scope_options
@click.option("--provider", help="Only sessions of this provider.")
@click.option("--model", help="Only sessions of this model.")
@click.option("--tag", help="Only sessions with this tag.")
@click.option("--title", "title_contains", help="Only sessions whose title contains this.")
@click.option("--parent", help="Only the sessions whose parent is this one (its subagents, "
                               "forks and continuations).")
@click.option("--roots", is_flag=True, help="Only sessions without a parent.")
@time_options("With a message")
@click.option("--sort", type=click.Choice(SORTS), default="active", show_default=True,
              help="Newest or largest first: the session's own last activity, its start, "
                   "messages, calls (updated: the old name of active).")
@click.option("--limit", type=count(), default=50, show_default=True,
              help="At most this many sessions (0: all).")
@click.option("--offset", type=count(), default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@wide_option
@redaction_options
def sessions_list(db_url: str | None, agent: str | None, cwd: str | None,
                  provider: str | None, model: str | None, tag: str | None,
                  title_contains: str | None, parent: str | None, roots: bool,
                  since: datetime | None, until: datetime | None,
                  sort: str, limit: int, offset: int, as_json: bool, wide: bool, redact: bool,
                  patterns: tuple[str, ...]) -> None:
    """List sessions by their own last activity (the time of their last message as the agent
    recorded it, not when it was imported), newest first; --sort orders them otherwise."""
    if parent is not None:
        with open_store(db_url, read_only=True) as opened:
            try:
                parent = resolve_session(opened, parent)
            except store.SessionNotFound:
                pass  # (children may name a parent that is not stored)
    filters: dict[str, Any] = {"provider": provider, "model": model, "tag": tag,
                               "title_contains": title_contains, "agent": agent, "cwd": cwd,
                               "since": since, "until": until, "parent": parent,
                               "roots": roots}
    page = store.list_sessions(db_url, **filters, sort=sort, limit=page_limit(limit),
                               offset=offset)
    total = page.total
    rows = [session_json(info) for info in page.sessions]
    redactor = redactor_from(redact, patterns)
    if redactor is not None:  # titles and folders can hold what the transcript held
        for row in rows:
            row["title"], _ = redactor.redact(row["title"])
            row["cwd"], _ = redactor.redact(row["cwd"])
    if as_json:
        emit_json(rows)
        more_rows(len(rows), total, offset, "sessions")
        return
    when = "started" if sort == "started" else "last_activity"
    # (at 80 columns: the folder, then the model left out, the id cut to a prefix that
    # `sessions show` takes, rather than every column cut to a letter)
    columns = [Column("session", flexible=True, minimum=9, weight=2),
               Column("started" if sort == "started" else "last active", keep=True),
               Column("title", flexible=True, minimum=12, weight=3),
               Column("agent", minimum=6, drop=2), Column("model", flexible=True, drop=3),
               Column("msgs", justify="right", keep=True),
               Column("calls", justify="right", keep=True),
               Column("cwd", flexible=True, drop=4)]
    cells = [[row["session_id"], local_time(row[f"{when}_at"]), row["title"] or "",
              row["agent"] or row["provider"] or "", row["model"] or "",
              str(row["messages"]), str(row["calls"] or 0), row["cwd"] or ""] for row in rows]
    console(wide).print(fitted_table(f"{len(rows)} of {plural(total, 'session')}", columns, cells,
                                     wide))
    more_rows(len(rows), total, offset, "sessions")


def _part_lines(message: store.Message, results: dict[tuple[int, int], Any], position: int
                ) -> list[str]:
    lines: list[str] = []
    call_index = 0
    for part in message.parts:
        if isinstance(part, store.TextPart):
            if part.text.strip():
                lines.append(escape(part.text))
        elif isinstance(part, store.ThinkingPart):
            lines.append(f"[dim](thinking) {escape(part.text[:400])}[/dim]")
        elif isinstance(part, store.ToolCall | store.InvalidToolCall):
            renamed = f" (recorded as {part.raw_name})" if part.raw_name else ""
            head = f"[bold cyan]call {escape(part.name)}[/bold cyan]{escape(renamed)} " \
                   f"id={escape(str(part.id))}"
            if isinstance(part, store.InvalidToolCall):
                lines.append(f"{head} [bold red]INVALID ARGUMENTS ({part.error_kind})[/bold red]")
                lines.append(f"    raw: {escape(part.arguments_text)}")
            else:
                lines.append(head)
                try:
                    pretty = orjson.dumps(part.input, option=orjson.OPT_INDENT_2).decode()
                except TypeError:  # nested over orjson's limit (stored before the depth rule)
                    pretty = deep_dumps(part.input)
                lines.extend("    " + escape(line) for line in pretty.splitlines())
            result = results.get((position, call_index))
            if result is None:
                lines.append("    [yellow]-> no result (dangling call)[/yellow]")
            else:
                flag = "[red]ERROR[/red] " if result.is_error else ""
                shown = escape(result.text[:2000]).replace("\n", "\n       ")
                lines.append(f"    -> {flag}{shown}")
            call_index += 1
        elif isinstance(part, store.ToolResult):
            lines.append(f"[dim]result for {escape(str(part.call_id))}[/dim]")
        elif isinstance(part, store.ServerToolCall):
            lines.append(f"[magenta](server tool {escape(part.name)})[/magenta]")
        else:
            lines.append(f"[dim]({escape(getattr(part, 'kind', 'part'))})[/dim]")
    return lines


def _lite_show(db_url: str | None, prefix: str, last_turns: int | None = None
               ) -> tuple[Any, ...] | None:
    """``sessions show``'s reads on the stdlib driver (``store.db.reading.lite_show``: a
    plain SQLite file at head, a plain id or prefix, a stored session); ``None`` otherwise
    (the store answers, resolves or explains)."""
    import sqlite3

    from store.db.reading.lite_show import open_show
    from store.db.schema.revisions import default_url

    lite = open_show(db_url or default_url())
    if lite is None:
        return None
    with lite:
        try:
            sid = lite.session_id(prefix)
            if sid is None:
                return None
            return (sid, lite.load(sid, last_turns=last_turns), lite.sources(sid),
                    lite.ancestors(sid), lite.tree(sid))
        except (sqlite3.Error, store.SessionNotFound):
            return None


@sessions.command("show")
@db_option
@click.argument("session_id")
@click.option("--last-turns", type=count(1), help="Only the last N turns.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per message.")
@redaction_options
def sessions_show(db_url: str | None, session_id: str, last_turns: int | None,
                  as_json: bool, redact: bool, patterns: tuple[str, ...]) -> None:
    """Show a transcript: roles, text, each call with its arguments and result."""
    redactor = redactor_from(redact, patterns)
    shown = _lite_show(db_url, session_id, last_turns)
    if shown is not None:
        session_id, transcript, sources, ancestors, tree = shown
    else:
        with open_store(db_url, read_only=True) as opened:
            try:
                session_id = resolve_session(opened, session_id)
                transcript = opened.load(session_id, last_turns=last_turns)
            except store.SessionNotFound:
                explain_missing(opened, session_id)  # a tombstone says what happened
                raise
            sources = opened.session_sources(transcript.session.session_id)
            ancestors = opened.session_ancestors(session_id)
            tree = opened.session_tree(session_id)
    if redactor is not None:
        transcript, _ = store.redact_transcript(transcript, redactor)
    results = {(c.position, c.index): c.result for c in transcript.calls()}
    if as_json:
        emit_json({"session_id": session_id, "position": m.position,
                   "role": m.message.role, "created_at": m.created_at,
                   "text": m.message.text,
                   "calls": [c.to_wire() for c in m.message.tool_calls]}
                  for m in transcript)
        return
    out = console()
    info = transcript.session
    lines: list[str] = []  # (printed at once: a print per line cost more than the lines)
    lines.append(f"[bold]{escape(info.session_id)}[/bold]  {escape(info.title or '')}  "
                 f"{escape(info.provider or '')} {escape(info.model or '')}  "
                 f"{info.message_count} messages")
    lines.append(f"[dim]started {local_time(info.started_at)}, last active "
                 f"{local_time(info.last_active_at)} (its own times); stored "
                 f"{local_time(info.created_at)}[/dim]")
    lines.extend(lineage_lines(ancestors, tree, redactor))
    for source in sources:
        if source.gone_at is None:
            lines.append(f"[dim]source: {escape(source.path)}[/dim]")
        else:
            lines.append(f"[yellow]source gone since {source.gone_at:%Y-%m-%d %H:%M:%S} UTC "
                         f"(deleted; kept here): {escape(source.path)}[/yellow]")
    for stored in transcript:
        role = stored.message.role
        if role == "tool" or (role == "user" and stored.message.tool_results
                              and not stored.message.text):
            continue  # results are shown beside their calls
        lines.append(f"\n[bold green]#{stored.position} {escape(role)}[/bold green]")
        lines.extend(_part_lines(stored.message, results, stored.position))
    orphans = list(transcript.orphan_results())
    if orphans:
        lines.append(f"\n[yellow]{len(orphans)} result(s) without a call[/yellow]")
    # No highlighter (rich colours every number and quote it finds: a third of the command)
    # and no hard wrap: the terminal wraps a long line itself, and a pipe gets it whole.
    print_markup(out, "\n".join(lines))


@sessions.command("fork")
@db_option
@click.argument("session_id")
@click.argument("position", type=count())
@click.option("--new-id", help="Id of the new session (default: generated).")
@click.option("--title", help="Title of the new session.")
def sessions_fork(db_url: str | None, session_id: str, position: int, new_id: str | None,
                  title: str | None) -> None:
    """Copy SESSION_ID's messages before POSITION into a new session."""
    with open_store(db_url) as opened:
        session_id = resolve_session(opened, session_id)
        info = opened.fork(session_id, position, new_id, title=title)
    click.echo(visible(f"forked {session_id} at {position} into {info.session_id}"))


@sessions.command("delete")
@db_option
@click.argument("session_ids", nargs=-1, required=True, metavar="SESSION_ID...")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def sessions_delete(db_url: str | None, session_ids: tuple[str, ...], yes: bool) -> None:
    """Delete sessions and everything in them (messages, calls, results), leaving a
    tombstone; refused for a held session. Asks first. The bytes are not scrubbed: use
    `sessions erase` for subject requests and leaked data."""
    with open_store(db_url) as opened:
        infos = [opened.get_session(resolve_session(opened, sid))  # all exist, or none goes
                 for sid in session_ids]
        if not yes:
            listed = ", ".join(f"{i.session_id} ({i.message_count} messages)" for i in infos)
            confirmed(f"delete {listed} from {opened.url}?")
        for info in infos:
            opened.delete_session(info.session_id)
            click.echo(f"deleted {info.session_id} ({info.message_count} messages)")


@sessions.command("rename")
@db_option
@click.argument("session_id")
@click.argument("title")
def sessions_rename(db_url: str | None, session_id: str, title: str) -> None:
    """Set a session's title ('' clears it)."""
    with open_store(db_url) as opened:
        info = opened.rename_session(resolve_session(opened, session_id), title or None)
    click.echo(f"{info.session_id}: title {info.title!r}" if info.title
               else f"{info.session_id}: no title")


@sessions.command("tag")
@db_option
@click.argument("session_id")
@click.argument("tags", nargs=-1)
@click.option("--remove", "-r", multiple=True, metavar="TAG", help="Remove this tag.")
def sessions_tag(db_url: str | None, session_id: str, tags: tuple[str, ...],
                 remove: tuple[str, ...]) -> None:
    """Add TAGS to a session (and --remove others); prints its tags."""
    with open_store(db_url) as opened:
        info = opened.tag_session(resolve_session(opened, session_id), add=tags, remove=remove)
    click.echo(f"{info.session_id}: tags {', '.join(info.tags) or '(none)'}")


@click.command()
@db_option
@click.option("--session", "session_id", help="Only this session.")
@click.option("--head", help="Also prove nothing was removed or rolled back since this head "
                             "(printed by `db head`).")
@click.option("--checkpoint", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Also prove the transparency log still extends this older signed "
                   "checkpoint (an auditor's copy of `log checkpoint`).")
@click.option("--key", "log_key", metavar="KEY",
              help="The log's verifier key the checkpoint is signed with (default: the "
                   "local log key's, `log key`).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per problem.")
def verify(db_url: str | None, session_id: str | None, head: str | None,
           checkpoint: Path | None, log_key: str | None, as_json: bool) -> None:
    """Check that what is stored reads back as written, that every message's chained digest
    matches, that the search index, argument views and secret digests are what the
    transcript gives, and the transparency log's leaves; exit 1 on errors (each session's
    first bad position). Changes nothing."""
    old = None
    if checkpoint is not None:
        old = checkpoint.read_text(encoding="utf-8")
        if log_key is None:
            log_key = str(store.load_log_key(create=False).verifier)
    with open_store(db_url, read_only=True) as opened:
        if session_id is not None:
            session_id = resolve_session(opened, session_id)
        report = opened.verify(session_id, head=head, checkpoint=old, log_key=log_key)
    if as_json:
        emit_json({"severity": p.severity, "check": p.check, "session_id": p.session_id,
                   "position": p.position, "index": p.index, "detail": p.detail}
                  for p in report.problems)
    else:
        click.echo(f"checked {report.sessions} sessions, {report.messages} messages, "
                   f"{report.calls} calls, {report.results} results: "
                   f"{len(report.errors)} errors, "
                   f"{len(report.problems) - len(report.errors)} warnings")
        for p in report.problems:
            where = ", ".join(str(x) for x in (p.session_id, p.position, p.index)
                              if x is not None)
            click.echo(visible(f"{p.severity}: [{p.check}] {where}: {p.detail}"))
        if old is not None and not any(p.check == "log" for p in report.errors):
            size = old.split("\n")[1] if old.count("\n") > 1 else "?"
            click.echo(f"the transparency log still extends the checkpoint of {size} leaves")
    if not report.ok:
        sys.exit(1)

#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [sessions, verify]
