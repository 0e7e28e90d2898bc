"""CLI: a session's lineage: ``sessions tree`` and the lines ``sessions show`` prints above a
transcript (edge layer; public API only)."""

from __future__ import annotations

from typing import Any

import click

import store
from store.cli._common import (
    console,
    db_option,
    emit_json,
    local_time,
    redaction_options,
    redactor_from,
)
from store.cli._common import safe_markup as escape


def session_json(info: store.SessionInfo) -> dict[str, Any]:
    """A session in the JSON names of docs/json/session.schema.json."""
    return {
        "session_id": info.session_id, "title": info.title, "agent": info.agent,
        "provider": info.provider, "model": info.model, "cwd": info.cwd,
        "tags": list(info.tags), "messages": info.message_count, "calls": info.call_count,
        "started_at": info.started_at, "last_activity_at": info.last_active_at,
        # (deprecated: the same value as last_activity_at, kept for one release)
        "updated_at": info.last_active_at,
        "stored_at": info.created_at,
        "parent_session_id": info.parent.parent_session_id if info.parent else None,
        "lineage": info.parent.kind if info.parent else None,
        "parent_call_id": info.parent.parent_call_id if info.parent else None,
    }


def _title(info: store.SessionInfo, redactor: store.Redactor | None) -> str:
    title = info.title or ""
    if redactor is not None:
        title, _ = redactor.redact(title)
    return str(title)


def _how(info: store.SessionInfo) -> str:
    """``subagent (call toolu_1)``: how a session came from its parent."""
    if info.parent is None:
        return ""
    call = f" (call {info.parent.parent_call_id})" if info.parent.parent_call_id else ""
    return f"{info.parent.kind}{call}"


def lineage_lines(ancestors: list[store.SessionInfo], tree: store.SessionTree,
                  redactor: store.Redactor | None = None) -> list[str]:
    """Rich-markup lines: the session's parent (and theirs), then the sessions below it with
    their kind, the parent call and their call counts; none when it has neither."""
    lines: list[str] = []
    me = tree.session
    if me.parent is not None:
        parent = me.parent.parent_session_id
        stored = {a.session_id: a for a in ancestors}
        shown = (f"  {escape(_title(stored[parent], redactor))}" if parent in stored
                 else "  [dim](not stored)[/dim]")
        lines.append(f"[dim]{escape(_how(me))} of[/dim] [bold]{escape(parent)}[/bold]{shown}")
        for above in ancestors[1:]:
            lines.append(f"[dim]  which descends from[/dim] {escape(above.session_id)}  "
                         f"{escape(_title(above, redactor))}")
    if tree.children:
        total = sum(node.session.call_count or 0 for _, node in tree.walk())
        lines.append(f"[dim]below it: {len(tree.session_ids()) - 1} sessions; "
                     f"{me.call_count or 0} calls here, {total} with them "
                     "(`calls search --session ID --with-children`)[/dim]")
    for depth, node in tree.walk():
        if depth == 0:
            continue
        info = node.session
        lines.append(f"{'  ' * depth}└ [cyan]{escape(_how(info))}[/cyan] "
                     f"{escape(info.session_id)}  {escape(_title(info, redactor))}  "
                     f"[dim]{info.message_count} messages, {info.call_count or 0} calls[/dim]")
    return lines


@click.command("tree")
@db_option
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per session: its ancestors (negative depth), itself "
                   "(depth 0) and every session below it.")
@redaction_options
def sessions_tree(db_url: str | None, session_id: str, as_json: bool, redact: bool,
                  patterns: tuple[str, ...]) -> None:
    """Show a session's lineage: the sessions it descends from and every session below it
    (subagents, forks, continuations), with the parent call that spawned each subagent and
    each session's calls."""
    from store.audit.reader import ReadOnlyStore

    redactor = redactor_from(redact, patterns)
    with ReadOnlyStore.open(db_url) as opened:  # (the stdlib driver where it can)
        session_id = opened.resolve_session_id(session_id)
        ancestors = opened.session_ancestors(session_id)
        tree = opened.session_tree(session_id)
    nodes = [(-n, info) for n, info in reversed(list(enumerate(ancestors, 1)))]
    nodes += [(depth, node.session) for depth, node in tree.walk()]
    if as_json:
        rows = []
        for depth, info in nodes:
            row = {**session_json(info), "depth": depth}
            if redactor is not None:
                row["title"], _ = redactor.redact(row["title"])
                row["cwd"], _ = redactor.redact(row["cwd"])
            rows.append(row)
        emit_json(rows)
        return
    out = console()
    for depth, info in nodes:
        indent = "  " * (depth + len(ancestors))
        head = f"[bold]{escape(info.session_id)}[/bold]" if depth == 0 \
            else escape(info.session_id)
        how = f"[cyan]{escape(_how(info))}[/cyan] " if info.parent and depth > 0 else ""
        calls = f"  {info.call_count} calls" if info.call_count is not None else ""
        out.print(f"{indent}{how}{head}  {escape(_title(info, redactor))}  "
                  f"[dim]{escape(info.agent or '')} {info.message_count} messages{calls} "
                  f"{local_time(info.last_active_at)}[/dim]")
