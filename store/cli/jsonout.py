"""``--json`` output of the command line (edge): one compact JSON object per line, in the
field names of docs/json/ (docs/vocabulary.md)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import orjson

from store.core.depth import deep_dumps

__all__ = ["emit_json"]

#: Characters of ``--json`` lines written at once (:func:`emit_json`).
_JSON_BLOCK = 65_536


def emit_json(rows: Iterable[Mapping[str, Any]]) -> int:
    """``--json`` output: one compact JSON object per line, in the field names of
    docs/json/ (docs/vocabulary.md); times as ISO 8601 in UTC with ``Z``. The number of
    lines written."""
    # (written to the stream, flushed once at the end: click.echo flushes every line, a
    # write call each, which was a tenth of streaming 840 calls' JSON)
    # (a terminal's stdout is line-buffered, a write call a line: the lines go in blocks of
    # about 64 KB, each block as soon as it is full, so that a long stream still shows as
    # it goes)
    out = sys.stdout
    option = orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC
    written = 0
    block: list[str] = []
    size = 0
    try:
        for row in rows:
            try:
                line = orjson.dumps(row, default=_json_default, option=option).decode()
            except TypeError:  # nested over orjson's limit (stored before the depth rule)
                line = deep_dumps({k: v if _jsonable(v) else _json_default(v)
                                   for k, v in row.items()})
            block.append(line)
            size += len(line)
            written += 1
            if size >= _JSON_BLOCK:
                out.write("\n".join(block) + "\n")
                block, size = [], 0
    finally:
        if block:
            out.write("\n".join(block) + "\n")
        out.flush()
    return written


def _json_default(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    if isinstance(value, datetime):  # (orjson writes these itself, but not deep_dumps)
        return orjson.dumps(value, option=orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC).decode()[1:-1]
    return str(value)


def _jsonable(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | dict | tuple)
