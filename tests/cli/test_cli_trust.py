"""The trust commands (issue 27) on both backends: db head, verify --head, sessions erase /
hold / release, sessions show of an erased session, prune."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
from click.testing import CliRunner
from sqlalchemy import text

from store import Message, TextPart, TranscriptStore
from store.cli.main import cli

TURN = [
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": "done"},
]


def run(*args: str, code: int = 0, stdin: str | None = None):
    result = CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def filled(url: str, *ids: str, days_ago: int | None = None) -> None:
    """Sessions of ``TURN``, stored now; with ``days_ago``, their messages carry that age as
    their own time (as an agent's transcript imported late does)."""
    messages: list = TURN
    if days_ago is not None:
        when = (datetime.now(UTC) - timedelta(days=days_ago)).isoformat()
        messages = [Message(m["role"], (TextPart(m["content"]),), metadata={"timestamp": when})
                    for m in TURN]
    with TranscriptStore.open(url) as opened:
        for sid in ids:
            opened.append(sid, messages, agent="codex")


class TestHeadAndVerify:
    def test_a_printed_head_verifies_until_a_session_vanishes(self, store_url):
        filled(store_url, "a", "b")
        head = run("db", "head", "--db", store_url).output.strip()
        assert head.startswith("tsh1-2-4-")
        assert "0 errors" in run("verify", "--db", store_url, "--head", head).output
        with TranscriptStore.open(store_url) as opened, opened.engine.begin() as conn:
            conn.execute(text("DELETE FROM sessions WHERE session_id = 'b'"))
        out = run("verify", "--db", store_url, "--head", head, code=1).output
        assert "[head] b" in out

    def test_verify_names_the_first_bad_position(self, store_url):
        filled(store_url, "a")
        with TranscriptStore.open(store_url) as opened, opened.engine.begin() as conn:
            conn.execute(text("UPDATE messages SET text = 'x' WHERE position = 1"))
        out = run("verify", "--db", store_url, "--json", code=1).output
        rows = [orjson.loads(line) for line in out.splitlines()]
        assert [(r["check"], r["session_id"], r["position"]) for r in rows] == [
            ("chain", "a", 1)]


class TestErase:
    def test_erase_asks_prints_a_receipt_and_show_says_what_happened(self, store_url):
        filled(store_url, "a", "b")
        run("sessions", "erase", "a", "--db", store_url, "--reason", "request 7",
            stdin="n\n", code=0)  # declined: not an error
        receipt = run("sessions", "erase", "a", "--db", store_url, "--reason", "request 7",
                      "--by", "dpo", "--yes", "--json").output
        (row,) = [orjson.loads(line) for line in receipt.splitlines()]
        assert (row["session_id"], row["kind"], row["messages"], row["reason"],
                row["actor"]) == ("a", "erase", 2, "request 7", "dpo")
        assert len(row["digest"]) == 64 and row["scrub"]
        shown = run("sessions", "show", "a", "--db", store_url, code=1).output
        assert "a: erased at" in shown and "by dpo (request 7)" in shown
        assert "2 messages" in shown
        run("verify", "--db", store_url)

    def test_a_held_session_is_refused_until_released(self, store_url):
        filled(store_url, "a")
        run("sessions", "hold", "a", "--db", store_url, "--reason", "case 12")
        out = run("sessions", "erase", "a", "--db", store_url, "--reason", "r", "--yes",
                  code=1).output
        assert "legal hold (case 12)" in out
        run("sessions", "delete", "a", "--db", store_url, "--yes", code=1)
        run("sessions", "release", "a", "--db", store_url)
        run("sessions", "delete", "a", "--db", store_url, "--yes")
        assert "deleted at" in run("sessions", "show", "a", "--db", store_url, code=1).output


class TestPrune:
    def test_dry_run_then_prune(self, store_url):
        filled(store_url, "old", days_ago=120)
        filled(store_url, "new")
        out = run("prune", "--db", store_url, "--older-than", "90d", "--dry-run").output
        assert "would erase old (2 messages)" in out and "1 session would be erased" in out
        out = run("prune", "--db", store_url, "--older-than", "90d", "--agent", "codex",
                  "--yes").output
        assert "erased old" in out and "1 session erased" in out
        with TranscriptStore.open(store_url) as opened:
            assert [s.session_id for s in opened.list_sessions()] == ["new"]

    def test_a_policy_file(self, store_url, tmp_path):
        filled(store_url, "old", days_ago=40)
        policy = tmp_path / "retention.toml"
        policy.write_text('[retention]\nolder_than = "365d"\n[retention.agents]\ncodex = "30d"\n')
        out = run("prune", "--db", store_url, "--policy", str(policy), "--json", "--yes").output
        assert [orjson.loads(line)["session_id"] for line in out.splitlines()] == ["old"]
        policy.write_text('[retention]\nolder = "1d"\n')
        assert "unknown retention setting" in run(
            "prune", "--db", store_url, "--policy", str(policy), code=1).output

    def test_one_criterion_is_needed(self, store_url):
        run("prune", "--db", store_url, code=2)
        run("prune", "--db", store_url, "--older-than", "soon", code=2)


class TestSecrets:
    TOKEN = "ghp_" + "Qw3" * 12

    def test_calls_search_secret_and_audit_secrets(self, store_url):
        with TranscriptStore.open(store_url) as opened:
            opened.append("s", [{"role": "assistant", "tool_calls": [
                {"id": "c1", "type": "function", "function": {
                    "name": "bash",
                    "arguments": f'{{"command": "curl -H \\"token {self.TOKEN}\\" x"}}'}}]}])
        out = run("calls", "search", "--db", store_url, "--secret", "-", "--json",
                  stdin=self.TOKEN + "\n").output
        assert [(orjson.loads(line)["session_id"], orjson.loads(line)["call_id"])
                for line in out.splitlines() if line.startswith("{")] == [("s", "c1")]
        out = run("audit", "secrets", "--db", store_url, "--json").output
        rows = [orjson.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert rows == [{"session_id": "s", "kind": "github_token", "secrets": 1, "calls": 1}]
        assert self.TOKEN not in out
