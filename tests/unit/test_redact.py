"""store.redaction: built-in detectors on realistic fake secrets, near misses, user patterns."""

from __future__ import annotations

import json
import re

import pytest

from store.redaction.redact import BUILTIN_DETECTORS, Detector, Redactor, marker

# Realistic shapes, fake values (none of these is a live credential).
OPENAI_LEGACY = "sk-" + "Ab3dEfGh1jKlMn0pQrStUvWxYz0123456789ABCDefghIJKL"
OPENAI_PROJECT = ("sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6_-a1B2c3D4"
                  "e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6AbCdEfGh")
ANTHROPIC = ("sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1"
             "Hg0Fe9Dc8Ba7-Zx9Yw8Vu7Ts6Rq5Po4Nm3AA")
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi6QWh3bZKTw1ZHUQbr0vJqKzN\n"
    "q7ifpMlMuJsfyGyTCbbTOuzvMGJ0Ll9w1ZRWzqm3bBNrEdo9n8zcKZ1DbbWQWj8c\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.fixture
def redactor():
    return Redactor()


def redacted(text, redactor=None):
    return (redactor or Redactor()).redact_text(text)


class TestBuiltInDetectors:
    @pytest.mark.parametrize(("secret", "kind"), [
        (OPENAI_LEGACY, "openai_api_key"),
        (OPENAI_PROJECT, "openai_api_key"),
        (ANTHROPIC, "anthropic_api_key"),
        (AWS_ID, "aws_access_key_id"),
        (GITHUB, "github_token"),
        (GITHUB_PAT, "github_token"),
        (GOOGLE, "google_api_key"),
        (SLACK, "slack_token"),
    ])
    def test_a_key_alone_in_text_is_replaced_by_its_marker(self, secret, kind):
        text, count = redacted(f"export KEY={secret} # from the vault")

        assert text == f"export KEY={marker(kind)} # from the vault"
        assert count == 1

    def test_an_anthropic_key_is_not_mistaken_for_an_openai_key(self):
        assert redacted(ANTHROPIC)[0] == "[REDACTED:anthropic_api_key]"

    def test_a_bearer_token_keeps_the_scheme_word(self):
        text, count = redacted(f"curl -H 'Authorization: Bearer {JWT}' https://api.example.com")

        assert text == ("curl -H 'Authorization: Bearer [REDACTED:bearer_token]' "
                        "https://api.example.com")
        assert count == 1

    def test_a_lowercase_bearer_is_found_too(self):
        assert redacted(f"authorization: bearer {GITHUB}")[0].endswith(
            "bearer [REDACTED:github_token]")

    def test_a_url_password_is_replaced_and_the_user_and_host_kept(self):
        text, count = redacted("DATABASE_URL=postgresql://app:s3cr3t-P4ss@db.internal:5432/prod")

        assert text == "DATABASE_URL=postgresql://app:[REDACTED:url_password]@db.internal:5432/prod"
        assert count == 1

    def test_a_url_password_with_an_at_sign_is_replaced_whole(self):
        text, _ = redacted("redis://default:p@ss@cache:6379/0")

        assert text == "redis://default:[REDACTED:url_password]@cache:6379/0"

    def test_an_aws_secret_assignment_keeps_its_name(self):
        text, count = redacted(f"aws_secret_access_key = {AWS_SECRET}\nregion = eu-west-1")

        assert text == ("aws_secret_access_key = [REDACTED:aws_secret_access_key]\n"
                        "region = eu-west-1")
        assert count == 1

    def test_an_aws_secret_in_json_is_found(self):
        text, _ = redacted(json.dumps({"AWS_SECRET_ACCESS_KEY": AWS_SECRET}))

        assert AWS_SECRET not in text and "[REDACTED:aws_secret_access_key]" in text

    def test_a_pem_private_key_block_is_replaced_whole(self):
        text, count = redacted(f"key:\n{PEM}\nend")

        assert text == "key:\n[REDACTED:private_key]\nend"
        assert count == 1

    def test_a_pem_block_with_json_escaped_newlines_is_replaced(self):
        escaped = json.dumps({"content": PEM})

        text, count = redacted(escaped)

        assert text == '{"content": "[REDACTED:private_key]"}'
        assert count == 1

    def test_several_secrets_are_counted_one_by_one(self):
        text, count = redacted(f"{OPENAI_LEGACY} and {AWS_ID} and Bearer {JWT}")

        assert count == 3
        assert text == ("[REDACTED:openai_api_key] and [REDACTED:aws_access_key_id] and "
                        "Bearer [REDACTED:bearer_token]")

    def test_every_builtin_kind_is_distinct_and_named(self):
        kinds = [d.kind for d in BUILTIN_DETECTORS]

        assert len(kinds) == len(set(kinds))
        assert {"openai_api_key", "anthropic_api_key", "aws_access_key_id", "github_token",
                "google_api_key", "bearer_token", "url_password", "private_key"} <= set(kinds)


