"""The transparency log on both backends (issue 38): every message and trust event a leaf in
order, proofs an auditor checks offline with only the public key (the standalone verifier),
erasure that keeps every proof, and raw-SQL tampering of a leaf's content, order or count
caught by ``verify`` or by the proofs."""

from __future__ import annotations

import base64

import orjson
import pytest
from sqlalchemy import text

from store.core.errors import LogProofError
from store.tlog import verifier
from store.tlog.bundle import LeafExtra, entry_leaf, parse_proof
from store.tlog.note import Signer, sign_note

TURN = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": "running ls", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "bash", "arguments": '{"command": "ls -la"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nb.txt"},
    {"role": "assistant", "content": "two files"},
]

SIGNER = Signer.generate("test.invalid/key")
KEY = str(SIGNER.verifier)


def sql(store, statement: str, **params) -> list:
    with store.engine.begin() as conn:
        result = conn.execute(text(statement), params)
        return list(result) if result.returns_rows else []


def log_errors(store, **kwargs) -> list[str]:
    return [p.detail for p in store.verify(**kwargs).errors if p.check == "log"]


def entry_of(bundle: str) -> list:
    extra = LeafExtra.decode(parse_proof(bundle).extra)
    return orjson.loads(extra.entry) if extra.entry else []


@pytest.fixture
def filled(store):
    store.append("s1", TURN)
    store.append("s2", TURN[:2])
    return store


class TestLeaves:
    def test_messages_and_events_are_leaves_in_order(self, filled):
        store = filled
        assert store.log_head().size == 6  # s1's four messages, then s2's two
        store.hold("s2", "litigation", actor="legal")
        assert store.release("s2")
        store.append("s2", TURN[2:])
        head = store.log_head()
        assert head.size == 10
        kinds = sql(store, "SELECT leaf_index, kind, subject, position FROM log_leaves "
                           "ORDER BY leaf_index")
        assert [tuple(r) for r in kinds] == [
            (0, "message", "s1", 0), (1, "message", "s1", 1), (2, "message", "s1", 2),
            (3, "message", "s1", 3), (4, "message", "s2", 0), (5, "message", "s2", 1),
            (6, "hold", "s2", None), (7, "release", "s2", None),
            (8, "message", "s2", 2), (9, "message", "s2", 3)]
        digest = sql(store, "SELECT digest FROM messages WHERE session_id = 's1' "
                            "AND position = 2")[0][0]
        bundle = store.log_prove("s1", 2, SIGNER)
        assert entry_of(bundle) == ["message", "s1", 2, digest]
        done = verifier.verify_text(bundle, KEY)
        assert done.kind == "inclusion" and done.size == 10
        assert entry_of(store.log_prove("s2", None, SIGNER))[:3] == ["message", "s2", 3]
        assert store.verify().ok

    def test_salts_differ_so_equal_messages_make_different_leaves(self, store):
        store.append("a", TURN[:1])
        store.append("b", TURN[:1])
        store.log_head()
        rows = sql(store, "SELECT leaf_hash, salt FROM log_leaves ORDER BY leaf_index")
        assert len(rows) == 2 and rows[0][0] != rows[1][0] and rows[0][1] != rows[1][1]

    def test_an_append_writes_no_leaf(self, store):
        store.append("a", TURN)
        assert sql(store, "SELECT count(*) FROM log_leaves")[0][0] == 0
        assert store.log_head().size == 4  # caught up before the log answers
        assert sql(store, "SELECT logged_position FROM sessions")[0][0] == 4

    def test_an_unknown_session_is_a_usage_error(self, filled):
        with pytest.raises(Exception, match="no leaf for session 'nobody'"):
            filled.log_prove("nobody", None, SIGNER)


