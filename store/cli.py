"""The command line: thin, calling only the public API in ``store``.

``transcript-store`` (or ``python -m store``). Errors raised on purpose (``StoreError``) print as
one line, ``error: <message>``, and exit 1, unless ``--traceback`` asks for the traceback;
usage errors exit 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import click
import orjson
from rich.console import Console
from rich.table import Table

import store

_EXAMPLES = "examples"


class _Group(click.Group):
    """A group that turns ``StoreError`` into one line and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except store.StoreError as exc:
            if ctx.meta.get("traceback"):
                raise
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(store.__version__, "-V", "--version", prog_name="transcript-store")
@click.option("--traceback", is_flag=True, help="Show the full traceback on errors.")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """Keep LLM agent session transcripts: messages, tool calls, results."""
    ctx.meta["traceback"] = traceback


def _example_files() -> Iterator[tuple[str, str]]:
    folder = resources.files("store").joinpath(_EXAMPLES)
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".json", ".jsonl")):
            yield entry.name, entry.read_text(encoding="utf-8")


def _records(name: str, text: str) -> Iterator[tuple[str, Any]]:
    if name.endswith(".jsonl"):
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                yield f"{name}:{number}", orjson.loads(line)
    else:
        yield name, orjson.loads(text)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per tool call.")
def demo(paths: tuple[Path, ...], as_json: bool) -> None:
    """Normalize example records (the bundled ones, or PATHS) and print their tool calls."""
    sources = (
        [(p.name, p.read_text(encoding="utf-8")) for p in paths] if paths else _example_files()
    )
    rows: list[dict[str, Any]] = []
    for name, text in sources:
        for where, record in _records(name, text):
            try:
                messages = store.normalize_payload(record)
            except store.RecordError as exc:
                raise store.RecordError(f"{where}: {exc}") from exc
            for message in messages:
                for call in message.tool_calls:
                    rows.append(_call_row(where, message, call))
    if as_json:
        for row in rows:
            click.echo(orjson.dumps(row).decode())
        return
    table = Table(title=f"{len(rows)} tool calls")
    for column in ("record", "shape", "id", "name", "raw name", "status", "arguments"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            row["record"], row["shape"], row["id"] or "-", row["name"], row["raw_name"] or "",
            row["status"], row["arguments"],
        )
    Console(soft_wrap=False).print(table)


def _call_row(where: str, message: store.Message, call: store.ToolCall | store.InvalidToolCall
              ) -> dict[str, Any]:
    status = "ok" if isinstance(call, store.ToolCall) else call.error_kind
    return {
        "record": where,
        "shape": call.source or message.source,
        "id": call.id,
        "name": call.name,
        "raw_name": call.raw_name,
        "status": status,
        "arguments": call.arguments_text,
    }


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="transcript-store")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