class TestNearMisses:
    @pytest.mark.parametrize("text", [
        "the task-manager-service-0123456789 restarted",  # "sk-" inside a word
        "sk-short",
        "risk-assessment-report-final-version",  # no digit, and inside a word
        "pip install scikit-learn==1.5.0",
        "AKIA1234",  # too short for an access key id
        "XAKIAIOSFODNN7EXAMPLEX",  # embedded in a longer token
        "ghp_tooShort123",
        "github_pattern_matching_is_fun",
        "AIzaShort",
        "The Bearer of bad news",  # a word, not a token
        "Authorization: Bearer <token>",
        "Bearer abcdefghijklmnopqrstuvwxyz",  # no digit: prose, not a token
        "https://example.com:8443/path?q=1",  # a port, not a password
        "https://user@example.com/repo.git",  # a user, no password
        "git@github.com:org/repo.git",
        "mailto:someone@example.com",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n"
        "-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n"
        "-----END CERTIFICATE-----",
        "xoxb-not-a-token",
        "aws_secret_access_key = <your secret here>",
    ])
    def test_it_is_left_alone(self, text):
        assert redacted(text) == (text, 0)


class TestUserPatterns:
    def test_a_plain_pattern_replaces_its_whole_match_as_pattern(self):
        redactor = Redactor([r"ACME-[0-9]{6}"])

        assert redactor.redact_text("ticket ACME-123456 opened") == (
            "ticket [REDACTED:pattern] opened", 1)

    def test_a_named_pattern_uses_its_kind(self):
        redactor = Redactor([("employee_id", re.compile(r"\bE\d{5}\b"))])

        assert redactor("badge E12345") == "badge [REDACTED:employee_id]"

    def test_a_secret_group_replaces_only_that_group(self):
        redactor = Redactor([("session_cookie", r"session=(?P<secret>[a-f0-9]{16,})")])

        assert redactor("Cookie: session=0123456789abcdef0123; path=/") == (
            "Cookie: session=[REDACTED:session_cookie]; path=/")

    def test_builtins_can_be_left_out(self):
        redactor = Redactor([r"internal-\d+"], builtins=False)

        assert redactor(f"internal-42 {OPENAI_LEGACY}") == f"[REDACTED:pattern] {OPENAI_LEGACY}"

    def test_a_pattern_never_matches_inside_a_marker(self):
        redactor = Redactor([r"REDACTED", r"[a-z_]+_key"])

        text, count = redactor.redact_text(f"{AWS_ID}")

        assert text == "[REDACTED:aws_access_key_id]"
        assert count == 1

    @pytest.mark.parametrize("bad", ["(", "a|", "x*"])
    def test_a_bad_or_empty_matching_pattern_is_refused(self, bad):
        with pytest.raises(ValueError):
            Redactor([bad])

    def test_a_bad_kind_is_refused(self):
        with pytest.raises(ValueError, match="redaction kind"):
            Detector("Not OK", re.compile("x"))


class TestJsonValues:
    def test_strings_are_redacted_at_any_depth_and_keys_and_other_values_kept(self, redactor):
        value = {
            "command": f"curl -H 'Authorization: Bearer {JWT}' https://x",
            "env": {"OPENAI_API_KEY": OPENAI_LEGACY, "DEBUG": True, "RETRIES": 3},
            "urls": ["https://ok.example.com", "postgres://u:pw12345@db/x"],
            "nothing": None,
        }

        out, count = redactor.redact(value)

        assert count == 3
        assert out == {
            "command": "curl -H 'Authorization: Bearer [REDACTED:bearer_token]' https://x",
            "env": {"OPENAI_API_KEY": "[REDACTED:openai_api_key]", "DEBUG": True,
                    "RETRIES": 3},
            "urls": ["https://ok.example.com", "postgres://u:[REDACTED:url_password]@db/x"],
            "nothing": None,
        }
        assert value["env"]["OPENAI_API_KEY"] == OPENAI_LEGACY  # the input is not changed

    def test_a_tuple_stays_a_tuple(self, redactor):
        assert redactor.redact(("a", AWS_ID)) == (("a", "[REDACTED:aws_access_key_id]"), 1)

    def test_a_value_without_strings_comes_back_unchanged(self, redactor):
        assert redactor.redact(42) == (42, 0)
        assert redactor.redact([1, 2.5, None, False]) == ([1, 2.5, None, False], 0)

    def test_redacting_twice_changes_nothing_more(self, redactor):
        once, count = redactor.redact_text(f"{PEM} {OPENAI_PROJECT} http://a:b1234@h/")

        assert count == 3
        assert redactor.redact_text(once) == (once, 0)
