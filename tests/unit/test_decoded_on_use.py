"""A stored message's envelope is decoded at its first use (``store.core.model.DecodedOnUse``):
not when the message is built, copied or replaced; once; then it is the frozen mapping it
decoded to, in every way a reader can tell."""

from __future__ import annotations

import copy
import pickle
from dataclasses import replace
from types import MappingProxyType

import pytest

from store.core.model import EMPTY_EXTRAS, DecodedOnUse, Message, TextPart


def _counted(value: object) -> tuple[DecodedOnUse, list[int]]:
    calls: list[int] = []

    def decode() -> object:
        calls.append(1)
        return value

    return DecodedOnUse(decode), calls


def test_a_message_holds_it_undecoded_until_it_is_read() -> None:
    meta, calls = _counted({"timestamp": "2025-01-01T00:00:00Z", "usage": {"input": 3}})
    message = Message("assistant", (TextPart("hi"),), metadata=meta)
    moved = replace(message, parts=(TextPart("hello"),))
    assert calls == [] and moved.metadata is meta  # (built and replaced: not decoded)
    assert moved.metadata["usage"] == {"input": 3}
    assert moved.metadata.get("timestamp") == "2025-01-01T00:00:00Z"
    assert dict(message.metadata) == {"timestamp": "2025-01-01T00:00:00Z",
                                      "usage": {"input": 3}}
    assert calls == [1]  # once


def test_it_reads_as_the_frozen_mapping_it_decodes_to() -> None:
    meta, _ = _counted({"a": 1, "b": [1, 2]})
    assert meta == {"a": 1, "b": [1, 2]} and meta == MappingProxyType({"a": 1, "b": [1, 2]})
    assert meta != {"a": 2}
    assert list(meta) == ["a", "b"] and len(meta) == 2 and "a" in meta and "z" not in meta
    assert repr(meta) == repr(MappingProxyType({"a": 1, "b": [1, 2]}))
    with pytest.raises(TypeError):
        meta["a"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        hash(meta)
    for again in (pickle.loads(pickle.dumps(meta)), copy.copy(meta), copy.deepcopy(meta)):
        assert again == {"a": 1, "b": [1, 2]}
    empty, _ = _counted({})
    assert empty == {} and pickle.loads(pickle.dumps(empty)) is EMPTY_EXTRAS


def test_what_cannot_be_decoded_fails_when_it_is_read() -> None:
    def broken() -> object:
        raise ValueError("not JSON")

    message = Message("user", (TextPart("kept"),), metadata=DecodedOnUse(broken))
    assert message.text == "kept"  # the parts are there
    with pytest.raises(ValueError, match="not JSON"):
        dict(message.metadata)


def test_a_loaded_message_gives_its_envelope_on_use(tmp_path) -> None:
    from store import TranscriptStore

    record = {"role": "assistant", "content": "hi", "metadata": {"cwd": "/w", "n": 2**70}}
    with TranscriptStore.open(f"sqlite:///{tmp_path / 's.sqlite'}") as db:
        db.append("s", [Message("assistant", (TextPart("hi"),), extras={"id": "m1"},
                                metadata={"cwd": "/w", "n": 2**70}), record])
        loaded = [m.message for m in db.load("s").messages]
    assert type(loaded[0].metadata) is DecodedOnUse
    assert loaded[0].metadata == {"cwd": "/w", "n": 2**70}  # (exact: a big integer stays)
    assert loaded[0].extras == {"id": "m1"}
