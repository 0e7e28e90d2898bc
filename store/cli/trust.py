"""CLI: ``prune``, and ``sessions erase | hold | release`` (attached to the ``sessions`` group by
:mod:`store.cli.sessions`) (edge layer; public API only).

``sessions delete`` removes a session and leaves a tombstone (kind ``delete``); ``sessions
erase`` also scrubs the bytes (SQLite: secure delete, index merge, WAL truncated) and needs a
reason: use it for subject requests and leaked data. Both are refused on a held session.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

import store
from store.cli._common import (
    confirmed,
    db_option,
    emit_json,
    open_store,
    plural,
    resolve_session,
    visible,
)
from store.cli.timespec import DurationSpec, TimeSpec


def _actor(given: str | None) -> str | None:
    if given:
        return given
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name known
        return None


def _signed(receipts: list[store.ErasureReceipt]) -> list[store.ErasureReceipt]:
    """The receipts with their log checkpoints signed, when the log's key exists (an
    erasure never makes one)."""
    where = store.default_log_key_path()
    if not receipts or receipts[0].log_after is None or not where.exists():
        return receipts
    key = store.load_log_key(where, create=False)
    return [replace(r, log_before=key.sign_note(r.log_before) if r.log_before else None,
                    log_after=key.sign_note(r.log_after) if r.log_after else None)
            for r in receipts]


def _echo_receipts(receipts: list[store.ErasureReceipt], as_json: bool, verb: str) -> None:
    receipts = _signed(receipts)
    if as_json:
        emit_json(r.to_dict() for r in receipts)
        return
    for r in receipts:
        click.echo(visible(f"{verb} {r.session_id}: {r.messages} messages, digest "
                           f"{r.digest or '-'}, at {r.erased_at.isoformat()}, reason "
                           f"{r.reason!r}" + (f", by {r.actor}" if r.actor else "")
                           + (f", tombstone leaf {r.log_leaf}" if r.log_leaf is not None
                              else "")))
    scrub = receipts[0].scrub if receipts else ()
    for line in scrub:
        click.echo(f"  bytes: {line}")
    if receipts and receipts[0].log_before and receipts[0].log_after:
        for label, note in (("before", receipts[0].log_before),
                            ("after", receipts[0].log_after)):
            click.echo(f"  log checkpoint {label}:")
            for line in note.rstrip("\n").split("\n"):
                click.echo(f"    {line}")


@click.command("erase")
@db_option
@click.argument("session_ids", nargs=-1, required=True, metavar="SESSION_ID...")
@click.option("--reason", required=True, help="Why (kept in the tombstone): a ticket, a request.")
@click.option("--by", "actor", help="Who asks (default: your user name).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="One JSON receipt per session.")
def erase(db_url: str | None, session_ids: tuple[str, ...], reason: str, actor: str | None,
          yes: bool, as_json: bool) -> None:
    """Erase sessions for good (rows, search index, database bytes), leaving a tombstone.
    Refused for a session under legal hold. Prints a receipt."""
    with open_store(db_url) as opened:
        # all exist (a unique prefix names one), or none goes
        infos = [opened.get_session(resolve_session(opened, sid)) for sid in session_ids]
        if not yes:
            listed = ", ".join(f"{i.session_id} ({i.message_count} messages)" for i in infos)
            confirmed(f"erase {listed} from {opened.url} for good?")
        receipts = opened.erase([i.session_id for i in infos], reason=reason,
                                actor=_actor(actor))
    _echo_receipts(receipts, as_json, "erased")


@click.command("hold")
@db_option
@click.argument("session_id")
@click.option("--reason", required=True, help="Why (a case, a request).")
@click.option("--by", "actor", help="Who asks (default: your user name).")
def hold(db_url: str | None, session_id: str, reason: str, actor: str | None) -> None:
    """Put a session under legal hold: erase, delete and prune refuse it until released."""
    with open_store(db_url) as opened:
        placed = opened.hold(resolve_session(opened, session_id), reason, actor=_actor(actor))
    click.echo(visible(f"{placed.session_id}: held ({placed.reason})"))


@click.command("release")
@db_option
@click.argument("session_id")
def release(db_url: str | None, session_id: str) -> None:
    """Lift a session's legal hold."""
    with open_store(db_url) as opened:
        session_id = resolve_session(opened, session_id)
        lifted = opened.release(session_id)
    click.echo(visible(f"{session_id}: released" if lifted else f"{session_id}: was not held"))


def _policy(path: Path) -> store.RetentionPolicy:
    import tomllib  # (only a policy file needs it: not at every command's start-up)

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise store.ConfigurationError(f"{path}: {exc}") from exc
    if "retention" not in data:
        raise store.ConfigurationError(f"{path}: no [retention] table")
    try:
        return store.RetentionPolicy.from_mapping(data["retention"])
    except store.ConfigurationError as exc:
        raise store.ConfigurationError(f"{path}: {exc}") from None


