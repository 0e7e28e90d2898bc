"""The command line (edge layer): thin, calling only the public API in ``store``."""

from store.cli.main import main

__all__ = ["main"]
