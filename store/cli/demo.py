"""CLI: ``demo``, the main job: store the bundled example sessions and print them."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import click
import orjson

import store
from store.cli._common import (
    console,
    db_option,
    emit_json,
    open_store,
    safe_markup,
    visible,
    wide_option,
)
from store.cli.fitted import Column, fitted_table


def _example_files() -> Iterator[tuple[str, str]]:
    folder = resources.files("store").joinpath("examples")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".json", ".jsonl")):
            yield entry.name, entry.read_text(encoding="utf-8")


def _session_records(name: str, text: str) -> tuple[list[Any], list[str], dict[str, Any]]:
    """Records of an example file, their keys (file:line), and session metadata."""
    records: list[Any] = []
    keys: list[str] = []
    meta: dict[str, Any] = {}
    lines = text.splitlines() if name.endswith(".jsonl") else [text]
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record = orjson.loads(line)
        if isinstance(record, dict) and record.get("type") == "session":
            meta = {k: record.get(k) for k in ("provider", "model", "cwd")}
            continue
        records.append(record)
        keys.append(f"{name}:{number}")
    return records, keys, meta


@click.command()
@db_option
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per stored tool call.")
@wide_option
def demo(db_url: str | None, paths: tuple[Path, ...], as_json: bool, wide: bool) -> None:
    """Store the bundled example sessions (or PATHS, one session per file) and print them.

    Each file becomes a session named after it; each record is keyed by file and line, so
    running it again stores nothing twice.
    """
    from rich.table import Table

    sources = (
        [(p.name, p.read_text(encoding="utf-8")) for p in paths] if paths else _example_files()
    )
    with open_store(db_url) as opened:
        url = opened.url
        summary = Table()  # the URL is printed on its own line: a table title wraps mid-URL
        for column in ("session", "new messages", "already stored", "calls", "invalid"):
            summary.add_column(column)
        rows: list[dict[str, Any]] = []
        for name, text in sources:
            records, keys, meta = _session_records(name, text)
            session_id = Path(name).stem
            result = opened.append(session_id, records, keys=keys, title=name, **meta)
            transcript = opened.load(session_id)
            calls = list(transcript.calls())
            invalid = sum(1 for c in calls if isinstance(c.call, store.InvalidToolCall))
            summary.add_row(safe_markup(session_id), str(len(result.stored)),
                            str(len(result.skipped_keys)), str(len(calls)), str(invalid))
            rows.extend(_call_row(session_id, c) for c in calls)
    if as_json:
        emit_json(rows)
        return
    out = console(wide)
    click.echo(visible(f"stored in {url}"))
    out.print(summary)
    columns = [Column("session", flexible=True), Column("pos", justify="right", keep=True),
               Column("call", flexible=True), Column("tool"), Column("raw tool"),
               Column("args status"), Column("result status"),
               Column("arguments", flexible=True, minimum=12),
               Column("result", flexible=True, minimum=12)]
    cells = [[row["session_id"], f"{row['position']}.{row['call_index']}", row["call_id"],
              row["tool"], row["raw_tool"] or "", row["arguments_status"],
              row["result_status"], row["arguments"],
              row["result"] or "-"] for row in rows]
    out.print(fitted_table(f"{len(rows)} tool calls", columns, cells, wide))


def _call_row(session_id: str, loaded: store.LoadedCall) -> dict[str, Any]:
    call = loaded.call
    status = call.status
    is_error = loaded.result.is_error if loaded.result is not None else None
    return {  # the names of docs/json/call.schema.json
        "session_id": session_id,
        "position": loaded.position,
        "call_index": loaded.index,
        "call_id": call.id,
        "tool": call.name,
        "raw_tool": call.raw_name,
        "arguments_status": store.arguments_status(status),
        "result_status": store.result_status(is_error),
        "status": status,  # (deprecated: arguments_status, as stored; kept for one release)
        "arguments": call.arguments_text,
        "result": loaded.result.text if loaded.result is not None else None,
        "result_is_error": is_error,
    }


COMMANDS: list[click.Command] = [demo]
