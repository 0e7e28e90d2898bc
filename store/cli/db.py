"""CLI: ``db upgrade | current | check | index | head | distribute | stats | compact``: the
schema, the search index, the chain head, the Citus layout, where the size goes and giving it
back (edge layer; public API only). On a Citus coordinator ``upgrade``, ``current`` and
``check`` also say whether the schema is distributed."""

from __future__ import annotations

import sys
import time

import click

import store
from store.cli._common import (
    CommandGroup,
    check_db_folder,
    confirmed,
    console,
    db_option,
    emit_json,
    open_store,
    visible,
)
from store.cli.fitted import Column, fitted_table


@click.group(cls=CommandGroup)
def db() -> None:
    """Schema administration: upgrade, downgrade, current revision, drift check, Citus
    distribution."""


def _echo_distribution(status: store.SchemaStatus) -> None:
    """The Citus layout line, on Citus only."""
    line = status.describe_distribution()
    if line is not None:
        click.echo(f"{status.url}: {line}")


@db.command("upgrade")
@db_option
@click.argument("revision", default="head")
@click.option("--revision", "revision_option", hidden=True,
              help="The target revision (older spelling of REVISION).")
def db_upgrade(db_url: str | None, revision: str, revision_option: str | None) -> None:
    """Create or upgrade the database schema to REVISION: a revision id (`db history` lists
    them), head (the default), or +N steps forward. On a distributed Citus schema the tables
    a revision creates are distributed too."""
    if revision_option is not None:
        revision = revision_option
    if not revision.strip():
        raise click.BadParameter("give a revision id, head, or +N", param_hint="REVISION")
    check_db_folder(db_url)
    status = store.upgrade_database(db_url, revision)
    click.echo(f"{status.url}: at revision {status.current} (head {status.head})")
    _echo_distribution(status)


@db.command("downgrade")
@db_option
@click.argument("revision", default="-1")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def db_downgrade(db_url: str | None, revision: str, yes: bool) -> None:
    """Downgrade the schema to REVISION: a revision id (`db history` lists them), base (no
    schema), or by default one step back (`db downgrade -- -2`: two steps).

    What the undone revisions added (tables, columns, indexes) is dropped with its data:
    it asks first. This version of transcript-store needs the head revision to open the
    database again (`db upgrade`).
    """
    if not revision.strip():
        raise click.BadParameter("give a revision id, base, or -N", param_hint="REVISION")
    status = store.database_status(db_url)
    if not yes:
        confirmed(f"downgrade {db_url or 'the default database'} from revision "
                  f"{status.current or 'none'} to {revision}? Data in what those revisions "
                  "added is lost")
    status = store.downgrade_database(db_url, revision)
    click.echo(f"{status.url}: at revision {status.current or 'base (no schema)'} "
               f"(head {status.head})")


@db.command("history")
@db_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per revision.")
def db_history(db_url: str | None, as_json: bool) -> None:
    """List the schema revisions, oldest first, marking the head and (when the database
    exists) the database's own revision. Changes nothing."""
    revisions = store.schema_history()
    current: str | None = None
    try:
        current = store.database_status(db_url).current
    except store.StoreError:
        current = None  # no database (yet): the list alone
    head = revisions[-1].revision if revisions else None
    if as_json:
        emit_json({"revision": r.revision, "down_revision": r.down_revision,
                   "message": r.message, "is_head": r.revision == head,
                   "is_current": r.revision == current} for r in revisions)
        return
    for r in revisions:
        marks = [m for m, on in (("head", r.revision == head), ("current", r.revision == current))
                 if on]
        shown = f" ({', '.join(marks)})" if marks else ""
        click.echo(visible(f"{r.down_revision or 'base'} -> {r.revision}{shown}: {r.message}"))


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
    """Check that the schema is at head and matches the code (and, on Citus, is not left
    partly distributed); exit 1 otherwise."""
    status = store.check_database(db_url)
    click.echo(f"{status.url}: revision {status.current}, schema matches the code")
    _echo_distribution(status)


@db.command("index")
@db_option
@click.option("--rebuild", is_flag=True,
              help="Drop the search index, argument views and secret digests and build them "
                   "again from the transcript (repairs what `verify` reports).")
