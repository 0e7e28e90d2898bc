"""CLI: ``serve``, the read-only web viewer (edge layer; public API and ``store.viewer``).

The store is opened read-only (SQLite ``mode=ro``; PostgreSQL read-only transactions, so a
role with read grants only is enough). The server binds to loopback unless ``--host`` says
otherwise; a non-loopback host needs an access token (``--token``, or ``--token auto`` to
generate one), which the printed URL carries once and a cookie carries afterwards.
"""

from __future__ import annotations

import secrets

import click

import store
from store.cli._common import db_option, open_store, redaction_options, redactor_from


def _open_read_only(db_url: str | None) -> store.TranscriptStore:
    """The store opened read-only; a database that does not exist is an error (the viewer,
    like every read, never creates one)."""
    return open_store(db_url, read_only=True)


@click.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback requires --token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port (0: any free port).")
@click.option("--token", metavar="TOKEN|auto", envvar="TRANSCRIPT_STORE_VIEWER_TOKEN",
              help="Access token every request must carry ('auto': generate one). Required "
                   "off loopback. Default: $TRANSCRIPT_STORE_VIEWER_TOKEN.")
@click.option("--quiet", is_flag=True, help="Do not log requests.")
@redaction_options
def serve(db_url: str | None, host: str, port: int, token: str | None, quiet: bool,
          redact: bool, patterns: tuple[str, ...]) -> None:
    """Serve a read-only web viewer of the store: sessions, transcripts, tool usage, search.
    With --redact every page and download shows secrets as [REDACTED:kind] markers."""
    from store.viewer import is_loopback, make_server  # the viewer loads when it is served

    redactor = redactor_from(redact, patterns)
    if token == "auto":
        token = secrets.token_urlsafe(24)
    if token is None and not is_loopback(host):
        raise click.UsageError(
            f"--host {host} is not loopback: give --token TOKEN (or --token auto); "
            "transcripts hold secrets")
    opened = _open_read_only(db_url)
    try:
        try:
            server = make_server(opened, host, port, token=token, log_requests=not quiet,
                                 redactor=redactor)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        except OSError as exc:
            raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from None
        shown = server.url + (f"?token={token}" if token else "")
        click.echo(f"serving {opened.url} read-only{', redacted' if redactor else ''} at "
                   f"{shown}", err=True)
        click.echo("press Ctrl-C to stop", err=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    finally:
        opened.close()

#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [serve]