class TestErasure:
    def test_an_old_checkpoint_still_gets_valid_proofs_after_an_erasure(self, filled):
        store = filled
        old = store.log_checkpoint(SIGNER)
        before_bundle = store.log_prove("s1", 1, SIGNER)
        leaf_before = LeafExtra.decode(parse_proof(before_bundle).extra).leaf
        receipts = store.erase(["s1"], reason="subject request", actor="dpo")
        receipt = receipts[0]
        assert receipt.log_leaf == 6
        assert receipt.log_before.split("\n")[1] == "6"
        assert receipt.log_after.split("\n")[1] == "7"
        # the receipt's checkpoints, signed, verify; the old one is extended by the new
        signed_after = sign_note(receipt.log_after, SIGNER)
        assert verifier.verify_text(signed_after, KEY).size == 7
        # salts and entries of the erased messages are gone, their leaf hashes stay
        rows = sql(store, "SELECT salt, entry, leaf_hash FROM log_leaves "
                          "WHERE subject = 's1' AND kind = 'message' ORDER BY position")
        assert len(rows) == 4 and all(r[0] is None and r[1] is None for r in rows)
        assert bytes(rows[1][2]) == leaf_before
        # consistency from the old checkpoint, offline
        proof = store.log_consistency(old, SIGNER)
        done = verifier.verify_text(proof, KEY, old)
        assert done.kind == "consistency" and "extends the old tree of 6" in done.facts[-1]
        # inclusion of the tombstone, with its entry
        tomb = store.log_prove("s1", None, SIGNER)
        entry = entry_of(tomb)
        assert entry[:3] == ["tombstone", "erase", "s1"] and entry[5] == 4
        assert verifier.verify_text(tomb, KEY).facts[-1].startswith("leaf 6 is included")
        # inclusion of an erased message's leaf: proved, its content not provable
        erased = store.log_prove("s1", 1, SIGNER)
        assert LeafExtra.decode(parse_proof(erased).extra).entry is None
        assert any("erased" in f for f in verifier.verify_text(erased, KEY).facts)
        # the bundle taken before the erasure still verifies (its checkpoint is older)
        assert verifier.verify_text(before_bundle, KEY).size == 6
        assert store.verify(checkpoint=old, log_key=KEY).ok

    def test_truncate_and_delete_are_logged(self, filled):
        store = filled
        old = store.log_checkpoint(SIGNER)
        assert store.truncate("s1", 2) == 2
        store.append("s1", [{"role": "user", "content": "again"}])
        store.delete_session("s2")
        kinds = [r[0] for r in sql(store, "SELECT kind FROM log_leaves ORDER BY leaf_index")]
        assert kinds[6:] == ["tombstone", "message", "tombstone"]
        assert store.verify(checkpoint=old, log_key=KEY).ok
        again = store.log_prove("s1", 2, SIGNER)  # the new message at position 2
        assert entry_of(again)[:3] == ["message", "s1", 2]
        verifier.verify_text(again, KEY)
        verifier.verify_text(store.log_consistency(old, SIGNER), KEY, old)


