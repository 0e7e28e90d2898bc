"""``search``: full-text search over every message (``TranscriptStore.search_messages``)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import click

import store
from store.cli._common import (
    _folder,
    count,
    db_option,
    emit_json,
    local_time,
    open_store,
    resolve_session,
    safe_markup,
    time_options,
)

__all__ = ["COMMANDS", "search"]

#: How a matched word is drawn in the table (rich markup around escaped text).
HIT_STYLE = "bold yellow"
_SPACES = re.compile(r"\s+")
#: The roles --role takes (``store.core.textquery.SEARCH_ROLES``, without importing it here).
ROLES = ("user", "assistant", "system", "developer", "tool", "thinking")


@click.command("search")
@click.argument("text")
@db_option
@click.option("--agent", metavar="NAME",
              help="Only sessions recorded by this agent (claude-code, codex, gemini-cli ...).")
@click.option("--project", "--cwd", "project", callback=_folder, metavar="FOLDER",
              help="Only sessions run in this folder or below it (. for here).")
@time_options("Messages")
@click.option("--role", type=click.Choice(ROLES),
              help="Only this part of messages: a role's text, thinking (reasoning) or tool "
                   "(calls' arguments and results).")
@click.option("--session", help="One session (its id or a unique prefix of it).")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True,
              help="At most this many messages (1-1000).")
@click.option("--offset", type=count(), default=0)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per message found.")
def search(text: str, db_url: str | None, agent: str | None, project: str | None,
           since: datetime | None, until: datetime | None, role: str | None,
           session: str | None, limit: int, offset: int, as_json: bool) -> None:
    """Find the messages whose text holds TEXT: prompts, answers, reasoning, tool arguments
    and results, best match first (one row per message: the part that matched best).

    \b
    TEXT, one argument (quote it):
      lm studio        every word must be in the message (AND, OR, NOT are plain words)
      "lm studio"      a phrase: the words together, in this order
      stud*            a prefix (letters and digits before the *)
      -ollama          leave out messages holding it (a TEXT starting with -: put -- first)
    Case does not matter, accents do; punctuation separates words. An unclosed quote, a *
    elsewhere, or nothing left to find is an error naming it.

    Secrets are redacted in the index, so a secret's value finds nothing (`calls search
    --secret` finds the calls that used one). Reads only: when messages were stored since
    the last `import`, `watch` pass or `db index`, the index is searched as it is and a
    note on stderr says how many sessions are behind.
    """
    found = _lite_search(db_url, text, agent=agent, project=project, since=since,
                         until=until, role=role, session=session, limit=limit, offset=offset)
    if found is not None:  # (an SQLite file or a PostgreSQL database at head, its driver)
        hits, behind = found
    else:
        with open_store(db_url, read_only=True) as opened:
            if session is not None:
                session = resolve_session(opened, session)
            hits = opened.search_messages(text, agent=agent, project=project, since=since,
                                          until=until, role=role, session_id=session,
                                          limit=limit, offset=offset)
            behind = opened.messages_behind()
    if behind:
        click.echo(f"note: {behind:,} session{'s' if behind != 1 else ''} ha"
                   f"{'ve' if behind != 1 else 's'} messages not indexed yet (run "
                   "`transcript-store db index` to search them)", err=True)
    if as_json:
        emit_json(hit_json(hit) for hit in hits)
        if not hits:
            click.echo("no messages match", err=True)
        return
    if not hits:
        click.echo(f"no messages match {text!r}" + (" on this page" if offset else ""))
        return
    from store.cli._common import console

    out = console()
    drawn = drawn_hits(out, hits, offset)
    out.print(drawn if drawn is not None else hit_table(hits, offset))
    if len(hits) == limit:
        click.echo(f"showing {offset + 1}-{offset + len(hits)}; --offset {offset + limit} for "
                   "more", err=True)


def _lite_search(db_url: str | None, text: str, *, agent: str | None, project: str | None,
                 since: datetime | None, until: datetime | None, role: str | None,
                 session: str | None, limit: int, offset: int
                 ) -> tuple[list[store.MessageHit], int] | None:
    """The hits and the sessions behind, read on the database's own driver with the store's
    statements (``store.db.index.message_sql``; no SQLAlchemy, no schema check beyond the
    revision); ``None`` off that path (the store answers, and words every error)."""
    from store.db.index.message_sql import index_present, messages_behind, search_messages
    from store.db.reading.lite import read_lite
    from store.db.reading.pgread import driver_of
    from store.db.schema.revisions import default_url

    def work(conn: Any, session_id: str | None) -> tuple[list[store.MessageHit], int] | None:
        driver = driver_of(conn)
        if not index_present(driver):
            return None
        return (search_messages(driver, text, agent=agent, project=project, since=since,
                                until=until, role=role, session_id=session_id, limit=limit,
                                offset=offset, present=True),
                messages_behind(driver))

    return read_lite(db_url or default_url(), session, work)


def hit_json(hit: store.MessageHit) -> dict[str, Any]:
    """A hit in the JSON field names of docs/json/message-hit.schema.json."""
    return {"session_id": hit.session_id, "position": hit.position, "role": hit.role,
            "created_at": hit.created_at, "agent": hit.agent, "cwd": hit.cwd,
            "title": hit.title, "snippet": hit.plain_snippet,
            "highlights": [list(span) for span in hit.highlights()], "rank": hit.rank}


def snippet_markup(hit: store.MessageHit) -> str:
    """The snippet as rich markup on one line: every piece escaped (stored text is never
    read as markup), the matched words in :data:`HIT_STYLE`."""
    out: list[str] = []
    for piece, matched in hit.segments():
        shown = safe_markup(_SPACES.sub(" ", piece))
        out.append(f"[{HIT_STYLE}]{shown}[/]" if matched else shown)
    return "".join(out).strip()


#: The hit table's columns and sides (:func:`hit_table`, :func:`drawn_hits`).
_COLUMNS = ("session", "pos", "time", "agent", "role", "snippet")
_SIDES = ("left", "right", "left", "left", "left", "left")
#: The narrowest snippet column :func:`drawn_hits` folds into (narrower: rich lays it out).
_FOLD_ROOM = 8


def drawn_hits(out: Any, hits: list[store.MessageHit], offset: int) -> Any:
    """To a pipe, the table :func:`hit_table` draws, without rich (a test compares both):
    where the snippets are wider than the room the other columns leave, rich narrows the
    snippet column alone to that room and folds them (:func:`store.cli.plain.folded`).
    ``None`` for a terminal, and where rich must lay it out (a snippet of wide characters
    to fold, a room under :data:`_FOLD_ROOM` columns)."""
    from store.cli.drawn import draw_table
    from store.cli.plain import PlainConsole, cells, folded, markup_plain

    if not isinstance(out, PlainConsole):
        return None
    rows: list[tuple[list[str], str | None]] = []
    for hit in hits:
        snippet = markup_plain(snippet_markup(hit))
        if snippet is None:
            return None
        row = [_prefix(hit.session_id), str(hit.position), local_time(hit.created_at),
               hit.agent or "-", hit.role, snippet]
        if not all(cell.isprintable() for cell in row):
            return None  # (rich drops or expands a control code)
        rows.append((row, None))
    title = f"messages {offset + 1}-{offset + len(hits)}"
    widths = [max(map(cells, [name, *(row[i] for row, _ in rows)]))
              for i, name in enumerate(_COLUMNS)]
    room = out.width - (sum(widths[:-1]) + 3 * len(widths) + 1)  # (the snippet's)
    if widths[-1] <= room:
        return draw_table(out, title, _COLUMNS, _SIDES, rows)
    if room < _FOLD_ROOM:
        return None
    for row, _ in rows:
        lines = folded(row[-1], room)
        if lines is None:
            return None
        row[-1] = "\n".join(lines)
    return draw_table(out, title, _COLUMNS, _SIDES, rows, widths=[*widths[:-1], room])


def hit_table(hits: list[store.MessageHit], offset: int) -> Any:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"messages {offset + 1}-{offset + len(hits)}")
    for name, side in zip(_COLUMNS[:-1], _SIDES[:-1], strict=True):
        table.add_column(name, justify=side, no_wrap=True)  # type: ignore[arg-type]
    table.add_column(_COLUMNS[-1], overflow="fold", ratio=1)
    for hit in hits:
        table.add_row(Text(_prefix(hit.session_id)), str(hit.position),
                      local_time(hit.created_at), Text(hit.agent or "-"), hit.role,
                      Text.from_markup(snippet_markup(hit), emoji=False))
    return table


def _prefix(session_id: str) -> str:
    from store.cli._common import visible

    shown = visible(session_id)
    return shown if len(shown) <= 12 else shown[:12] + "…"


COMMANDS: list[click.Command] = [search]
