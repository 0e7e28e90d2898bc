"""Message search on the store (persistence): ``TranscriptStore.search_messages`` and
``messages_behind``. The statements are :mod:`store.db.index.message_sql`'s, which the
command line's stdlib reader runs too."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from store.core.errors import DatabaseError
from store.core.textquery import MessageHit
from store.db.base import StoreBase, driver_reason
from store.db.index.message_index import has_message_index, messages_behind
from store.db.index.message_sql import MAX_LIMIT, SNIPPET_WORDS, check_search, search_messages
from store.db.index.reads import one_read
from store.db.index.search_index import IndexUpdate

__all__ = ["MAX_LIMIT", "SNIPPET_WORDS", "MessageSearchMixin", "check_search",
           "search_messages"]


class MessageSearchMixin(StoreBase):
    """``search_messages`` and ``messages_behind`` on ``TranscriptStore``."""

    if TYPE_CHECKING:
        def update_search_index(self, *, progress: Any = None) -> IndexUpdate: ...

    def search_messages(self, query: str, *, agent: str | None = None,
                        project: str | None = None, since: datetime | None = None,
                        until: datetime | None = None, role: str | None = None,
                        session_id: str | None = None, limit: int = 20, offset: int = 0
                        ) -> list[MessageHit]:
        """Full-text search over every message's text: prompts, answers, reasoning, tool
        arguments and results. ``query`` takes words (all must match), ``"a phrase"``, a
        ``prefix*`` and ``-word`` (``store.core.textquery``; anything else is a
        :class:`~store.core.errors.SearchQueryError`). Filters: the session's ``agent``,
        its working folder ``project`` (that folder or below it), the message's time
        (``since`` inclusive, ``until`` exclusive), ``role`` (``user``, ``assistant``,
        ``system``, ``developer``, ``tool``, ``thinking``), one ``session_id``. One hit per
        message, best first (ties: newer first), ``limit`` (at most 1000) from ``offset``.

        A writable store first brings the index up to date (so a message appended before
        the call is found); a read-only store searches what is indexed (see
        :meth:`messages_behind`). Snippets are of the redacted text the index holds."""
        check_search(query, role, limit, offset)
        with one_read():
            if not self.read_only:
                self.update_search_index()
            try:
                with self._read() as conn:
                    return search_messages(conn, query, agent=agent, project=project,
                                           since=since, until=until, role=role,
                                           session_id=session_id, limit=limit, offset=offset,
                                           present=has_message_index(conn))
            except self._errors as exc:
                raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    def messages_behind(self, session_id: str | None = None) -> int:
        """How many sessions hold messages the message index has not caught up with yet (0
        after ``update_search_index``; a read-only store's searches miss those messages)."""
        with self._read() as conn:
            if not has_message_index(conn):
                return 0
            return messages_behind(conn, session_id)
