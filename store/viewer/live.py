"""Live updates: ``/live`` answers a short activity stamp that changes when the store does
(edge layer).

``/live`` (the whole store): how many sessions there are, and the most recently active one's id,
message count and last activity (revision 0016's ``ix_sessions_last_activity`` answers it
without a scan). ``/live?session=ID``: that session's message count and last write. The pages
carry their stamp in ``<body data-live="...">``; ``static/viewer.js`` asks ``/live`` every few
seconds and, when the stamp differs, reloads the page (a list) or offers the new messages (a
session, reloaded at once when the reader is at its end). Polling, not server-sent events: an
open event stream would hold one of the server's few page threads per tab.
"""

from __future__ import annotations

import hashlib
from typing import Protocol

import store
from store.viewer.http import Request, Response

__all__ = ["activity_stamp", "live"]


class Viewer(Protocol):
    store: store.TranscriptStore


def activity_stamp(opened: store.TranscriptStore, session_id: str | None = None) -> str:
    """The stamp of the whole store, or of one session (``SessionNotFound`` when it has
    none)."""
    if session_id is not None:
        info = opened.get_session(session_id)
        raw = f"{info.message_count}|{info.updated_at.isoformat()}"
    else:
        top = opened.list_sessions(limit=1)
        raw = "|".join([str(opened.count_sessions())] + [
            f"{i.session_id}|{i.message_count}|{i.last_active_at.isoformat()}" for i in top])
    return hashlib.blake2b(raw.encode("utf-8", "replace"), digest_size=8).hexdigest()


def live(viewer: Viewer, request: Request) -> Response:
    """The stamp as plain text (``404`` for an unknown session)."""
    return Response.text(200, activity_stamp(viewer.store, request.arg("session")))
