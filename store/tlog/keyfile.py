"""Where the log's Ed25519 signing key lives: outside the database (domain; stdlib).

The key is made on first use and kept in a file of mode 0600 holding the signer key string
(``PRIVATE+KEY+<name>+<id>+<base64>``, :class:`store.tlog.note.Signer`): the path given
(``--key-file``), else ``$TRANSCRIPT_STORE_LOG_KEY``, else ``log.key`` in the user's config
folder (``$XDG_CONFIG_HOME/transcript-store``, default ``~/.config/transcript-store``). Whoever
runs the database without this file cannot sign a checkpoint for a rewritten history.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from store.core.errors import LogProofError
from store.core.paths import expand_home
from store.tlog.note import Signer

__all__ = ["KEY_ENV", "default_key_path", "load_signer"]

KEY_ENV = "TRANSCRIPT_STORE_LOG_KEY"


def default_key_path() -> Path:
    if os.environ.get(KEY_ENV):
        return expand_home(os.environ[KEY_ENV])
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "transcript-store" / "log.key"


def load_signer(path: str | Path | None = None, *, create: bool = True) -> Signer:
    """The signing key of ``path`` (default :func:`default_key_path`), made (mode 0600) when
    it does not exist and ``create``; a key file others can read is refused."""
    where = expand_home(path) if path is not None else default_key_path()
    if not where.exists():
        if not create:
            raise LogProofError(f"no log key at {where} (`transcript-store log key` makes one)")
        signer = Signer.generate(f"transcript-store.invalid/key/{secrets.token_hex(4)}")
        where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(str(signer) + "\n")
        return signer
    mode = where.stat().st_mode
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise LogProofError(f"the log key {where} can be read by others (mode "
                            f"{stat.S_IMODE(mode):o}): chmod 600 it")
    try:
        text = where.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise LogProofError(f"the log key {where} cannot be read: {exc}") from None
    return Signer.parse(text)
