"""Token usage kept by the importers (issue 26 item 3) and reported with costs (issue 24),
on both backends: one response written on several lines counts once, with its final count;
Codex counts each request once; Gemini CLI's counts map to the same four; a response a
resumed session repeats counts once; a model without a price shows tokens and no cost."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from usage_agent_files import SONNET, claude_lines, codex_lines, gemini_chat, write_jsonl

from store import TranscriptStore, import_paths, load_prices, tool_context, usage_report
from store.core.errors import ConfigurationError, UsageError
from store.usage.tokens import TokenUsage


def rows(db: TranscriptStore) -> list[tuple[object, ...]]:
    with db.engine.connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(
            "SELECT session_id, position, model, request_id, response_id, input_tokens, "
            "output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens "
            "FROM message_usage ORDER BY session_id, position").all()]


def test_a_claude_code_response_on_three_lines_counts_once_with_its_final_count(
    db: TranscriptStore, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "p" / "s1.jsonl", claude_lines("s1", "2025-09-03"))

    import_paths(db, [path], format="claude-code", settle=0)

    assert rows(db) == [("s1", 1, SONNET, "req_m1", "msg_m1", 4, 120, 1500, 12000, 0),
                        ("s1", 3, SONNET, "req_m2", "msg_m2", 7, 41, 300, 13500, 0)]
    import_paths(db, [path], format="claude-code", settle=0)  # again: nothing twice
    assert len(rows(db)) == 2


def test_codex_counts_each_request_once_and_splits_cached_input(
    db: TranscriptStore, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "rollout.jsonl", codex_lines())

    import_paths(db, [path], format="codex", settle=0)

    sid = "0199aaaa-0000-7000-8000-00000000c0de"
    assert [r[2:] for r in rows(db)] == [
        ("gpt-5.1-codex", None, None, 1000, 60, 0, 8000, 20),  # the repeated event: once
        ("gpt-5.1-codex", None, None, 500, 30, 0, 9000, 0)]
    assert {r[0] for r in rows(db)} == {sid}


def test_gemini_cli_tokens_map_to_the_same_four_counts(
    db: TranscriptStore, tmp_path: Path
) -> None:
    path = tmp_path / "session-1.json"
    path.write_bytes(orjson.dumps(gemini_chat()))

    import_paths(db, [path], format="gemini-cli", settle=0)

    # input 5000 of which 3000 cached, plus 10 tool-use prompt tokens; thoughts are output
    assert [r[2:] for r in rows(db)] == [
        ("gemini-2.5-pro", None, "g2", 2010, 140, 0, 3000, 100)]


def test_the_report_sums_per_day_and_prices_each_response(
    db: TranscriptStore, tmp_path: Path
) -> None:
    write_jsonl(tmp_path / "p" / "a.jsonl", claude_lines("a", "2025-09-03"))
    # a resumed session's file repeats the first file's responses: counted once
    write_jsonl(tmp_path / "p" / "b.jsonl", claude_lines("b", "2025-09-03")
                + claude_lines("b", "2025-09-04", prefix="n"))
    write_jsonl(tmp_path / "r.jsonl", codex_lines())
    import_paths(db, [tmp_path / "p"], format="claude-code", settle=0)
    import_paths(db, [tmp_path / "r.jsonl"], format="codex", settle=0)

    by_day = {t.key: t for t in usage_report(db, by="day")}

    assert sorted(by_day) == ["2025-09-03", "2025-09-04", "2025-11-17"]
    first = by_day["2025-09-03"]
    assert (first.input_tokens, first.output_tokens, first.cache_creation_tokens,
            first.cache_read_tokens, first.responses) == (11, 161, 1800, 25500, 2)
    expected = (11 * 3 + 161 * 15 + 1800 * 3.75 + 25500 * 0.3) / 1e6
    assert first.cost_usd == pytest.approx(expected, rel=1e-9)
    codex = by_day["2025-11-17"]
    assert codex.cost_usd == pytest.approx((1500 * 1.25 + 90 * 10 + 17000 * 0.125) / 1e6)
    by_agent = {t.key: t.responses for t in usage_report(db, by="agent")}
    assert by_agent == {"claude-code": 4, "codex": 2}
    assert [t.key for t in usage_report(db, by="week")] == ["2025-09-01", "2025-11-17"]
    assert [t.key for t in usage_report(db, by="month")] == ["2025-09", "2025-11"]


def test_a_model_without_a_price_keeps_its_tokens_and_is_named(
    db: TranscriptStore, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "p" / "x.jsonl",
                       claude_lines("x", "2025-09-03", model="claude-from-the-future-9"))
    import_paths(db, [path], format="claude-code", settle=0)

    (total,) = usage_report(db, by="model")

    assert total.key == "claude-from-the-future-9"
    assert total.output_tokens == 161 and total.cost_usd == 0.0
    assert total.unpriced_models == {"claude-from-the-future-9"}
    price_file = tmp_path / "prices.json"
    price_file.write_bytes(orjson.dumps({"claude-from-the-future-9": {
        "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}))
    (priced,) = usage_report(db, by="model", prices=load_prices(price_file))
    assert priced.unpriced_models == set()
    assert priced.cost_usd == pytest.approx((11 * 1 + 161 * 2) / 1e6)


def test_tool_context_estimates_the_tokens_results_carried(
    db: TranscriptStore, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "p" / "t.jsonl", claude_lines("t", "2025-09-03"))
    import_paths(db, [path], format="claude-code", settle=0)

    (bash,) = tool_context(db, by="day")

    assert (bash.key, bash.tool, bash.calls, bash.results) == ("2025-09-03", "bash", 1, 1)
    assert bash.estimated and bash.context_tokens == -(-bash.result_chars // 4) > 100
    with pytest.raises(UsageError):
        tool_context(db, by="session")


def test_record_usage_refuses_a_read_only_store_and_skips_unknown_keys(
    db: TranscriptStore, store_url: str
) -> None:
    db.append("s", [{"role": "assistant", "content": "hi"}], keys=["k"])

    assert db.record_usage("s", {"k": TokenUsage(1, 2, model="gpt-5"),
                                 "missing": TokenUsage(5)}) == 1
    with TranscriptStore.open(store_url, read_only=True) as reader, pytest.raises(UsageError):
        reader.record_usage("s", {"k": TokenUsage(1)})


def test_a_price_file_that_is_not_json_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text("{nope", encoding="utf-8")

    with pytest.raises(ConfigurationError, match="prices.json: not JSON"):
        load_prices(bad)
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_prices(tmp_path / "missing.json")


def test_a_files_usage_is_committed_with_its_messages_and_read_state(
    db: TranscriptStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last batch of a session carries its usage into the append's transaction (with
    the file's read state): when that write fails, nothing of the batch is kept and the
    next import reads the file again, usage included; it never marks a file read whose
    usage was lost."""
    import store.db.store as store_module

    path = write_jsonl(tmp_path / "p" / "s1.jsonl", claude_lines("s1", "2025-09-03"))
    real = store_module.write_usage

    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("killed between the messages and their usage")

    monkeypatch.setattr(store_module, "write_usage", broken)
    with pytest.raises(RuntimeError, match="killed"):
        import_paths(db, [path], format="claude-code", settle=0)
    assert rows(db) == []
    assert db.list_sessions() == [] or db.load("s1").messages == ()
    monkeypatch.setattr(store_module, "write_usage", real)
    import_paths(db, [path], format="claude-code", settle=0)
    assert [r[:5] for r in rows(db)] == [("s1", 1, SONNET, "req_m1", "msg_m1"),
                                         ("s1", 3, SONNET, "req_m2", "msg_m2")]


