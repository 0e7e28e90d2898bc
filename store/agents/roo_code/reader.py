"""Roo Code files are read by Cline's reader (the task folder tells them apart)."""

from store.agents.cline.reader import read_file

__all__ = ["read_file"]
