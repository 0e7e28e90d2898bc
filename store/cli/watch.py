"""CLI: ``watch [PATHS...]`` and ``capture --hook AGENT`` (edge layer; public API only).

``watch`` keeps an archive as the agents write: each pass is an import of the folders that
reads only what is new (``store.import_paths`` with the store's per-file states) and marks
deleted source files gone; between passes it sleeps until the file system reports a change
(``watchdog``, the ``watch`` extra) or, without it, polls with a back-off. It is kill-safe:
each file's state is stored in the transaction of its last rows, and keys make a repeated
read store nothing twice.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any

import click

import store
from store.cli._common import db_option, open_store, plural, visible
from store.cli.rules import RulesOnImport, config_option, read_config, rules_check_option
from store.core.paths import expand_home

#: Seconds between polls right after a change, and at most when idle (polling back-off;
#: ``--idle`` lowers the cap): a poll pass over 150 files costs about 30 ms.
FIRST_POLL = 1.0
POLL_CAP = 10.0
#: Events are gathered this long before a pass (a burst of writes makes one pass).
_GATHER = 0.25


class _Waiter:
    """Sleeps until something under the folders changes: file-system events when
    ``watchdog`` is installed (and ``poll`` is false), else a poll interval that doubles while
    nothing changes, from :data:`FIRST_POLL` up to :data:`POLL_CAP` (or ``idle``) seconds.
    Even with events a pass runs every ``idle`` seconds (new agent folders, files that
    settled)."""

    def __init__(self, idle: float, poll: bool) -> None:
        self.idle = idle
        self.interval = FIRST_POLL
        self._changed = threading.Event()
        self._observer: Any = None
        self._watched: set[Path] = set()
        if not poll:
            try:
                from watchdog.observers import Observer
            except ImportError:
                pass
            else:
                self._observer = Observer()
                self._observer.daemon = True
                self._observer.start()

    @property
    def mode(self) -> str:
        return "file-system events" if self._observer is not None else "polling"

    def follow(self, folders: list[Path]) -> None:
        """Watch these folders (recursively) from now on; for a database file, its folder."""
        if self._observer is None:
            return
        from watchdog.events import FileSystemEvent, FileSystemEventHandler

        changed = self._changed

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type not in ("opened", "closed_no_write"):
                    changed.set()

        for folder in folders:
            # An agent's database: its folder (the commits land in its -wal beside it).
            target = folder if folder.is_dir() else folder.parent if folder.is_file() else None
            if target is None or folder in self._watched:
                continue
            try:
                try:
                    self._observer.schedule(Handler(), str(target), recursive=target == folder,
                                            event_filter=_changes())
                except TypeError:  # pragma: no cover - a watchdog without event filters
                    self._observer.schedule(Handler(), str(target), recursive=target == folder)
            except OSError:
                continue  # (an inotify watch limit ...): the idle pass still covers it
            self._watched.add(folder)

    def wait(self, stored: bool) -> None:
        if self._observer is not None:
            if self._changed.wait(self.idle):
                time.sleep(_GATHER)
            self._changed.clear()
            return
        self.interval = (FIRST_POLL if stored
                         else min(self.interval * 2, self.idle, POLL_CAP))
        time.sleep(self.interval)

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()


def _changes() -> list[Any]:
    """The events that wake a pass: every change, not a file opened or closed unwritten.
    Given to the observer, they are all the kernel reports: a pass opens every file it looks
    at, and at 44k files the observer's thread spent 2.5 CPU s per pass on the opens and
    closes of the pass itself (inotify's IN_OPEN and IN_CLOSE_NOWRITE)."""
    from watchdog import events

    return [events.FileCreatedEvent, events.FileModifiedEvent, events.FileMovedEvent,
            events.FileDeletedEvent, events.FileClosedEvent, events.DirCreatedEvent,
            events.DirModifiedEvent, events.DirMovedEvent, events.DirDeletedEvent]


def _folders(paths: tuple[Path, ...]) -> list[Path]:
    if paths:
        return list(paths)
    return [folder for _, folder in store.agent_folders()]


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # a service stop (SIGTERM) ends like Ctrl-C, with the status


@click.command("watch")
@db_option
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--once", is_flag=True, help="Catch up once and exit (for cron and scripts).")
@click.option("--settle", type=float, default=300.0, show_default=True,
              help="Seconds unchanged after which a file's unfinished last part is stored.")
@click.option("--idle", type=click.FloatRange(min=1.0), default=60.0, show_default=True,
              help="Seconds between passes at most (polling backs off up to this).")
@click.option("--poll", is_flag=True, help="Poll even when file-system events are available.")
@click.option("--install", is_flag=True,
              help="Write a user service (systemd on Linux, launchd on macOS) that runs this "
                   "watch at log-in, print how to start, stop and remove it, and exit.")
@click.option("--quiet", "-q", is_flag=True, help="No line per pass (the status still prints).")
@rules_check_option
@config_option
def watch_command(db_url: str | None, paths: tuple[Path, ...], once: bool, settle: float,
                  idle: float, poll: bool, install: bool, quiet: bool, rules_check: bool,
                  config_file: Path | None) -> None:
    """Keep an archive of the agents' sessions as they are written.

    Follows PATHS, or without them every supported agent's session folder that exists (each
    agent's default folder, or where its own variable moves it: $CLAUDE_CONFIG_DIR,
    $CODEX_HOME, $GEMINI_CLI_HOME ...; docs/agents.md lists them), and stores new messages
    as they appear: a pass reads only what changed since the last one (import and watch share
    where each file was read up to). A session whose source file is deleted stays, marked
    gone (sessions show says since when). Prints one line per pass that stored something,
    and a status when stopped (Ctrl-C). Safe to kill at any moment: a restart goes on where
    the store says, storing nothing twice.

    With --config FILE: [rules] on_import = true runs the rules over the calls each pass
    stores and saves the findings (as --rules-check does; the pass line counts them), and a
    [retention] policy is applied at the first pass and then at most once per its `every`
    (default 1d), as `prune --policy` would: held sessions stay, each erased session leaves
    a tombstone whose reason names the policy, and each receipt is logged on stderr.
    """
    if install:
        _install(db_url, paths, settle, idle, poll, rules_check, config_file)
        return
    config = read_config(config_file)
    checker = RulesOnImport(config, rules_check)
    retention = _Retention(config.retention)
    folders = _folders(paths)
    if not folders and once:
        raise click.UsageError(
            "no PATHS given and no agent session folder found (looked for "
            f"{store.describe_agent_folders()}): give the folders to watch")
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)  # also where a shell started it ignoring SIGINT
    started = datetime.now().astimezone()
    totals: dict[str, Any] = {"passes": 0, "messages": 0, "gone": 0, "problems": 0,
                              "findings": 0, "erased": 0, "reported": set()}
    waiter = _Waiter(idle, poll)
    with open_store(db_url) as opened:
        try:
            if not quiet and not once:
                where = ", ".join(str(f) for f in folders) or "(no agent folder yet)"
                into = db_url if db_url and "://" not in db_url else opened.url
                click.echo(visible(f"watching {where} ({waiter.mode}) into {into}"), err=True)
            while True:
                folders = _folders(paths)
                waiter.follow(folders)
                stored = _one_pass(opened, folders, settle, totals, quiet, checker)
                totals["erased"] += retention.apply(opened)
                if once:
                    break
                waiter.wait(stored)
        except KeyboardInterrupt:
            pass
        finally:
            waiter.stop()
    click.echo(visible(_status(totals, started)), err=not once)


