"""The one pairing rule (store.core.pairing), as storage, repair and rendering all apply it."""

from __future__ import annotations

from store import Message, TextPart, ToolCall, ToolResult
from store.core.pairing import Pairing, pair_messages
from store.replay.common import Pairs


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def calls(*items: tuple[str | None, str]) -> Message:
    return Message("assistant", tuple(ToolCall(i, n, {}) for i, n in items))


def result(call_id: str | None, name: str | None = None, role: str = "tool") -> Message:
    return Message(role, (ToolResult(call_id, "out", name=name),))  # type: ignore[arg-type]


class TestById:
    def test_a_result_answers_the_call_with_its_id(self):
        assert pair_messages([calls(("a", "f"), ("b", "g")), result("b"), result("a")]) == {
            (1, 0): (0, 1), (2, 0): (0, 0)}

    def test_a_repeated_id_answers_the_latest_earlier_call(self):
        history = [calls(("call_0", "f")), result("call_0"), user("again"),
                   calls(("call_0", "g")), result("call_0")]
        assert pair_messages(history) == {(1, 0): (0, 0), (4, 0): (3, 0)}

    def test_ids_repeated_in_one_message_are_answered_in_order(self):
        history = [calls(("c", "f"), ("c", "g")), result("c"), result("c"), result("c")]
        # the third is a duplicate of the first
        assert pair_messages(history) == {(1, 0): (0, 0), (2, 0): (0, 1), (3, 0): (0, 0)}

    def test_an_id_that_names_no_call_is_an_orphan_never_reattached(self):
        """The lossless issue's case: a user turn, then a result for an unknown call."""
        history = [user("find it"), calls(("call_g1", "grep")), user("continue please"),
                   result("call_zz")]
        assert pair_messages(history) == {}

    def test_an_unknown_id_is_an_orphan_even_within_the_turn(self):
        assert pair_messages([calls(("call_a", "grep")), result("call_zz")]) == {}


class TestByPosition:
    def test_an_id_less_result_answers_the_next_unanswered_call_of_the_turn(self):
        history = [calls((None, "f"), (None, "g")), result(None), result("")]
        assert pair_messages(history) == {(1, 0): (0, 0), (2, 0): (0, 1)}

    def test_a_named_id_less_result_answers_the_call_with_that_name(self):
        history = [calls((None, "f"), (None, "g")), result(None, "g"), result(None, "f")]
        assert pair_messages(history) == {(1, 0): (0, 1), (2, 0): (0, 0)}

    def test_a_new_user_turn_closes_the_calls(self):
        history = [calls((None, "f")), user("never mind"), result(None)]
        assert pair_messages(history) == {}

    def test_a_user_message_carrying_results_keeps_the_turn_open(self):
        history = [calls((None, "f"), (None, "g")), result(None, role="user"),
                   result(None, role="user")]
        assert pair_messages(history) == {(1, 0): (0, 0), (2, 0): (0, 1)}

    def test_a_substituted_id_answers_an_id_less_call(self):
        """pydantic-ai invents ids for calls that had none: the call has no id to contradict."""
        history = [calls(("", "f")), result("pyd_ai_cee885c6")]
        assert pair_messages(history) == {(1, 0): (0, 0)}

    def test_a_substituted_id_never_answers_a_call_that_has_an_id(self):
        assert pair_messages([calls(("x", "f")), result("y")]) == {}

    def test_a_result_matching_nothing_is_kept_unlinked(self):
        assert pair_messages([result(None), result("q")]) == {}


def test_the_incremental_pairing_equals_the_sequence_pairing():
    """Storage primes a Pairing with stored calls; fed one message at a time it must give the
    same links as pairing the whole sequence at once."""
    history = [user("a"), calls((None, "f"), ("k", "g")), result("k"), result(None),
               user("b"), result(None), calls(("k", "h")), result("k"), result("zz")]
    pairing = Pairing()
    links = {}
    for i, message in enumerate(history):
        pairing.begin_message(message.role, bool(message.tool_results))
        pairing.add_calls(i, ((k, c.id, (c.name,)) for k, c in enumerate(message.tool_calls)))
        for j, res in enumerate(message.tool_results):
            ref = pairing.link(res.call_id, res.name)
            if ref is not None:
                links[(i, j)] = ref
    assert links == pair_messages(history) == {(2, 0): (1, 1), (3, 0): (1, 0), (7, 0): (6, 0)}


def test_the_renderers_find_the_calls_of_the_same_rule():
    history = [calls(("a", "f"), (None, "g")), result("a"), result(None), user("x"),
               result("zz")]
    pairs = Pairs(history)
    assert pairs.find(1, 0).name == "f" and pairs.find(2, 0).name == "g"
    assert pairs.find(4, 0) is None
