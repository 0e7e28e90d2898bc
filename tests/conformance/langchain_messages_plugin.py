"""A pytest plugin for langchain-core's own message tests (loaded by scripts/conformance
``langchain-core-messages``): every message those tests build (``BaseMessage`` and its
subclasses: content blocks, tool calls, chunks) is collected; at the end each one is added
to a :class:`~store.integrations.langchain.TranscriptChatMessageHistory` and read back, and
the run fails unless every one comes back equal (same class, same JSON form).

Excluded by design, and reported: a message holding a Python object that has no JSON form
(langchain-core's tests put a ``BadObject`` in a ``ToolMessage`` artifact) is refused with
``RecordError`` ("cannot be stored exactly"), never stored as a lossy repr.

The framework's tests themselves run unchanged (they exercise LangChain, not us): they are
the source of realistic, odd messages.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

_COLLECTED: list[Any] = []


def _install() -> None:
    from langchain_core.messages import BaseMessage

    original = BaseMessage.__init__

    def collecting(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        _COLLECTED.append(self)

    BaseMessage.__init__ = collecting  # type: ignore[method-assign]


_install()


def _round_trip() -> tuple[int, list[str], list[str]]:
    from langchain_core.messages import message_to_dict, messages_from_dict

    from store import StoreError, TranscriptStore
    from store.integrations.langchain import TranscriptChatMessageHistory

    folder = Path(tempfile.mkdtemp(prefix="ts-conformance-"))
    failures: list[str] = []
    refused: list[str] = []
    tried = 0
    distinct: dict[str, Any] = {}  # the tests build many equal messages: each form once
    for message in _COLLECTED:
        try:
            expected = json.dumps(message_to_dict(message), sort_keys=True, default=repr)
        except Exception:  # a half-built message a test made on purpose
            continue
        distinct.setdefault(f"{type(message).__name__}:{expected}", message)
    with TranscriptStore.open(f"sqlite:///{folder / 'messages.sqlite'}") as db:
        for number, message in enumerate(distinct.values()):
            expected = json.dumps(message_to_dict(message), sort_keys=True, default=repr)
            try:
                (itself,) = messages_from_dict([message_to_dict(message)])
            except Exception:  # a custom type LangChain itself cannot rebuild from its own
                continue       # JSON form: nothing to compare with
            if json.dumps(message_to_dict(itself), sort_keys=True, default=repr) != expected:
                continue
            tried += 1
            history = TranscriptChatMessageHistory(f"m{number}", db)
            try:
                history.add_messages([message])
                (back,) = history.messages
            except StoreError as exc:
                line = f"{type(message).__name__}: {type(exc).__name__}: {exc}"
                by_design = type(exc).__name__ == "RecordError" and "cannot be stored " \
                    "exactly" in str(exc)
                (refused if by_design else failures).append(line)
                continue
            got = json.dumps(message_to_dict(back), sort_keys=True, default=repr)
            if type(back) is not type(message) or got != expected:
                failures.append(f"{type(message).__name__}: read back differs: {got[:300]}")
    return tried, failures, refused


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    tried, failures, refused = _round_trip()
    report = os.environ.get("TS_CONFORMANCE_REPORT")
    if report:
        Path(report).write_text(json.dumps({"selected": tried, "excluded": {},
                                            "run": [], "messages": tried,
                                            "failures": failures, "refused": refused,
                                            "tests_failed": session.testsfailed}))
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"== round-tripped {tried} distinct messages built by the tests: "
                            f"{len(failures)} failed, {len(refused)} refused by design")
        for line in refused:
            reporter.write_line(f"refused (no JSON form): {line}")
        for failure in failures:
            reporter.write_line(f"round-trip failed: {failure}")
    if failures:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
