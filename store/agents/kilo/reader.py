"""Kilo Code task folders are read by Cline's reader (the storage folder tells them apart:
``store.agents.cline.task_agent``)."""

from store.agents.cline.reader import read_file

__all__ = ["read_file"]