@click.command()
@db_option
@click.option("--before", type=TimeSpec(),
              help="Sessions last active before this time (2025-07, 2025-07-14, 90d, "
                   "yesterday ...; no zone: local time).")
@click.option("--older-than", type=DurationSpec(),
              help="Sessions last active longer ago than this (90d, 12w, 36h; at most 100 "
                   "years).")
@click.option("--policy", "policy_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Apply the [retention] table of this TOML file instead.")
@click.option("--agent", help="Only sessions of this agent.")
@click.option("--dry-run", is_flag=True, help="Only list what would be erased.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="One JSON receipt per session.")
def prune(db_url: str | None, before: datetime | None, older_than: timedelta | None,
          policy_file: Path | None, agent: str | None, dry_run: bool, yes: bool,
          as_json: bool) -> None:
    """Erase old sessions (as `sessions erase` does); held sessions are left alone."""
    given = [x for x in (before, older_than, policy_file) if x is not None]
    if len(given) != 1:
        raise click.UsageError("give one of --before, --older-than and --policy")
    with open_store(db_url, read_only=dry_run) as opened:
        receipts: list[Any]
        if policy_file is not None:
            if agent is not None:
                raise click.UsageError("--agent and --policy do not go together")
            policy = _policy(policy_file)
            receipts = opened.apply_retention(policy, dry_run=True)
            if receipts and not dry_run and not yes:
                confirmed(f"erase {len(receipts)} sessions from {opened.url} for good?")
            if not dry_run:
                receipts = opened.apply_retention(policy)
        else:
            cutoff = before if before is not None else (
                datetime.now(UTC) - (older_than or timedelta(0)))
            receipts = opened.prune(cutoff, agent=agent, dry_run=True)
            if receipts and not dry_run and not yes:
                confirmed(f"erase {len(receipts)} sessions last active before "
                          f"{cutoff.isoformat()} from {opened.url} for good?")
            if not dry_run and receipts:
                receipts = opened.prune(cutoff, agent=agent, actor=_actor(None))
    if dry_run and not as_json:
        for r in receipts:
            click.echo(visible(f"would erase {r.session_id} ({r.messages} messages)"))
        click.echo(f"{plural(len(receipts), 'session')} would be erased")
        return
    _echo_receipts(receipts, as_json, "would erase" if dry_run else "erased")
    if not as_json and not dry_run:
        click.echo(f"{plural(len(receipts), 'session')} erased")


def secret_calls(db_url: str | None, value: str, as_json: bool) -> None:
    """``calls search --secret VALUE`` ('-': read the value from stdin, so that it stays out
    of the shell history and the process list)."""
    if value == "-":
        value = sys.stdin.readline().rstrip("\r\n")
    with open_store(db_url, read_only=True) as opened:
        hits = opened.calls_with_secret(value)
    if as_json:
        emit_json({"session_id": h.session_id, "position": h.position,
                   "call_index": h.index, "call_id": h.call_id, "tool": h.name,
                   "raw_tool": h.raw_name} for h in hits)
        return
    for h in hits:
        click.echo(visible(f"{h.session_id}  {h.position}.{h.index}  {h.name}  {h.call_id}"))
    click.echo(f"{len(hits)} calls held this secret", err=True)


@click.command("secrets")
@db_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per session and kind.")
def audit_secrets(db_url: str | None, as_json: bool) -> None:
    """Sessions whose calls or results hold secrets the detectors recognise: kinds and
    counts, never the values."""
    with open_store(db_url) as opened:
        rows = opened.secrets_summary()
    if as_json:
        emit_json({"session_id": s, "kind": k, "secrets": n, "calls": c}
                  for s, k, n, c in rows)
        return
    for sid, kind, n, calls in rows:
        click.echo(visible(f"{sid}  {kind}  {n} secrets in {calls} calls"))
    click.echo(f"{len({r[0] for r in rows})} sessions hold secrets", err=True)


def explain_missing(opened: store.TranscriptStore, session_id: str) -> None:
    """``sessions show`` of a session that is not there: what its tombstones say, then
    exit 1; nothing when it has none (the caller raises SessionNotFound)."""
    stones = [t for t in opened.tombstones(session_id) if t.start_position == 0]
    if not stones:
        return
    last = stones[-1]
    click.echo(visible(
        f"{session_id}: {last.kind}d at {last.erased_at.isoformat()}"
        + (f" by {last.actor}" if last.actor else "")
        + (f" ({last.reason})" if last.reason else "")
        + f"; {last.messages} messages, digest {last.digest or '-'}"))
    sys.exit(1)


#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [prune]
