"""The command line: thin, calling only the public API in ``store``.

``transcript-store`` (or ``python -m store``). Every command takes ``--db URL`` (default:
``TRANSCRIPT_STORE_URL``, else an SQLite file in the user's data directory). Errors raised on
purpose (``StoreError``) print as one line, ``error: <message>``, and exit 1, unless
``--traceback`` asks for the traceback; usage errors exit 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson
from rich.console import Console
from rich.table import Table

import store

F = TypeVar("F", bound=Callable[..., Any])


class _Group(click.Group):
    """A group that turns ``StoreError`` into one line and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except store.StoreError as exc:
            if ctx.find_root().meta.get("traceback"):
                raise
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)


def db_option(function: F) -> F:
    """``--db URL`` on a command."""
    return click.option(
        "--db", "db_url", metavar="URL", envvar="TRANSCRIPT_STORE_URL",
        help="Database URL (sqlite:///path or postgresql+psycopg://...). "
             "Default: $TRANSCRIPT_STORE_URL, else a file in your data directory.",
    )(function)


def console() -> Console:
    """A console for human output (tables, transcripts); wide when piped, so that tables
    do not fold ids and names into pieces."""
    return Console(soft_wrap=False, width=None if sys.stdout.isatty() else 200)


def emit_json(rows: Iterable[Mapping[str, Any]]) -> None:
    """``--json`` output: one compact JSON object per line."""
    for row in rows:
        click.echo(orjson.dumps(row, default=str).decode())


def open_store(db_url: str | None, *, read_only: bool = False) -> store.TranscriptStore:
    """Open the store for a command. Read-only commands open read-only when the database
    exists, so that auditors need no write access."""
    if read_only:
        try:
            return store.TranscriptStore.open(db_url, read_only=True)
        except store.ConfigurationError:
            pass  # no database yet: open normally, which creates it at head
    return store.TranscriptStore.open(db_url)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(store.__version__, "-V", "--version", prog_name="transcript-store")
@click.option("--traceback", is_flag=True, help="Show the full traceback on errors.")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """Keep LLM agent session transcripts: messages, tool calls, results."""
    ctx.meta["traceback"] = traceback


# -- db -------------------------------------------------------------------------------------------


@cli.group(cls=_Group)
def db() -> None:
    """Schema administration: upgrade, current revision, drift check."""


@db.command("upgrade")
@db_option
@click.option("--revision", default="head", show_default=True, help="Target revision.")
def db_upgrade(db_url: str | None, revision: str) -> None:
    """Create or upgrade the database schema."""
    status = store.upgrade_database(db_url, revision)
    click.echo(f"{status.url}: at revision {status.current} (head {status.head})")
    _echo_distribution(status)


def _echo_distribution(status: store.SchemaStatus) -> None:
    """The Citus layout line, on Citus only."""
    line = status.describe_distribution()
    if line is not None:
        click.echo(f"{status.url}: {line}")


@db.command("current")
@db_option
def db_current(db_url: str | None) -> None:
    """Show the database's schema revision; exit 1 when it is not at head."""
    status = store.database_status(db_url)
    state = "at head" if status.at_head else "NOT at head: run `transcript-store db upgrade`"
    click.echo(f"{status.url}: revision {status.current or 'none'}, head {status.head} ({state})")
    _echo_distribution(status)
    if not status.at_head:
        sys.exit(1)


@db.command("check")
@db_option
def db_check(db_url: str | None) -> None:
    """Check that the schema is at head and matches the code; exit 1 otherwise."""
    status = store.check_database(db_url)
    click.echo(f"{status.url}: revision {status.current}, schema matches the code")
    _echo_distribution(status)


@db.command("distribute")
@db_option
@click.option("--shard-count", type=click.IntRange(1, 64000), default=None,
              help=f"Shards per distributed table [default: {store.DEFAULT_SHARD_COUNT}]; "
                   "ignored once sessions is distributed.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per table.")
def db_distribute(db_url: str | None, shard_count: int, as_json: bool) -> None:
    """Scale out on Citus: distribute the tables by session_id (co-located) and make the
    alias table a reference table. Run on the coordinator after `db upgrade`; running it
    again changes nothing."""
    report = store.distribute_database(db_url, shard_count=shard_count)
    if as_json:
        emit_json({"table": a.table, "kind": a.kind, "outcome": a.outcome, "rows_moved": a.rows}
                  for a in report.actions)
        return
    for action in report.actions:
        form = ("reference table (a copy on every node)" if action.kind == "reference"
                else f"distributed by session_id, {report.shard_count} shards")
        if action.outcome == "already":
            click.echo(f"{action.table}: already {form}")
        else:
            click.echo(f"{action.table}: now {form}, {action.rows} rows moved")
    for note in report.notes:
        click.echo(f"note: {note}")
    verdict = "distributed" if report.changed else "already distributed, nothing changed"
    click.echo(f"{report.url}: {verdict}; {report.state.describe()}")


# -- demo (the main job) --------------------------------------------------------------------------


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


@cli.command()
@db_option
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per stored tool call.")
def demo(db_url: str | None, paths: tuple[Path, ...], as_json: bool) -> None:
    """Store the bundled example sessions (or PATHS, one session per file) and print them.

    Each file becomes a session named after it; each record is keyed by file and line, so
    running it again stores nothing twice.
    """
    sources = (
        [(p.name, p.read_text(encoding="utf-8")) for p in paths] if paths else _example_files()
    )
    with store.TranscriptStore.open(db_url) as opened:
        summary = Table(title=f"stored in {opened.url}")
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
            summary.add_row(session_id, str(len(result.stored)), str(len(result.skipped_keys)),
                            str(len(calls)), str(invalid))
            rows.extend(_call_row(session_id, c) for c in calls)
    if as_json:
        for row in rows:
            click.echo(orjson.dumps(row).decode())
        return
    out = console()
    out.print(summary)
    table = Table(title=f"{len(rows)} tool calls")
    for column in ("session", "pos", "id", "name", "raw name", "status", "arguments", "result"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row["session"], str(row["position"]), row["id"], row["name"],
                      row["raw_name"] or "", row["status"], row["arguments"],
                      (row["result"] or "-")[:60])
    out.print(table)


def _call_row(session_id: str, loaded: store.LoadedCall) -> dict[str, Any]:
    call = loaded.call
    status = "ok" if isinstance(call, store.ToolCall) else call.error_kind
    return {
        "session": session_id,
        "position": loaded.position,
        "id": call.id,
        "name": call.name,
        "raw_name": call.raw_name,
        "status": status,
        "arguments": call.arguments_text,
        "result": loaded.result.text if loaded.result is not None else None,
    }


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="transcript-store")


# The other command groups attach themselves to ``cli`` when imported.
from store.cli import audit, export, imports, serve, sessions  # noqa: E402,F401

if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
