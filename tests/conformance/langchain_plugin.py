"""A pytest plugin for langchain-core's own test suite (loaded by scripts/conformance):
``InMemoryChatMessageHistory`` is replaced by
:class:`~store.integrations.langchain.TranscriptChatMessageHistory` (each instance a session of
its own in a fresh SQLite file; ``messages=`` preloads it) before the test modules import it.

Every test of the two files run (chat history, ``RunnableWithMessageHistory``) is kept.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conformance_select import select_excluded

from store.integrations.langchain import TranscriptChatMessageHistory

_TMP = Path(tempfile.mkdtemp(prefix="ts-conformance-"))
_NAMES = ("InMemoryChatMessageHistory(",)


class StoreChatMessageHistory(TranscriptChatMessageHistory):  # type: ignore[misc,valid-type]
    __doc__ = TranscriptChatMessageHistory.__doc__  # the real class's (names the deprecation)

    def __init__(self, messages: Sequence[Any] = (), **_: Any) -> None:
        super().__init__(uuid.uuid4().hex, f"sqlite:///{_TMP / uuid.uuid4().hex}.sqlite")
        if messages:
            self.add_messages(list(messages))

    def __eq__(self, other: object) -> bool:
        # The in-memory history is a pydantic model, equal by its messages; the tests compare
        # their dict of histories with expected ones: ours compare what is stored.
        if isinstance(other, TranscriptChatMessageHistory):
            return bool(self.messages == other.messages)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def _install() -> None:
    import langchain_core.chat_history

    langchain_core.chat_history.InMemoryChatMessageHistory = StoreChatMessageHistory  # type: ignore[misc]


_install()


#: node id -> why it does not apply (none: every test of the two files runs).
EXCLUDED: dict[str, str] = {}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep = list(items)
    select_excluded(config, keep, [], EXCLUDED)
    items[:] = keep
