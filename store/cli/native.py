"""CLI: ``resume ID --to claude-code|codex``: a stored session written as the agent's own
session file, in the agent's folder or ``--out DIR`` (edge layer; public API only).

The file is written to a temporary file in the target folder, then linked into place only if
no file has the name (never an overwrite); a failure leaves nothing behind."""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from pathlib import Path

import click

import store
from store.cli._common import open_store, resolve_session, visible


def agent_home(agent: str) -> Path:
    """The agent's home: ``$CLAUDE_CONFIG_DIR`` / ``$CODEX_HOME`` when set, else
    ``~/.claude`` / ``~/.codex`` (the capture table's rule)."""
    row = next(row for row in store.AGENT_FOLDERS if row.agent == agent)
    return row.home(os.environ, Path.home())


def write_native(db_url: str | None, session_id: str, target: str,
                 redactor: store.Redactor | None, *, drop_dangling: bool,
                 last_turns: int | None, tools: tuple[str, ...], out: Path | None,
                 new_id: str | None) -> None:
    """Load, redact, write ``target``'s file; the path and the agent's resume command on
    stdout, the fidelity report on stderr."""
    if out is not None and not out.is_dir():
        raise click.UsageError(f"--out {out}: no such folder" if not out.exists()
                               else f"--out {out}: not a folder")
    with open_store(db_url, read_only=True) as opened:
        session_id = resolve_session(opened, session_id)
        transcript = opened.load(session_id, last_turns=last_turns)
    redactions = 0
    if redactor is not None:
        transcript, redactions = store.redact_transcript(transcript, redactor)
    try:
        native = store.native_session(transcript, target,  # type: ignore[arg-type]
                                      dangling="drop" if drop_dangling else "synthesize",
                                      tools=tools or None, session_id=new_id)
    except store.StoreError as exc:
        raise click.ClickException(str(exc)) from None
    folder = out if out is not None else agent_home(target).joinpath(*native.folder)
    path = folder / native.filename
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _create(path, "".join(line + "\n" for line in native.lines))
    except FileExistsError:
        raise click.ClickException(f"{path} exists: not overwritten") from None
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None
    for line in native.fidelity.lines():
        click.echo(visible(line), err=True)
    if redactor is not None:
        click.echo(f"{redactions} secrets redacted", err=True)
    click.echo(str(path))
    command = native.resume
    if native.cwd:
        command = f"cd {shlex.quote(native.cwd)} && {command}"
    if out is not None:
        click.echo(visible(f"note: {target} finds the session in "
                           f"{agent_home(target).joinpath(*native.folder)}; move the file "
                           "there to resume it"), err=True)
    click.echo(command)


def _create(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, which must not exist: a temporary file in the same folder,
    linked into place (refused if the name is taken), then removed; nothing is left on a
    failure."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: an exclusive create instead
            _exclusive_copy(Path(temporary), path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _exclusive_copy(source: Path, path: Path) -> None:
    try:
        with path.open("x", encoding="utf-8") as file:
            file.write(source.read_text(encoding="utf-8"))
    except FileExistsError:
        raise
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        raise
