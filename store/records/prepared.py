"""An import's messages prepared where its files are read (domain; stdlib + orjson).

An import parses its files in worker processes (``store/importers/parallel.py``) and writes
them in one process. What the search indexes hold of a message is a pure function of the
values its rows hold: :func:`prepare_texts` makes it beside the parsing, and the writer
stores the rows with their search texts and index rows in one transaction
(``store/db/writing/indexing.py``), instead of a catch-up that reads the rows back, makes the
texts and rewrites every call and result (issue 39).

:class:`IndexTexts` holds each call's folded, redacted search text, the secrets found in it
and its argument views (``store.records.itemtexts.call_made``), each result's text and
secrets (``result_made``), and the message index's rows
(``store.records.messagetext.message_rows``), made from the row values
``store.records.codec.encode_message`` gives, which the writer computes again from the same
message (a pure function: the same values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from store.core.errors import StoreError
from store.core.model import Message
from store.records.codec import EncodedMessage, encode_message
from store.records.itemtexts import call_made, result_made
from store.records.messagetext import message_rows

__all__ = ["CallTexts", "IndexTexts", "ResultTexts", "index_texts", "prepare_texts",
           "read_texts"]

#: A secret found: (the detector's kind, the value).
Secret = tuple[str, str]
#: A call's (folded, redacted search text, secrets found, argument views (view, text)).
CallTexts = tuple[str, list[Secret], list[tuple[str, str]]]
#: A result's (folded, redacted search text, secrets found).
ResultTexts = tuple[str, list[Secret]]


@dataclass(frozen=True, slots=True)
class IndexTexts:
    """What the search indexes hold of one message: per call, per result (in their order in
    the message) and the message index's (role, body) rows."""

    calls: Sequence[CallTexts]
    results: Sequence[ResultTexts]
    rows: Sequence[tuple[str, str]]


def index_texts(session_id: str, number: int, role: str, encoded: EncodedMessage
                ) -> IndexTexts:
    """The index texts of a message about to be stored with the row values ``encoded``
    (``number``: its place in what was read, for a warning about an item without text)."""
    calls = tuple(call_made((session_id, number, c.call.recorded_name, c.arguments,
                             c.wire_json)) for c in encoded.calls)
    results = tuple(result_made((session_id, number, r.content_json))
                    for r in encoded.results)
    rows = tuple(message_rows(role, encoded.text, encoded.parts_json,
                              [(c.call.recorded_name, c.wire_json) for c in encoded.calls],
                              [r.content_json for r in encoded.results]))
    return IndexTexts(calls, results, rows)


def prepare_texts(session_id: str, items: Sequence[Message]) -> bytes | None:
    """The index texts of each message, as one JSON document (what a worker sends back: its
    strings cost a fraction of pickled objects to send and to read); ``None`` for a message
    that cannot be encoded (the writer refuses it itself), and ``None`` in all when a text
    cannot be JSON (a lone surrogate): the catch-ups index that file's messages."""
    out: list[tuple[Any, ...] | None] = []
    for number, message in enumerate(items):
        try:
            encoded = encode_message(message.parts, message.extras, message.metadata)
        except StoreError:
            out.append(None)
            continue
        made = index_texts(session_id, number, message.role, encoded)
        out.append((made.calls, made.results, made.rows))
    try:
        return orjson.dumps(out)
    except orjson.JSONEncodeError:
        return None


def read_texts(document: bytes) -> list[IndexTexts | None]:
    """What :func:`prepare_texts` made, back as :class:`IndexTexts` (lists for tuples)."""
    return [None if entry is None else IndexTexts(*entry) for entry in orjson.loads(document)]