class _Retention:
    """Applies a retention policy at the first pass, then at most once per its ``every``."""

    def __init__(self, policy: store.RetentionPolicy | None) -> None:
        self.policy = policy
        self._last: float | None = None

    def apply(self, opened: store.TranscriptStore) -> int:
        """Sessions erased now (0 when the policy is not due); each receipt is logged."""
        now = time.monotonic()
        if self.policy is None or (
                self._last is not None
                and now - self._last < self.policy.every.total_seconds()):
            return 0
        self._last = now
        receipts = opened.apply_retention(self.policy)
        for r in receipts:
            click.echo(visible(f"retention: erased {r.session_id} ({r.messages} messages, "
                               f"digest {r.digest or '-'}): {r.reason}"), err=True)
        return len(receipts)


def _one_pass(opened: store.TranscriptStore, folders: list[Path], settle: float,
              totals: dict[str, Any], quiet: bool,
              checker: RulesOnImport | None = None) -> bool:
    """One catch-up over ``folders``; True when it stored something."""
    totals["passes"] += 1
    if not folders:
        return False
    if checker is not None:
        checker.mark(opened)
    summary = _import_pass(opened, folders, settle)
    totals["messages"] += summary.messages_added
    totals["gone"] += summary.gone
    reported: set[str] = totals["reported"]
    for line in [*(f"problem: {p}" for p in summary.problems),
                 *(f"failed: {f}" for f in summary.failed_files)]:
        if line not in reported:  # a file that keeps failing is reported once per run
            reported.add(line)
            totals["problems"] += 1
            click.echo(visible(line), err=True)
    findings = None
    if summary.messages_added:
        opened.update_search_index()  # searchable now, not at the next search
        findings = checker.check(opened) if checker is not None else None
        totals["findings"] += findings or 0
    if (summary.messages_added or summary.gone) and not quiet:
        when = datetime.now().astimezone().strftime("%H:%M:%S")
        parts = [f"stored {summary.messages_added} messages ({summary.sessions} sessions, "
                 f"{summary.files} files)"] if summary.messages_added else []
        if findings is not None:
            parts.append(f"{plural(findings, 'finding')} saved")
        if summary.gone:
            parts.append(f"{summary.gone} source files gone (their sessions stay)")
        click.echo(visible(f"{when} " + "; ".join(parts)))
    return bool(summary.messages_added)


