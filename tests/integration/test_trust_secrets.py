"""Secrets out of the index (issue 27), on both backends: the search index and the argument
views hold markers, never a detected secret; the keyed digest still finds every call that
used a known secret; the wire bytes stay as recorded."""

from __future__ import annotations

from sqlalchemy import text

from store import CallQuery, ViewCondition, search_calls

TOKEN = "ghp_" + "Zx9" * 12
AWS = "AKIA" + "QWERTYUIOPASDFGH"


def calls(token: str, other: str) -> list[dict]:
    return [
        {"role": "user", "content": "deploy"},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments":
             f'{{"command": "git push https://x:{token}@github.com/o/r"}}'}},
            {"id": "c2", "type": "function", "function": {"name": "bash", "arguments":
             '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "pushed"},
        {"role": "tool", "tool_call_id": "c2", "content": f"config: key={other}"},
    ]


def index_text(store) -> str:
    """Everything the search index and argument views hold, as text."""
    with store.engine.connect() as conn:
        views = conn.execute(text("SELECT text FROM call_views")).scalars().all()
        if store.dialect == "postgresql":
            bodies = conn.execute(text("SELECT body FROM search_items")).scalars().all()
        else:  # contentless FTS5: what MATCH finds is what it holds
            bodies = []
    return "\n".join([*views, *bodies])


class TestSecretsOutOfTheIndex:
    def test_the_index_holds_markers_and_search_does_not_find_the_token(self, store):
        store.append("s", calls(TOKEN, AWS))
        store.update_search_index()
        assert search_calls(store, CallQuery(text="git push"))  # indexed, redacted
        assert search_calls(store, CallQuery(text=TOKEN[:20])) == []
        assert search_calls(store, CallQuery(text=AWS)) == []
        assert search_calls(store, CallQuery(text="REDACTED:github_token"))
        assert search_calls(store, CallQuery(
            views=(ViewCondition("command", "git push", "contains"),)))
        assert search_calls(store, CallQuery(
            views=(ViewCondition("command", TOKEN[:20], "contains"),))) == []
        held = index_text(store)
        assert TOKEN not in held and "[REDACTED:" in held
        # the wire bytes stay as recorded (resume needs them)
        assert TOKEN in store.load("s").messages[1].message.tool_calls[0].arguments_text

    def test_a_search_before_the_catch_up_agrees(self, store):
        store.append("s", calls(TOKEN, AWS))
        with store.__class__.open(store.url, read_only=True) as reader:  # no catch-up
            assert search_calls(reader, CallQuery(text="git push"))
            assert search_calls(reader, CallQuery(text=TOKEN[:20])) == []
            assert [h.session_id for h in reader.calls_with_secret(TOKEN)] == ["s"]

    def test_a_known_secret_finds_every_call_that_used_it(self, store):
        store.append("s", calls(TOKEN, AWS))
        store.append("t", calls(TOKEN, "nothing-here"))
        store.append("u", calls("ghp_" + "Other1" * 6, "none"))
        hits = store.calls_with_secret(TOKEN)
        assert [(h.session_id, h.position, h.index) for h in hits] == [("s", 1, 0), ("t", 1, 0)]
        # a secret in a result finds the call it answered
        assert [(h.session_id, h.index) for h in store.calls_with_secret(AWS)] == [("s", 1)]
        assert store.calls_with_secret("ghp_not-stored-anywhere-000000000000") == []
        with store.engine.connect() as conn:
            stored = " ".join(map(str, conn.execute(text(
                "SELECT * FROM call_secrets")).all()))
        assert TOKEN not in stored and AWS not in stored

    def test_the_summary_counts_kinds_never_values(self, store):
        store.append("s", calls(TOKEN, AWS))
        store.append("clean", [{"role": "user", "content": "hi"}])
        rows = store.secrets_summary()
        assert rows == [("s", "aws_access_key_id", 1, 1), ("s", "github_token", 1, 1)]
        assert TOKEN not in repr(rows)

    def test_erasing_a_session_removes_its_secret_digests(self, store):
        store.append("s", calls(TOKEN, AWS))
        store.update_search_index()
        store.erase(["s"], reason="leak")
        assert store.calls_with_secret(TOKEN) == []
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM call_secrets")).scalar_one() == 0
