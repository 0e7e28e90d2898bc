"""Issue 13, findings 1 and 2: every output that can carry transcript text honours
``--redact`` (every export target, ``calls search/show``, ``sessions show``), on both backends;
a flag that cannot apply is refused; arguments, results, text, metadata and JSON object keys
are all redacted. (The viewer's ``--redact`` is tested in tests/viewer/test_hardening.py.)"""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

import store
from store.cli.main import cli

# Fake values of realistic shape (none is a live credential).
OPENAI = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
SLACK_HOOK = "https://hooks.slack.com/services/T00000000/B00000000/" + "XXXXXXXXXXXXXXXXXXXXXXXX"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
PEM_HEAD = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn\n"
            "NhAAAAAwEAAQAAAYEAxJ8yZ3bW0Rk2Qm9pQ0t1cVdYbE1lN3ZqS0J4b2VmTnBhT2dYUjNE\n")
PASSWORD = "correct-horse-battery"
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"

#: What must never appear in a redacted output (the distinctive part of each secret).
LEAKS = [OPENAI[8:30], AWS_ID, AWS_SECRET, GITHUB[4:], STRIPE[8:], "XXXXXXXXXXXXXXXXXXXXXXXX",
         JWT[:40], "b3BlbnNzaC1rZXktdjEAAAAA", PASSWORD, HF[3:]]
SID = "leaky"


def records() -> list[object]:
    return [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": f"deploy with {OPENAI} please"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {
                "name": "bash", "arguments": json.dumps(
                    {"command": "cat .env", "password": PASSWORD, AWS_ID: "as a key",
                     "env": {"STRIPE": STRIPE}})}},
            {"id": "call_2", "type": "function", "function": {
                "name": "read_file", "arguments": json.dumps({"path": "~/.ssh/id_rsa"})}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(
            {"Credentials": {"AccessKeyId": AWS_ID, "SecretAccessKey": AWS_SECRET}})
            + f"\nSLACK={SLACK_HOOK}\nHF={HF}"},
        {"role": "tool", "tool_call_id": "call_2", "content": "$ head id_rsa\n" + PEM_HEAD},
        {"role": "assistant", "content": f"Use Authorization: {JWT} and token {GITHUB}"},
    ]


@pytest.fixture
def leaky(store: store.TranscriptStore, store_url: str) -> str:
    store.append(SID, records(), title=f"session with {GITHUB}", provider="openai",
                 cwd="/home/u")
    store.append(SID, [store_message_with_metadata()])
    return store_url


def store_message_with_metadata() -> store.Message:
    return store.Message(role="user", parts=(store.TextPart("thanks"),),
                         metadata={"env": {"TOKEN": GITHUB}, JWT: "a secret key"},
                         extras={"note": f"password={PASSWORD}"})


def run(*args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.output, result.stderr)
    return result.stdout, result.stderr


def assert_clean(text: str) -> None:
    for secret in LEAKS:
        assert secret not in text, secret
    assert "[REDACTED:" in text


class TestExportTargets:
    @pytest.mark.parametrize("target", store.TARGETS)
    def test_every_provider_target_honours_redact(self, leaky, target):
        raw, _ = run("export", SID, "--to", target, "--db", leaky)
        assert GITHUB in raw  # the test's secrets are really there without --redact

        out, err = run("export", SID, "--to", target, "--db", leaky, "--redact")

        assert_clean(out)
        json.loads(out)  # still one valid JSON document
        assert "secrets redacted" in err

    @pytest.mark.parametrize("target", store.TARGETS)
    def test_with_repair_the_report_and_body_are_redacted(self, leaky, target):
        out, err = run("export", SID, "--to", target, "--db", leaky, "--redact", "--repair")

        assert_clean(out)
        for secret in LEAKS:
            assert secret not in err

    def test_a_user_pattern_applies_to_provider_targets(self, leaky):
        out, _ = run("export", SID, "--to", "anthropic", "--db", leaky,
                     "--redact-pattern", r"cat \.env")

        assert "cat .env" not in out and "[REDACTED:pattern]" in out
        assert_clean(out)  # a pattern of one's own comes on top of the built-in detectors

    @pytest.mark.parametrize("target", ["jsonl", "csv"])
    def test_records_targets_redact_everything_keys_and_metadata_included(self, leaky, target):
        out, _ = run("export", SID, "--to", target, "--db", leaky, "--redact")

        assert_clean(out)

    def test_jsonl_keeps_the_structure_and_redacts_keys(self, leaky):
        out, _ = run("export", SID, "--to", "jsonl", "--db", leaky, "--redact")
        lines = [json.loads(line) for line in out.splitlines()]

        arguments = json.loads(lines[2]["parts"][0]["call"]["function"]["arguments"])
        assert arguments["password"] == "[REDACTED:password]"
        assert "[REDACTED:aws_access_key_id]" in arguments  # a secret used as a key
        assert lines[-1]["metadata"]["env"]["TOKEN"] == "[REDACTED:github_token]"
        assert "[REDACTED:jwt]" in lines[-1]["metadata"]


