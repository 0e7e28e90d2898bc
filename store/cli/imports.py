"""CLI: ``import PATH...`` (edge layer; public API only)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

import store
from store.cli._common import (
    confirmed,
    count,
    db_option,
    emit_json,
    open_store,
    rich_console,
    safe_markup,
    verbosity,
    visible,
)
from store.cli.rules import RulesOnImport, config_option, read_config, rules_check_option


@click.command("import")
@db_option
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(store.IMPORT_FORMATS),
              help="The files' format (default: detected per file).")
@click.option("--settle", type=float, default=300.0, show_default=True,
              help="Seconds unchanged after which a file counts as complete (0: every file).")
@click.option("--max-file-mib", type=count(1), default=256, show_default=True,
              help="Refuse a larger file (MiB): an import holds one file's messages in "
                   "memory, about seven times its size.")
@click.option("--workers", type=count(0), default=0,
              help="Processes parsing files while this one stores them, then making the "
                   "search index's texts while it writes them (0: the cores, or "
                   "$TRANSCRIPT_STORE_IMPORT_WORKERS; 1: no worker). Stores the same.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="The summary as one JSON object.")
@click.option("--yes", "-y", is_flag=True,
              help="Without PATHS: import the agents' folders found without asking.")
@click.option("--reread", is_flag=True,
              help="Read again whole the source files still on disk (without PATHS: every "
                   "file the store was imported from) and store what the current readers "
                   "give that is not stored yet.")
@click.option("--diff", is_flag=True,
              help="With --reread: store nothing; report per session and field (messages, "
                   "calls, title, model) where what is stored differs from what the current "
                   "reader gives.")
@click.option("--explain", is_flag=True,
              help="Store nothing: for one FILE, say which agent claimed it (confidence, "
                   "runner-up) and what each kind of record in it became.")
@rules_check_option
@config_option
def import_command(db_url: str | None, paths: tuple[Path, ...], fmt: str | None,
                   max_file_mib: int, settle: float, workers: int, quiet: bool, as_json: bool,
                   yes: bool,
                   reread: bool, diff: bool, explain: bool, rules_check: bool,
                   config_file: Path | None) -> None:
    """Import agent session files and directories (recursively, *.json and *.jsonl, and the
    agents' databases crush.db, opencode.db, sessions.db).

    Formats: OpenAI Chat, Responses, Anthropic message lists, Claude Code, Codex, Gemini CLI,
    Kward, Qwen Code, Kimi CLI, Copilot CLI, Cline, Roo Code and OpenHands sessions; Crush,
    OpenCode and Goose SQLite databases (read read-only, while the agent writes). Importing
    again adds only what is new. Exit 1 when a line or a file could not be imported (each is
    reported with its file and line).

    Without PATHS: every supported agent's own session folders found on this machine (each
    agent's default folder, or where its own variable moves it: $CLAUDE_CONFIG_DIR,
    $CODEX_HOME, $GEMINI_CLI_HOME ...; docs/agents.md lists them) are listed, then imported
    once you confirm (--yes: without asking). A folder given (a backup of a home folder) is
    searched for the agents' homes too, dot-directories included (.claude, .codex, .gemini
    ...). To keep an archive as the agents write, use `transcript-store watch`.

    Files that fail for the same reason are grouped into one line with a count;
    `transcript-store -v import` lists each of them.

    With --rules-check (or [rules] on_import = true in --config), the rules run over the
    calls this import stored and their findings are saved (rules findings lists them).

    Records of a kind their agent's reader has never seen are a warning, with their count.
    `import --explain FILE` opens no store and writes nothing: it prints the agent that
    claimed the file (its confidence, and the runner-up), its sessions, and per record kind
    what became of the records (stored, merged into a message, read, skipped, not
    understood, held back).
    """
    if explain:
        _explain(paths, fmt, settle, max_file_mib, as_json)
        return
    if diff and not reread:
        raise click.UsageError("--diff goes with --reread")
    if reread:
        paths = _reread_paths(db_url, paths)
        if diff:
            _reread_diff(db_url, paths, fmt, max_file_mib, as_json)
            return
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.table import Table

    checker = RulesOnImport(read_config(config_file), rules_check)
    if not paths and not reread:
        paths = _offer_agent_folders(yes)
    out = rich_console()  # (given to rich's progress bar)
    with open_store(db_url) as opened:
        checker.mark(opened)
        progress = Progress(TextColumn("{task.description}"), BarColumn(),
                            TextColumn("{task.fields[files]}"), TimeRemainingColumn(),
                            console=out, transient=True, disable=quiet or as_json)
        with progress:
            task = progress.add_task("importing", total=None, files="")

            def show(p: store.ImportProgress) -> None:
                progress.update(task, total=p.bytes_total or None, completed=p.bytes_done,
                                files=f"{p.files_done}/{p.files_total} files",
                                description=(safe_markup(p.current.name) if p.current
                                             else "done"))

            summary = store.import_paths(opened, paths, format=fmt, settle=settle,
                                         progress=show, max_file_bytes=max_file_mib << 20,
                                         reread=reread, workers=workers or None)
            # The search index catches up once, in bulk, after the run (not per append).
            progress.update(task, total=None, completed=0, files="",
                            description="indexing for search")

            def indexed(done: store.IndexUpdate, waiting: int) -> None:
                progress.update(task, total=waiting, completed=done.sessions,
                                files=f"{done.sessions}/{waiting} sessions",
                                description="indexing for search")

            index = opened.update_search_index(progress=indexed, workers=workers or None)
            if checker.active:
                progress.update(task, total=None, completed=0, files="",
                                description="checking the rules")
            findings = checker.check(opened)
        url = opened.url
    counts = (("files", summary.files), ("unchanged files", summary.unchanged),
              ("sessions", summary.sessions),
              ("messages added", summary.messages_added),
              ("already stored", summary.messages_already_stored),
              ("calls", summary.calls), ("invalid calls", summary.invalid_calls),
              ("skipped lines", summary.skipped_lines), ("deferred", len(summary.deferred)),
              ("problems", len(summary.problems)), ("failed files", len(summary.failed_files)),
              ("rewritten files", len(summary.diverged)),
              ("indexed for search", f"{index.calls} calls, {index.results} results, "
                                     f"{index.messages} messages ({index.seconds:.2f} s)"),
              *((("findings", findings),) if findings is not None else ()))
    if as_json:
        emit_json([{**{k.replace(" ", "_"): v for k, v in counts
                       if k not in ("problems", "indexed for search")},
                    "indexed_calls": index.calls, "indexed_results": index.results,
                    "skipped": dict(summary.skipped),
                    "problems": [str(p) for p in summary.problems],
                    "failed": [str(f) for f in summary.failed_files],
                    "diverged": [str(d) for d in summary.diverged],
                    "unknown_kinds": dict(summary.unknown_kinds)}])
    else:
        click.echo(visible(f"imported into {url}"))  # its own line: a title wraps mid-URL
        table = Table(show_header=False)
        for label, value in counts:
            table.add_row(label, str(value))
        out.print(table)
        for reason, count in sorted(summary.skipped.items()):
            click.echo(visible(f"skipped {count} x {reason}"))
    for kind, count in sorted(summary.unknown_kinds.items()):
        click.echo(visible(f"warning: {count} records of a kind the reader has never seen: "
                           f"{kind} (import --explain FILE says what became of them)"), err=True)
    for problem in summary.problems:
        click.echo(visible(f"problem: {problem}"), err=True)
    _report_failed(summary, verbosity() > 0)
    for diverged in summary.diverged:
        click.echo(visible(f"rewritten: {diverged}"), err=True)
    if summary.failed_files or summary.problems:
        sys.exit(1)

def _report_failed(summary: store.ImportSummary, verbose: bool) -> None:
    """One line per file that was not imported; files that failed for the same reason are
    grouped into one line with a count, unless ``verbose``."""
    by_reason: dict[str, list[Any]] = {}
    for entry in summary.failed_files:
        by_reason.setdefault(entry.error, []).append(entry)
    for reason, entries in by_reason.items():
        if verbose or len(entries) == 1:
            for entry in entries:
                click.echo(visible(f"failed: {entry}"), err=True)
        else:
            click.echo(visible(f"failed: {len(entries)} files: {reason} (-v lists them: "
                               "transcript-store -v import ...)"), err=True)


def _offer_agent_folders(yes: bool) -> tuple[Path, ...]:
    found = store.agent_folders()
    if not found:
        raise click.UsageError(
            "no PATHS given and no agent session folder found (looked for "
            f"{store.describe_agent_folders()}): give the files or folders to import")
    click.echo("agent session folders found:", err=True)
    for agent, folder in found:
        files = 1 if folder.is_file() else sum(
            1 for f in folder.rglob("*") if f.suffix in (".json", ".jsonl", ".db"))
        click.echo(f"  {agent:12} {folder}  ({files} files)", err=True)
    if not yes:
        confirmed("import them?", default=True, declined="not confirmed: nothing imported")
    return tuple(folder for _, folder in found)


#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [import_command]


def _explain(paths: tuple[Path, ...], fmt: str | None, settle: float, max_file_mib: int,
             as_json: bool) -> None:
    """``import --explain FILE``: one file's read, nothing stored (see the command's help)."""
    if len(paths) != 1 or not paths[0].is_file():
        raise click.UsageError("--explain takes one FILE (an agent's session file or "
                               "database)")
    try:
        found = store.explain_file(paths[0], fmt, settle=settle,
                                   max_file_bytes=max_file_mib << 20)
    except store.ImportFileError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit_json([found.as_json()])
        return
    runner = found.runner_up
    how = ("given with --format" if found.forced else
           f"claimed with confidence {found.confidence:.2f}")
    click.echo(visible(f"{found.path}: {found.format} ({how}; runner-up: "
                       + (f"{runner.format} {runner.confidence:.2f})" if runner else "none)")))
    parsed = found.parsed
    click.echo(visible(f"{len(parsed.sessions)} sessions, {parsed.messages} messages"))
    for session in parsed.sessions:
        click.echo(visible(f"  {session.session_id}: {len(session.items)} messages"))
    click.echo("records by kind:")
    for kind, counts in parsed.kinds.items():
        told = ", ".join(f"{n} {outcome}" for outcome in store.RECORD_OUTCOMES
                         if (n := counts.get(outcome)))
        unknown = " (a kind the reader has never seen)" if kind in parsed.unknown_kinds else ""
        click.echo(visible(f"  {kind}: {told}{unknown}"))
    for reason, n in sorted(parsed.skipped.items()):
        click.echo(visible(f"skipped {n} x {reason}"))
    for problem in parsed.problems:
        click.echo(visible(f"problem: {problem}"))
    if parsed.deferred:
        click.echo(f"held back: {len(parsed.deferred)} (possibly still being written)")
    for kind, n in sorted(parsed.unknown_kinds.items()):
        click.echo(visible(f"warning: {n} records of kind {kind}, which the {found.format} "
                           "reader has never seen"), err=True)


def _reread_paths(db_url: str | None, paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """The files ``--reread`` reads: those given, else every source file of the store still
    on disk (read-only: finding them writes nothing)."""
    if paths:
        return paths
    with open_store(db_url, read_only=True) as opened:
        states = opened.source_states()
    return tuple(Path(p) for p, state in sorted(states.items())
                 if state.gone_at is None and Path(p).is_file())


def _reread_diff(db_url: str | None, paths: tuple[Path, ...], fmt: str | None,
                 max_file_mib: int, as_json: bool) -> None:
    """``import --reread --diff``: what the current readers give against what is stored,
    per session and field; nothing is written (the store is opened read-only)."""
    changes: list[Any] = []
    failed: list[str] = []
    with open_store(db_url, read_only=True) as opened:
        for found in store.iter_import_files(paths):
            if not isinstance(found, Path):
                failed.append(str(found))
                continue
            try:
                parsed = store.read_sessions(found, fmt, settle=0,
                                             max_file_bytes=max_file_mib << 20)
            except store.ImportFileError as exc:
                failed.append(str(exc))
                continue
            for session in parsed.sessions:
                try:
                    info = opened.get_session(session.session_id)
                except store.SessionNotFound:
                    changes += store.session_changes(session, None)
                    continue
                loaded = opened.load(session.session_id)
                calls = sum(1 for m in loaded.messages for p in m.message.parts
                            if isinstance(p, store.ToolCall | store.InvalidToolCall))
                changes += store.session_changes(session, store.StoredSession(
                    len(loaded.messages), calls, info.title, info.model))
    if as_json:
        emit_json([{"session_id": c.session_id, "field": c.field, "stored": c.stored,
                    "read": c.read} for c in changes])
    else:
        for change in changes:
            click.echo(visible(str(change)))
        click.echo(f"{len(changes)} differences in "
                   f"{len({c.session_id for c in changes})} sessions")
    for failure in failed:
        click.echo(visible(f"failed: {failure}"), err=True)
    if failed:
        sys.exit(1)
