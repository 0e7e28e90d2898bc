"""A read-only web viewer over a store: browse sessions, read transcripts, audit tool usage.

Start it with ``transcript-store serve`` (``store/cli/serve.py``) or in code::

    opened = store.TranscriptStore.open(url, read_only=True)
    server = make_server(opened, "127.0.0.1", 8000)
    server.serve_forever()

Standard library only (``http.server``); no route writes; every page is built with the
escaping helpers of :mod:`store.viewer.markup` and served under a strict Content-Security-Policy
(see :mod:`store.viewer.app`). Pages: :mod:`store.viewer.sessions` (the session list),
:mod:`store.viewer.session` (a transcript, its lineage tree, repair report, exports),
:mod:`store.viewer.costs` (usage and cost), :mod:`store.viewer.messages` (search over every
message), :mod:`store.viewer.pages` (tools, call search), :mod:`store.viewer.findings`;
:mod:`store.viewer.live` answers the activity stamp the pages poll.
"""

from __future__ import annotations

from store.viewer.app import Viewer, ViewerServer, is_loopback, make_server

__all__ = ["Viewer", "ViewerServer", "is_loopback", "make_server"]
