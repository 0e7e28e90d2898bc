"""CLI: ``log``, the transparency log (edge layer; public API only; docs/trust.md).

``log key`` prints the verifier key (the Ed25519 signing key is made on first use, kept
outside the database: ``--key-file``, ``$TRANSCRIPT_STORE_LOG_KEY`` or the user's config
folder, mode 0600); ``log checkpoint`` prints (or publishes) the signed checkpoint; ``log
prove`` a c2sp.org/tlog-proof bundle; ``log consistency`` the proof that the log extends an
older checkpoint; ``log verify`` checks any of them offline, with no database; ``log cosign``
adds a witness's cosignature to a checkpoint it has checked.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

import store
from store.cli._common import db_option, open_store, resolve_session

KEY_FILE_HELP = ("The log's signing key file (default: $TRANSCRIPT_STORE_LOG_KEY, else "
                 "log.key in your config folder); made on first use, mode 0600.")


def key_file_option(function: click.decorators.FC) -> click.decorators.FC:
    return click.option("--key-file", type=click.Path(dir_okay=False, path_type=Path),
                        help=KEY_FILE_HELP)(function)


def signer(key_file: Path | None) -> store.LogSigner:
    where = key_file or store.default_log_key_path()
    made = not where.exists()
    found = store.load_log_key(where)
    if made:
        click.echo(f"made a new log signing key at {where} (mode 0600): keep it secret, "
                   "publish `transcript-store log key`", err=True)
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"{path}: {exc}") from None


def _write(text: str, out: Path | None, name: str) -> None:
    if out is None:
        click.echo(text, nl=False)
        return
    target = out / name if out.is_dir() else out
    target.write_text(text, encoding="utf-8")
    click.echo(f"wrote {target}", err=True)


@click.group()
def log() -> None:
    """The transparency log: signed checkpoints, inclusion and consistency proofs an auditor
    checks offline with only the public key (docs/trust.md)."""


@log.command("key")
@key_file_option
def log_key(key_file: Path | None) -> None:
    """Print the log's verifier key (name+keyid+base64 public key); the signing key is made
    on first use."""
    click.echo(str(signer(key_file).verifier))


@log.command("checkpoint")
@db_option
@key_file_option
@click.option("--out", type=click.Path(path_type=Path),
              help="Write it to this file, or into this folder as <size>.checkpoint and "
                   "checkpoint (publish both).")
def log_checkpoint(db_url: str | None, key_file: Path | None, out: Path | None) -> None:
    """Print the log's current signed checkpoint (c2sp.org/tlog-checkpoint), after logging
    every message stored so far."""
    key = signer(key_file)
    with open_store(db_url) as opened:
        note = opened.log_checkpoint(key)
    if out is not None and out.is_dir():
        size = note.split("\n")[1]
        _write(note, out / f"{size}.checkpoint", "")
    _write(note, out, "checkpoint")


@log.command("prove")
@db_option
@key_file_option
@click.argument("target", metavar="SESSION[:POSITION]")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the bundle to this file (.tlog-proof).")
def log_prove(db_url: str | None, key_file: Path | None, target: str,
              out: Path | None) -> None:
    """Print a c2sp.org/tlog-proof bundle: the inclusion of a message's leaf (without a
    position, the session's latest leaf: its last message, or its tombstone) in the current
    signed checkpoint; the leaf hash, salt and entry ride in the extra data."""
    session_id, position = target, None
    head, sep, tail = target.rpartition(":")
    if sep and tail.isdigit():
        session_id, position = head, int(tail)
    key = signer(key_file)
    with open_store(db_url) as opened:
        try:
            session_id = resolve_session(opened, session_id)
        except store.SessionNotFound:
            pass  # an erased session: its leaves stay
        bundle = opened.log_prove(session_id, position, key)
    _write(bundle, out, "")


@log.command("consistency")
@db_option
@key_file_option
@click.argument("old", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                metavar="OLD.checkpoint")
def log_consistency(db_url: str | None, key_file: Path | None, old: Path) -> None:
    """Print the current signed checkpoint, then the RFC 9162 consistency proof from OLD
    (one base64 hash a line): that the log still extends it."""
    key = signer(key_file)
    with open_store(db_url) as opened:
        click.echo(opened.log_consistency(_read(old), key), nl=False)


@log.command("verify")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--key", "key", required=True, metavar="KEY",
              help="The log's verifier key (`log key` prints it).")
@click.option("--checkpoint", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The older checkpoint a consistency proof starts from.")
def log_verify(file: Path, key: str, checkpoint: Path | None) -> None:
    """Check a checkpoint, a tlog-proof bundle or (with --checkpoint) a consistency proof
    offline, with no database; exit 1 when anything does not verify. The same checks run
    as a standalone file: python store/tlog/verifier.py."""
    old = _read(checkpoint) if checkpoint is not None else None
    try:
        done = store.verify_log_text(_read(file), key, old)
    except store.LogVerificationError as exc:
        click.echo(f"FAILED: {exc}", err=True)
        sys.exit(1)
    for fact in done.facts:
        click.echo(f"ok: {fact}")


@log.command("cosign")
@click.argument("new", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                metavar="CONSISTENCY")
@click.option("--log-key", required=True, metavar="KEY", help="The log's verifier key.")
@click.option("--checkpoint", "old", type=click.Path(exists=True, dir_okay=False,
                                                     path_type=Path),
              help="The last checkpoint this witness cosigned (none: the first one).")
@click.option("--key-file", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The witness's own signing key file (made on first use, mode 0600; "
                   "not the log's).")
def log_cosign(new: Path, log_key: str, old: Path | None, key_file: Path) -> None:
    """A minimal witness: check that CONSISTENCY (from `log consistency`) extends the last
    checkpoint this witness cosigned, then print the new checkpoint with the witness's
    signature added. Keep the output as the next --checkpoint."""
    witness = signer(key_file)
    if str(witness.verifier) == log_key.strip():
        raise click.BadParameter("the witness's key is the log's own", param_hint="--key-file")
    text = _read(new)
    try:
        store.verify_log_text(text, log_key, _read(old) if old else None)
    except store.LogVerificationError as exc:
        click.echo(f"FAILED: {exc}", err=True)
        sys.exit(1)
    click.echo(witness.cosign(text), nl=False)


#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [log]