def test_append_stores_usage_by_key_in_its_transaction(db: TranscriptStore) -> None:
    usage = {"k2": TokenUsage(model=SONNET, input_tokens=3, output_tokens=5,
                              response_id="msg_a"),
             "no-such-key": TokenUsage(model=SONNET, input_tokens=1, response_id="msg_b")}
    db.append("u1", [{"role": "user", "content": "hi"},
                     {"role": "assistant", "content": "hello"}], keys=["k1", "k2"],
              usage=usage)
    assert [r[:3] + r[5:7] for r in rows(db)] == [("u1", 1, SONNET, 3, 5)]
    db.append("u1", [{"role": "user", "content": "again"}], keys=["k3"], usage=usage)
    assert len(rows(db)) == 1  # (a row already there is kept)


def test_tool_context_counts_a_call_once_however_many_results_it_has(
        db: TranscriptStore) -> None:
    """The database sums each call's results before its calls (``tool_context_rows``): a
    call answered twice is one call with two results, a call never answered has none, and
    the week is the UTC Monday's (a Sunday night call is the week before)."""
    import dataclasses

    from store import Message, normalize_message

    def said(role: str, when: str, **fields: object) -> Message:
        return dataclasses.replace(normalize_message({"role": role, **fields}),
                                   metadata={"timestamp": when})

    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "twice", "type": "function",
         "function": {"name": "bash", "arguments": '{"command": "ls"}'}},
        {"id": "never", "type": "function",
         "function": {"name": "Bash", "arguments": '{"command": "pwd"}'}}]}
    db.append("s", [
        said("assistant", "2025-09-07T23:30:00Z", **{k: v for k, v in call.items()
                                                      if k != "role"}),
        said("tool", "2025-09-07T23:31:00Z", tool_call_id="twice", content="12345678"),
        said("tool", "2025-09-08T00:01:00Z", tool_call_id="twice", content="boom",
             is_error=True)], agent="claude-code")

    (week,) = tool_context(db, by="week")
    assert (week.key, week.tool, week.calls, week.results, week.error_results,
            week.result_chars) == ("2025-09-01", "bash", 2, 2, 1,
                                   len('"12345678"') + len('"boom"'))  # (stored JSON)
    (agent,) = tool_context(db, by="agent")
    assert (agent.key, agent.calls, agent.results) == ("claude-code", 2, 2)
