"""A path as the user wrote it, with ``~`` expanded (domain; stdlib only).

``pathlib.Path.expanduser`` raises ``RuntimeError`` for ``~name`` when no user ``name``
exists (the CLI fuzz test found ``--config '~0'`` crashing); a shell leaves such a word as it
is written. :func:`expand_home` does the same, so that the command then says what is missing
(no such file, no database) instead of crashing. Every path a user gives goes through it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["expand_home"]


def expand_home(path: str | os.PathLike[str]) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded; an unknown user's left as written."""
    return Path(os.path.expanduser(path))