def _import_pass(opened: store.TranscriptStore, folders: list[Path],
                  settle: float) -> store.ImportSummary:
    """One pass: what is new under ``folders``, and the source files deleted since."""
    return store.import_paths(opened, folders, settle=settle, notice_deleted=True)


def _status(totals: dict[str, Any], started: datetime) -> str:
    extra = "".join(f", {totals[k]} {label}" for k, label in (
        ("findings", "findings saved"), ("erased", "sessions erased by retention"))
        if totals[k])
    return (f"watched since {started:%Y-%m-%d %H:%M}: {totals['passes']} passes, "
            f"{totals['messages']} messages stored, {totals['gone']} source files gone, "
            f"{totals['problems']} problems{extra}")


def _install(db_url: str | None, paths: tuple[Path, ...], settle: float, idle: float,
             poll: bool, rules_check: bool = False, config_file: Path | None = None) -> None:
    command = [sys.executable, "-m", "store", "watch", "--quiet"]
    if db_url:
        is_file = "://" not in db_url
        command += ["--db", str(expand_home(db_url).resolve()) if is_file else db_url]
    if settle != 300.0:
        command += ["--settle", str(settle)]
    if idle != 60.0:
        command += ["--idle", str(idle)]
    if poll:
        command.append("--poll")
    if rules_check:
        command.append("--rules-check")
    if config_file is not None:
        command += ["--config", str(expand_home(config_file).resolve())]
    command += [str(expand_home(p).resolve()) for p in paths]
    written = store.service_file(command)
    click.echo(visible(f"wrote {written.kind}: {written.path}"))
    for label, lines in (("start it (and at every log-in)", written.start),
                         ("stop it", written.stop), ("remove it", written.remove)):
        click.echo(f"{label}:")
        for line in lines:
            click.echo(visible(f"  {line}"))


@click.command("capture")
@db_option
@click.option("--hook", "agent", required=True, type=click.Choice(["claude-code"]),
              help="Read the agent's hook input on standard input (Claude Code: a JSON "
                   "object with transcript_path) and store the session it names.")
def capture_command(db_url: str | None, agent: str) -> None:
    """Store the session an agent's hook names (Claude Code SessionEnd / Stop hooks).

    Add to ~/.claude/settings.json, under "hooks": {"SessionEnd": [{"hooks": [{"type":
    "command", "command": "transcript-store capture --hook claude-code"}]}]} (and the same
    under "Stop" to capture after every reply). Reads only what is new, like watch. Exit 0,
    or 1 with one line on stderr (never 2, which a Claude Code hook reads as "block").
    """
    report: Callable[[str], None] = lambda text: click.echo(visible(text), err=True)  # noqa: E731
    try:
        path = store.hook_transcript(agent, sys.stdin.read())
        with open_store(db_url) as opened:
            summary = store.import_paths(opened, [path], settle=0)
    except store.StoreError as exc:
        report(f"error: {exc}")
        sys.exit(1)
    for problem in summary.problems:
        report(f"problem: {problem}")
    for failed in summary.failed_files:
        report(f"failed: {failed}")
    click.echo(visible(f"captured {summary.messages_added} new messages from {path}"))
    if summary.failed_files or summary.problems:
        sys.exit(1)


#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [watch_command, capture_command]
