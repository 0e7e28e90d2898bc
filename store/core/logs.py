"""The package's loggers, made on their first message (domain; stdlib only).

Importing :mod:`logging` costs a command's start-up several milliseconds (it brings
``traceback``, ``string``, threading's locks ...), and a read command logs nothing unless
``-v`` or ``TRANSCRIPT_STORE_LOG`` asks (the command line configures logging itself then). A
module takes a :class:`Logger` from :func:`logger` instead of ``logging.getLogger``: the
first message imports ``logging``, attaches the package's ``NullHandler`` to the ``store``
logger (the library convention: silent until the application configures logging, never
Python's last-resort handler) and goes to ``logging.getLogger(name)``, with the caller's
line in the record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

__all__ = ["Logger", "logger", "package_logger"]

_PACKAGE = "store"


def package_logger(name: str = _PACKAGE) -> logging.Logger:
    """``logging.getLogger(name)``, once the package's ``NullHandler`` is in place."""
    import logging

    root = logging.getLogger(_PACKAGE)
    if not any(isinstance(h, logging.NullHandler) for h in root.handlers):
        root.addHandler(logging.NullHandler())
    return logging.getLogger(name)


class Logger:
    """A ``logging.Logger`` made on first use (see the module docstring)."""

    __slots__ = ("_logger", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._logger: logging.Logger | None = None

    def _log(self, level: str, msg: object, args: tuple[object, ...],
             kwargs: dict[str, Any]) -> None:
        found = self._logger
        if found is None:
            found = self._logger = package_logger(self.name)
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2  # (the caller's line)
        getattr(found, level)(msg, *args, **kwargs)

    def debug(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log("debug", msg, args, kwargs)

    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log("info", msg, args, kwargs)

    def warning(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log("warning", msg, args, kwargs)

    def error(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log("error", msg, args, kwargs)


def logger(name: str) -> Logger:
    """The logger ``name`` (``__name__``), made on its first message."""
    return Logger(name)
