"""Tamper evidence (issue 27): chained digests, ``verify`` and ``verify --head``, on both
backends; every tampering is done with plain SQL behind the store's back."""

from __future__ import annotations

import pytest
from backends import is_citus
from sqlalchemy import text

from store.trust.chain import GENESIS, message_digest

TURN = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": "running ls", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "bash", "arguments": '{"command": "ls -la"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nb.txt"},
    {"role": "assistant", "content": "two files"},
    {"role": "user", "content": "thanks"},
]


def sql(store, statement: str, **params) -> None:
    with store.engine.begin() as conn:
        conn.execute(text(statement), params)


def chain_problems(report):
    return [(p.session_id, p.position) for p in report.errors if p.check == "chain"]


def head_problems(report):
    return [(p.session_id, p.position, p.detail) for p in report.errors if p.check == "head"]


@pytest.fixture
def filled(store):
    store.append("s", TURN)
    store.append("t", TURN[:2])
    return store


class TestChains:
    def test_a_clean_store_verifies_and_every_message_has_its_digest(self, filled):
        assert filled.verify().ok
        with filled.engine.connect() as conn:
            rows = conn.execute(text("SELECT position, digest FROM messages "
                                     "WHERE session_id = 's' ORDER BY position")).all()
            head = conn.execute(text("SELECT chain_digest FROM sessions "
                                     "WHERE session_id = 's'")).scalar_one()
        assert [p for p, _ in rows] == [0, 1, 2, 3, 4]
        assert len({d for _, d in rows}) == 5 and all(len(d) == 64 for _, d in rows)
        assert head == rows[-1][1]

    def test_appends_in_several_batches_chain_like_one(self, store):
        store.append("one", TURN)
        for record in TURN:
            store.append("many", [record])
        with store.engine.connect() as conn:
            digests = {sid: conn.execute(text(
                "SELECT digest FROM messages WHERE session_id = :s ORDER BY position"),
                {"s": sid}).scalars().all() for sid in ("one", "many")}
        # (times differ between the two sessions, so compare the chain rule, not values)
        assert len(digests["one"]) == len(digests["many"]) == 5
        assert store.verify().ok

    @pytest.mark.parametrize(("statement", "position"), [
        ("UPDATE messages SET text = 'edited' WHERE session_id = 's' AND position = 3", 3),
        ("UPDATE tool_results SET content_json = '\"edited\"' WHERE session_id = 's'", 2),
        ("UPDATE messages SET parts_json = replace(parts_json, 'thanks', 'THANKS') "
         "WHERE session_id = 's' AND position = 4", 4),
        ("UPDATE tool_calls SET wire_json = replace(wire_json, 'ls -la', 'rm -rf') "
         "WHERE session_id = 's'", 1),
        ("UPDATE messages SET created_at = created_at + interval '1 day' "
         "WHERE session_id = 's' AND position = 0", 0),
        ("UPDATE messages SET role = 'system' WHERE session_id = 's' AND position = 0", 0),
        ("UPDATE tool_results SET is_error = NOT is_error WHERE session_id = 's'", 2),
        ("DELETE FROM messages WHERE session_id = 's' AND position = 3", 3),
        ("DELETE FROM messages WHERE session_id = 's' AND position = 4", 4),
        ("INSERT INTO messages (session_id, position, role, text, parts_json, created_at, "
         "digest) SELECT session_id, 5, role, 'forged', parts_json, created_at, digest "
         "FROM messages WHERE session_id = 's' AND position = 4", 5),
        ("UPDATE messages SET position = -1 - position WHERE session_id = 's' "
         "AND position IN (3, 4); "
         "UPDATE messages SET position = CASE position WHEN -4 THEN 4 ELSE 3 END "
         "WHERE session_id = 's' AND position < 0", 3),
    ], ids=["message-text", "result-content", "parts", "call-wire", "time", "role",
            "result-error-flag", "delete-middle", "delete-last", "insert-at-end", "reorder"])
    def test_plain_sql_tampering_is_caught_at_its_position(self, filled, statement,
                                                           position):
        if filled.dialect == "sqlite":
            statement = statement.replace("created_at + interval '1 day'",
                                          "datetime(created_at, '+1 day')")
            statement = statement.replace("NOT is_error", "1 - is_error")
        elif is_citus(filled.engine.url.render_as_string(hide_password=False)):
            # Citus refuses STABLE functions over columns in an UPDATE: a constant time.
            statement = statement.replace("created_at + interval '1 day'",
                                          "TIMESTAMPTZ '2001-02-03 04:05:06+00'")
        for part in statement.split("; "):
            sql(filled, part)
        report = filled.verify()
        assert not report.ok
        assert ("s", position) in chain_problems(report)
        assert all(sid == "s" for sid, _ in chain_problems(report))  # "t" is untouched

    def test_the_report_names_the_first_position_only(self, filled):
        sql(filled, "UPDATE messages SET text = 'x' WHERE session_id = 's' AND position >= 1")
        assert chain_problems(filled.verify()) == [("s", 1)]


