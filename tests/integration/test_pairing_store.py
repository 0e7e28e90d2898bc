"""One pairing rule on both backends: the links storage writes, repair and the renderers agree
(store.core.pairing), on hostile histories and on every corpus file."""

from __future__ import annotations

from test_resume_corpus import FILES, corpus_dir, read_messages

from store import Message, TextPart, ToolCall, ToolResult
from store.core.pairing import pair_messages
from store.replay.common import Pairs
from store.replay.repair import repair

GREP = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_g1", "type": "function",
     "function": {"name": "grep", "arguments": '{"pattern": "TODO"}'}}]}


def stored_links(transcript):
    """Stored links in index space: (message index, result index) -> (index, call index)."""
    index = {m.position: i for i, m in enumerate(transcript.messages)}
    return {(index[r], j): (index[c], k) for (r, j), (c, k) in transcript.links.items()}


class TestAResultForAnUnknownCall:
    """The lossless issue, case 9: never replay another call's output as grep's result."""

    HISTORY = [{"role": "user", "content": "find the TODOs"}, GREP,
               {"role": "user", "content": "continue please"},
               {"role": "tool", "tool_call_id": "call_zz", "content": "rm: done"}]

    def check(self, store):
        transcript = store.load("s")
        assert transcript.links == {}  # stored as an orphan, kept
        assert [r.call_id for m in transcript.messages for r in m.message.tool_results] == [
            "call_zz"]
        repaired = repair(transcript, "openai-chat")
        kinds = [(c.kind, c.call_id) for c in repaired.changes]
        assert ("dropped_orphan_result", "call_zz") in kinds
        assert ("synthesized_result", "call_g1") in kinds
        assert all(kind != "relinked_result" for kind, _ in kinds)
        (answer,) = [r for m in repaired.messages for r in m.tool_results]
        assert answer.call_id == "call_g1" and answer.is_error and "rm: done" not in str(
            answer.content)

    def test_appended_at_once(self, store):
        store.append("s", self.HISTORY)
        self.check(store)

    def test_appended_one_by_one(self, store):
        for record in self.HISTORY:
            store.append("s", [record])
        self.check(store)

    def test_an_id_less_result_after_a_new_user_turn_is_an_orphan(self, store):
        store.append("s", [GREP])
        store.append("s", [{"role": "user", "content": "stop"}])
        store.append("s", [{"role": "function", "name": "grep", "content": "x"}])
        assert store.load("s").links == {}

    def test_an_id_less_result_within_the_turn_is_linked_across_appends(self, store):
        store.append("s", [GREP])
        store.append("s", [{"role": "function", "name": "grep", "content": "x"}])
        assert store.load("s").links == {(1, 0): (0, 0)}

    def test_repeated_ids_in_one_message_are_answered_in_order(self, store):
        store.append("s", [Message("assistant", (ToolCall("c", "f", {}), ToolCall("c", "g", {}))),
                           Message("tool", (ToolResult("c", "1"),)),
                           Message("tool", (ToolResult("c", "2"),))])
        store.append("s", [Message("user", (TextPart("next"),))])
        assert store.load("s").links == {(1, 0): (0, 0), (2, 0): (0, 1)}


def test_stored_links_repair_and_render_agree_on_every_corpus_file(store):
    corpus = corpus_dir()
    disagreements = {}
    for name in FILES:
        session_id = name.replace("/", "__")
        store.append(session_id, read_messages(corpus / name))
        transcript = store.load(session_id)
        messages = [m.message for m in transcript.messages]
        stored = stored_links(transcript)
        fresh = pair_messages(messages)
        pairs = Pairs(messages)
        rendered = {(i, j): ref for i, m in enumerate(messages)
                    for j in range(len(m.tool_results))
                    if (call := pairs.find(i, j)) is not None
                    for ref in [next((i2, k) for i2, m2 in enumerate(messages)
                                     for k, c in enumerate(m2.tool_calls) if c is call)]}
        plain = repair(messages).changes
        stored_repair = repair(transcript).changes
        if not (stored == fresh == rendered) or plain != stored_repair:
            disagreements[name] = (len(stored), len(fresh), len(rendered))
    assert disagreements == {}
    assert len(FILES) >= 18