class TestTampering:
    def test_editing_a_message_is_caught(self, filled):
        filled.log_head()
        sql(filled, "UPDATE messages SET text = 'rewritten' WHERE session_id = 's1' "
                    "AND position = 1")
        # the chain breaks; recompute the digest too and the log still sees it
        assert not filled.verify().ok
        sql(filled, "UPDATE messages SET digest = :d WHERE session_id = 's1' "
                    "AND position = 1", d="0" * 64)
        assert any("differs from its log leaf" in e for e in log_errors(filled))

    def test_editing_a_leaf_is_caught(self, filled):
        filled.log_head()
        sql(filled, "UPDATE log_leaves SET leaf_hash = :h WHERE leaf_index = 2",
            h=b"\x01" * 32)
        assert "log leaf 2 no longer matches its entry" in log_errors(filled)

    def test_a_consistent_rewrite_is_caught_by_the_auditors_checkpoint(self, filled):
        store = filled
        old = store.log_checkpoint(SIGNER)
        # the operator re-salts leaf 1 so that the row is self-consistent
        salt, entry = sql(store, "SELECT salt, entry FROM log_leaves WHERE leaf_index = 1")[0]
        new_salt = b"\x07" * 32
        sql(store, "UPDATE log_leaves SET salt = :s, leaf_hash = :h WHERE leaf_index = 1",
            s=new_salt, h=entry_leaf(new_salt, entry.encode()))
        assert log_errors(store) == []  # nothing inside the database says so
        errors = log_errors(store, checkpoint=old, log_key=KEY)
        assert errors and "rewritten" in errors[0]
        with pytest.raises(verifier.VerificationError, match="forked"):
            verifier.verify_text(store.log_consistency(old, SIGNER), KEY, old)
        store.append("s3", TURN[:1])  # a later, larger tree does not hide it
        with pytest.raises(verifier.VerificationError, match="rewritten"):
            verifier.verify_text(store.log_consistency(old, SIGNER), KEY, old)
        del salt

    def test_reordered_leaves_are_caught(self, filled):
        store = filled
        old = store.log_checkpoint(SIGNER)
        sql(store, "UPDATE log_leaves SET leaf_index = 100 WHERE leaf_index = 0")
        sql(store, "UPDATE log_leaves SET leaf_index = 0 WHERE leaf_index = 4")
        sql(store, "UPDATE log_leaves SET leaf_index = 4 WHERE leaf_index = 100")
        errors = log_errors(store, checkpoint=old, log_key=KEY)
        assert any("rewritten" in e for e in errors)
        with pytest.raises(verifier.VerificationError):
            verifier.verify_text(store.log_consistency(old, SIGNER), KEY, old)

    def test_a_removed_leaf_is_caught(self, filled):
        store = filled
        old = store.log_checkpoint(SIGNER)
        sql(store, "DELETE FROM log_leaves WHERE leaf_index = 3")
        assert any("leaf 3 is missing" in e for e in log_errors(store))
        with pytest.raises(LogProofError, match="missing"):
            store.log_head()
        sql(store, "DELETE FROM log_leaves WHERE leaf_index > 2")  # cut the end off
        errors = log_errors(store, checkpoint=old, log_key=KEY)
        assert any("rolled back" in e for e in errors)
        assert any("not in the log" in e for e in errors)

    def test_a_message_deleted_behind_the_stores_back_is_caught(self, filled):
        filled.log_head()
        sql(filled, "DELETE FROM messages WHERE session_id = 's2' AND position = 1")
        sql(filled, "UPDATE sessions SET next_position = 1 WHERE session_id = 's2'")
        assert any("gone without a tombstone" in e for e in log_errors(filled))

    def test_a_forged_checkpoint_is_refused(self, filled):
        old = filled.log_checkpoint(SIGNER)
        other = Signer.generate("test.invalid/key")
        with pytest.raises(LogProofError):
            filled.verify(checkpoint=old, log_key=str(other.verifier))
        lines = old.split("\n")
        lines[2] = base64.b64encode(b"\x00" * 32).decode()
        with pytest.raises(LogProofError):
            filled.verify(checkpoint="\n".join(lines), log_key=KEY)


def test_the_log_catch_up_holds_no_snapshot_between_its_chunks(tmp_path, monkeypatch):
    """SQLite: before each chunk of the log's catch-up, a checkpoint from another connection
    copies every frame of the write-ahead log (the probe's read transaction, held over the
    catch-up, kept it from copying what the catch-up wrote)."""
    import sqlite3

    from store import TranscriptStore
    from store.db.proofs import tlog

    path = tmp_path / "log.sqlite"
    seen: list[tuple[int, int, int]] = []
    chunk = tlog.catch_up_chunk

    def checked(conn, **kwargs):
        with sqlite3.connect(path) as other:
            seen.append(other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())
        return chunk(conn, **kwargs)

    monkeypatch.setattr(tlog, "LOG_CHUNK", 2)
    monkeypatch.setattr(tlog, "catch_up_chunk", checked)
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        for number in range(7):
            opened.append(f"s{number}", TURN)
        added = opened.update_log()

    assert added == 7 * len(TURN)
    assert len(seen) == 5  # (four chunks of two sessions or fewer, then one that finds none)
    # (busy, frames in the log, frames copied): every frame copied, each time
    assert all(busy == 0 and copied == frames for busy, frames, copied in seen), seen