class TestFlagsThatCannotApply:
    @pytest.mark.parametrize(("args", "named"), [
        (["--to", "jsonl", "--repair"], "--repair"),
        (["--to", "csv", "--last-turns", "2"], "--last-turns"),
        (["--to", "jsonl", "--tool", "bash"], "--tool"),
        (["--to", "jsonl", "--keep-formulas"], "--keep-formulas"),
        (["--to", "anthropic", "--keep-formulas"], "--keep-formulas"),
        (["--to", "anthropic", "--drop-dangling"], "--drop-dangling"),
    ])
    def test_are_refused_with_a_usage_error(self, leaky, args, named):
        result = CliRunner().invoke(cli, ["export", SID, "--db", leaky, *args])

        assert result.exit_code == 2
        assert named in result.output

    def test_keep_formulas_without_csv_is_refused_by_calls_search(self, leaky):
        result = CliRunner().invoke(cli, ["calls", "search", "--db", leaky, "--keep-formulas"])

        assert result.exit_code == 2 and "--keep-formulas" in result.output


class TestShowAndSearch:
    def test_sessions_show_redacts(self, leaky):
        raw, _ = run("sessions", "show", SID, "--db", leaky)
        assert GITHUB in raw

        out, _ = run("sessions", "show", SID, "--db", leaky, "--redact")

        assert_clean(out)

    @pytest.mark.parametrize("fmt", [[], ["--json"]])
    def test_sessions_list_redacts_titles(self, leaky, fmt):
        raw, _ = run("sessions", "list", "--db", leaky, *fmt)
        assert GITHUB in raw

        out, _ = run("sessions", "list", "--db", leaky, "--redact", *fmt)

        assert GITHUB not in out and "[REDACTED:github_token]" in out

    def test_sessions_show_json_redacts(self, leaky):
        out, _ = run("sessions", "show", SID, "--db", leaky, "--redact", "--json")

        assert_clean(out)
        assert all(json.loads(line) for line in out.splitlines())

    @pytest.mark.parametrize("fmt", [[], ["--json"]])
    def test_calls_show_redacts_arguments_keys_and_results(self, leaky, fmt):
        out, _ = run("calls", "show", f"{SID}:2.0", "--db", leaky, "--redact", *fmt)

        assert_clean(out)
        assert AWS_ID not in out and PASSWORD not in out

    @pytest.mark.parametrize("fmt", [[], ["--json"], ["--csv", "-"]])
    def test_calls_search_redacts(self, leaky, fmt):
        out, _ = run("calls", "search", "--db", leaky, "--redact", *fmt)

        assert_clean(out)


class TestTranscriptRedaction:
    def test_every_part_kind_and_the_session_fields(self, store):
        store.append("s", records(), title=f"title {GITHUB}", cwd=f"/tmp/{STRIPE}")
        store.append("s", [store_message_with_metadata()])
        transcript = store.load("s")

        redacted, count = store_redact(transcript)

        dumped = repr(redacted)
        for secret in LEAKS:
            assert secret not in dumped, secret
        assert count >= 10
        assert [m.position for m in redacted] == [m.position for m in transcript]
        calls = list(redacted.calls())
        assert [c.call.id for c in calls] == ["call_1", "call_2"]  # ids kept: pairing holds
        assert calls[0].result is not None  # results still link to their calls
        assert calls[0].call.input["password"] == "[REDACTED:password]"
        assert json.loads(calls[0].call.arguments_text)["password"] == "[REDACTED:password]"

    def test_a_pattern_that_breaks_the_argument_json_leaves_no_form_unredacted(self, store):
        store.append("s", [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {
                "name": "bash", "arguments": '{"x": "hush-hush-value"}'}}]}])
        redactor = store_module().Redactor(
            [r'"x": "hush-hush-value"', ("value", "hush-hush-value")], builtins=False)

        redacted, _ = store_module().redact_transcript(store.load("s"), redactor)

        (call,) = [c.call for c in redacted.calls()]
        assert call.arguments_text == "{[REDACTED:pattern]}"
        assert call.input == {"x": "[REDACTED:value]"}

    def test_nothing_to_redact_returns_the_same_transcript(self, store):
        store.append("clean", [{"role": "user", "content": "hello"}])
        transcript = store.load("clean")

        assert store_redact(transcript) == (transcript, 0)


def store_module():
    return store


def store_redact(transcript: store.Transcript) -> tuple[store.Transcript, int]:
    return store.redact_transcript(transcript, store.Redactor())


def test_csv_rows_read_back_redacted(leaky):
    out, _ = run("export", "--to", "csv", "--db", leaky, "--redact")
    rows = list(csv.reader(io.StringIO(out)))

    assert rows[0][0] == "session_id" and len(rows) == 3
    assert_clean(out)
