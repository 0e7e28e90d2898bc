"""Resume over the recorded corpus, on both backends: every pairing and transcript file is
stored, loaded, repaired for each target and rendered, and the render passes that target's
validator (tests/provider_rules.py); repairing twice equals repairing once.

The corpus is ``$TRANSCRIPT_CORPUS``, else ``<repo>/../shared/corpus``; when it is missing the
tests fail under CI (``CI`` set) and are skipped elsewhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from provider_rules import validate

from store import Message, NotAMessage, ToolCall, normalize_message, normalize_payload
from store.replay.render import render
from store.replay.repair import repair
from store.replay.targets import TARGETS

pytestmark = pytest.mark.corpus

PATTERNS = ("pairing/*.json", "claude_code/*.jsonl", "codex/*.jsonl")


def corpus_path() -> Path:
    configured = os.environ.get("TRANSCRIPT_CORPUS")
    repo = Path(__file__).resolve().parents[2]
    return Path(configured) if configured else repo.parent / "shared" / "corpus"


def corpus_dir() -> Path:
    """The corpus folder, or a failure under CI / a skip elsewhere when it is missing."""
    path = corpus_path()
    if not path.is_dir():
        message = f"transcript corpus not found at {path} (set TRANSCRIPT_CORPUS)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def corpus_files() -> list[str]:
    path = corpus_path()
    if not path.is_dir():
        return []
    return [str(f.relative_to(path)) for pattern in PATTERNS for f in sorted(path.glob(pattern))]


FILES = corpus_files()


def read_messages(path: Path) -> list[Message]:
    if path.suffix == ".json":
        return normalize_payload(json.loads(path.read_text(encoding="utf-8")))
    messages = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            messages.append(normalize_message(json.loads(line)))
        except NotAMessage:
            continue
    return messages


def test_the_corpus_has_the_files_this_test_covers():
    corpus_dir()
    assert len(FILES) >= 18
    assert {f.split("/")[0] for f in FILES} == {"pairing", "claude_code", "codex"}


def test_every_stored_corpus_session_repairs_and_renders_valid_for_every_target(store):
    """One store per backend for the whole corpus (a session per file): problems are collected
    per file and target, so one failure names every file it concerns."""
    corpus = corpus_dir()
    failures: dict[str, object] = {}
    for name in FILES:
        session_id = name.replace("/", "__")
        store.append(session_id, read_messages(corpus / name))
        transcript = store.load(session_id)
        for target in TARGETS:
            repaired = repair(transcript, target)
            problems = validate(target, render(repaired.messages, target))
            calls = [c for m in repaired.messages for c in m.tool_calls]
            results = [r for m in repaired.messages for r in m.tool_results]
            if len(calls) != len(results) or not all(isinstance(c, ToolCall) for c in calls):
                problems.append(f"{len(calls)} calls, {len(results)} results")
            again = repair(repaired.messages, target)
            if again.changes or again.messages != repaired.messages:
                problems.append(f"a second repair changed it: {again.changes[:3]}")
            if problems:
                failures[f"{name} -> {target}"] = problems[:5]
        if store.load(session_id) != transcript:
            failures[name] = "repair changed the stored session"
    assert failures == {}