class TestHead:
    def test_a_head_verifies_against_a_grown_store(self, filled):
        head = filled.record_head()
        assert head.startswith("tsh1-2-7-")
        filled.append("s", [{"role": "assistant", "content": "more"}])
        filled.append("new", TURN[:1])
        report = filled.verify(head=head)
        assert report.ok, report.problems

    def test_the_same_state_gives_the_same_head(self, filled):
        assert filled.record_head() == filled.record_head()

    def test_a_whole_session_removed_with_plain_sql_is_caught(self, filled):
        head = filled.record_head()
        sql(filled, "DELETE FROM sessions WHERE session_id = 't'")
        report = filled.verify(head=head)
        assert report.errors and head_problems(report)[0][0] == "t"
        assert filled.verify().ok  # without the head nothing is left to compare with

    def test_a_recomputed_rollback_is_caught_by_the_head(self, filled):
        """An insider who deletes the last message and rewrites the session's chain head and
        length leaves chains that verify on their own: the head still tells."""
        head = filled.record_head()
        with filled.engine.begin() as conn:
            before = conn.execute(text("SELECT digest FROM messages WHERE session_id = 's' "
                                       "AND position = 3")).scalar_one()
            conn.execute(text("DELETE FROM messages WHERE session_id = 's' AND position = 4"))
            conn.execute(text("UPDATE sessions SET next_position = 4, chain_digest = :d "
                              "WHERE session_id = 's'"), {"d": before})
        assert filled.verify().ok
        problems = head_problems(filled.verify(head=head))
        assert problems and problems[0][:2] == ("s", 4) and "rolled back" in problems[0][2]

    def test_a_fully_recomputed_edit_is_caught_by_the_head(self, filled):
        head = filled.record_head()
        with filled.engine.begin() as conn:
            conn.execute(text("UPDATE messages SET text = 'rewritten' "
                              "WHERE session_id = 't' AND position = 0"))
        _recompute(filled, "t")
        assert filled.verify().ok
        problems = head_problems(filled.verify(head=head))
        assert [(s, p) for s, p, _ in problems] == [("t", 1)]

    def test_a_removed_or_altered_head_record_is_reported(self, filled):
        head = filled.record_head()
        sql(filled, "UPDATE chain_heads SET body = replace(body, '\"t\",2', '\"t\",1')")
        assert "altered" in head_problems(filled.verify(head=head))[0][2]
        sql(filled, "DELETE FROM chain_heads")
        assert "not recorded" in head_problems(filled.verify(head=head))[0][2]
        assert "not a head" in head_problems(filled.verify(head="nonsense"))[0][2]

    def test_sanctioned_removals_keep_the_head_valid(self, filled):
        filled.append("u", TURN)
        filled.append("v", TURN)
        head = filled.record_head()
        filled.truncate("s", 2)
        filled.delete_session("t")
        filled.erase(["u"], reason="subject request")
        filled.fork("v", 3, "w")
        filled.append("w", [{"role": "user", "content": "after the fork"}])
        report = filled.verify(head=head)
        assert report.ok, report.problems
        kinds = sorted((t.session_id, t.kind) for t in filled.tombstones())
        assert kinds == [("s", "truncate"), ("t", "delete"), ("u", "erase")]

    def test_a_forged_tombstone_after_the_head_still_needs_it_to_exist(self, filled):
        filled.delete_session("t")
        head = filled.record_head()
        sql(filled, "DELETE FROM tombstones")
        problems = head_problems(filled.verify(head=head))
        assert problems and "tombstone" in problems[0][2]


def _recompute(store, sid: str) -> None:
    """What an insider who knows the rule can do: recompute a session's digests."""
    from store.db.proofs.chains import recompute

    with store.engine.begin() as conn:
        digests = recompute(conn, sid)
        for position, digest in digests:
            conn.execute(text("UPDATE messages SET digest = :d WHERE session_id = :s "
                              "AND position = :p"), {"d": digest, "s": sid, "p": position})
        conn.execute(text("UPDATE sessions SET chain_digest = :d WHERE session_id = :s"),
                     {"d": digests[-1][1], "s": sid})


def test_the_genesis_and_rule_are_fixed():
    """The digest rule is part of the stored format: changing it needs a new version (and a
    revision that recomputes every chain)."""
    assert GENESIS == "560e17b355dfe554f3526496015ded2dc1883eb875f7e73a7594abf0d65c3d1e"
    content = ("k", None, "user", None, "hi", "[]", None, None, 0)
    one = message_digest(GENESIS, 0, content, [], [])
    assert one == "60e5302c18c5d7611ede769c6dd14a36ceeb227b65227790c3d233eeb3d66e62"
    assert one != message_digest(GENESIS, 1, content, [], [])