def db_index(db_url: str | None, rebuild: bool) -> None:
    """Bring the search indexes up to date: calls (`calls search --text`) and messages
    (`search`); `import` and `watch` also do it themselves."""
    with open_store(db_url) as opened:
        if rebuild:
            started = time.perf_counter()
            store.refill_search_index(opened, workers=None)
            calls = opened.count_calls()
            click.echo(f"search index rebuilt from the transcript: {calls} calls in "
                       f"{time.perf_counter() - started:.2f} s")
            return
        done = opened.update_search_index(workers=None)
    click.echo(f"search index: {done.calls} calls, {done.results} results and "
               f"{done.messages} messages of {done.sessions} sessions indexed, usage of "
               f"{done.summarized} sessions summarized in {done.seconds:.2f} s")


@db.command("head")
@db_option
def db_head(db_url: str | None) -> None:
    """Print the head over every session's chain (and record it, for `verify --head`): keep
    it elsewhere (a ticket, a log, a signature) to prove later that nothing was removed."""
    with open_store(db_url) as opened:
        click.echo(opened.record_head())


@db.command("distribute")
@db_option
@click.option("--shard-count", type=click.IntRange(1, 64000), default=None,
              help="Shards per distributed table [default: 32, "
                   "store.DEFAULT_SHARD_COUNT]; ignored once sessions is distributed.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per table.")
def db_distribute(db_url: str | None, shard_count: int | None, as_json: bool) -> None:
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


@db.command("stats")
@db_option
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per table or index (name, kind, table, bytes).")
def db_stats(db_url: str | None, as_json: bool) -> None:
    """Where the database's size goes: each table and index with its size and share, largest
    first (SQLite: its dbstat table, FTS5 shadow tables included, the free pages and the
    write-ahead log; PostgreSQL: each table's heap and TOAST, each index). Changes
    nothing."""
    sizes = store.database_sizes(db_url)
    if as_json:
        emit_json({"name": o.name, "kind": o.kind, "table": o.table, "bytes": o.bytes}
                  for o in sizes.objects)
        return
    total = sizes.total or 1
    rows = [[o.name, o.kind, o.table or "", _size(o.bytes), f"{100 * o.bytes / total:.1f} %"]
            for o in sizes.objects]
    console().print(fitted_table(f"{sizes.url}: {_size(sizes.total)}", [
        Column("object", flexible=True), Column("kind", keep=True),
        Column("table", flexible=True), Column("size", justify="right", keep=True),
        Column("share", justify="right", keep=True)], rows))
    wal = sum(o.bytes for o in sizes.objects if o.kind == "wal")
    if wal > _LARGE_LOG and wal > (sizes.total - wal) // 4:
        click.echo(f"the write-ahead log takes {_size(wal)}: `transcript-store db compact` "
                   "folds it into the file and truncates it", err=True)


#: A write-ahead log smaller than this is not worth a word (SQLite's own default is ~4 MB).
_LARGE_LOG = 64 << 20


@db.command("compact")
@db_option
@click.option("--no-vacuum", is_flag=True,
              help="Pack the rows but leave the file as it is (no VACUUM: the freed space "
                   "stays in the file, for later rows).")
def db_compact(db_url: str | None, no_vacuum: bool) -> None:
    """Make an SQLite store smaller: pack each message's metadata and extras written before
    packing (a chunk of messages per transaction: writers go on between them), store once
    each call's wire text written before revision 0030 that its row rebuilds, then VACUUM
    the file (as much free disk as the database needed; the file's write lock is held while
    it runs), and fold the write-ahead log into the file and truncate it. Every answer and
    every chain stays the same."""
    store.database_status(db_url)  # (a missing database is an error, not a new one)
    with open_store(db_url) as opened:
        if not no_vacuum:
            click.echo("packing, then VACUUM (it rewrites the file) ...", err=True)
        report = store.compact_database(opened, vacuum=not no_vacuum)
    click.echo(f"{report.url}: {report.packed} values packed in {report.messages} messages, "
               f"{report.wires} call wire texts stored once; "
               f"{_size(report.bytes_before)} -> {_size(report.bytes_after)}"
               f"{'' if report.vacuumed else ' (not vacuumed)'} ({report.seconds:.1f} s)")


def _size(count: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:,.1f} {unit}"
    return f"{count} B"


COMMANDS: list[click.Command] = [db]
