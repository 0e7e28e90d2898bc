"""Kilo Code's files: the extension's task folders are read by Cline's reader (the storage
folder tells them apart: ``store.agents.cline.task_agent``), the CLI's ``kilo.db`` by
OpenCode's database reader (Kilo's CLI is a fork of OpenCode and keeps its tables)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.agents.cline.reader import read_file
from store.agents.opencode.reader import read_opencode_db
from store.importers.base import Collector

__all__ = ["read_file", "read_kilo_db"]


def read_kilo_db(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """``kilo.db``'s ``session``, ``message`` and ``part`` rows, as OpenCode's (the
    collector's format, ``kilo``, names the sessions' agent)."""
    read_opencode_db(tables, collector)
