"""store.redaction (detectors, redact): one true positive and near misses per detector, span
rules, and 1 MB of adversarial input to every detector and to the whole redactor, each of which
must finish within a generous bound (a quadratic pattern takes minutes on 1 MB: the private-key
regex this replaced took 68 s on 0.39 MB).

All secrets below are fake values of realistic shape."""

from __future__ import annotations

import itertools
import json
import re
import time
from dataclasses import replace

import pytest

from store.redaction.detectors import DETECTORS, DETECTORS_BY_KIND, Detector, marker
from store.redaction.redact import Redactor, find_secrets


def redact_text(text, placeholder_fn=marker):
    spans = find_secrets(text)
    out, last = [], 0
    for start, end, kind in spans:
        out += [text[last:start], placeholder_fn(kind)]
        last = end
    return "".join(out) + text[last:], len(spans)

MB = 1_000_000
# Seconds, per detector per input and per whole-redactor call: generous (the machine is shared;
# measured at most ~1.4 s), and far below what a quadratic pattern needs on 1 MB.
LIMIT = 10.0

ANTHROPIC = ("sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1"
             "Hg0Fe9Dc8Ba7-Zx9Yw8Vu7Ts6Rq5Po4Nm3AA")
OPENAI_LEGACY = "sk-" + "Ab3dEfGh1jKlMn0pQrStUvWxYz0123456789ABCDefghIJKL"
OPENAI_PROJECT = ("sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6_-a1B2c3D4"
                  "e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6AbCdEfGh")
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AWS_SESSION = ("IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDexample+example/"
               "EXAMPLEtokenEXAMPLEtokenEXAMPLEtoken==")
GITHUB = "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
GITLAB = "glpat-" + "xY7zK2mN9pQ4rS6tU8vW"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_APP = "xapp-1-" + "A0123BCDE45-1234567890123-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b"
SLACK_HOOK_PATH = "T00000000/B00000000/" + "XXXXXXXXXXXXXXXXXXXXXXXX"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRIPE_RK = "rk_live_" + "51H8cAbCdEfGhIjKlMnOpQrS"
STRIPE_TEST = "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
NPM = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PYPI = "pypi-AgEIcHlwaS5vcmc" + "CJGE4YjQ1ZGQ0LTc5ZjMtNDBhZi1hZjUxLWM4ZDk5Y2QyYzk2MAACKlsiYXBpIl0"
TWILIO = "SK" + "0123456789abcdef0123456789abcdef"
SENDGRID = "SG." + "abcdefghijklmnopqrstuv" + "." + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq"
MAILGUN = "key-" + "0123456789abcdef0123456789abcdef"
DISCORD_HOOK_TOKEN = "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789-_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234"
DISCORD_BOT = "MTA1" + "NjQ3ODk0MzIxMDk4NzY1" + "." + "GhIjKl" + "." + "AbCdEfGhIjKlMnOpQrStUvWxYz0"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
AZURE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
             "K1SZFPTOtr/KBHBeksoGMGw==")
PEM_BODY = (
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi6QWh3bZKTw1ZHUQbr0vJqKzN\n"
    "q7ifpMlMuJsfyGyTCbbTOuzvMGJ0Ll9w1ZRWzqm3bBNrEdo9n8zcKZ1DbbWQWj8c\n"
)
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "-----END RSA PRIVATE KEY-----"


def kinds(text):
    return [kind for _, _, kind in find_secrets(text)]


def secrets(text):
    return [(text[s:e], kind) for s, e, kind in find_secrets(text)]


# ---------------------------------------------------------------------------------------------
# One true positive per detector: (kind, text, the exact redacted text)
# ---------------------------------------------------------------------------------------------

POSITIVES = [
    ("private_key", f"key:\n{PEM}\ndone", "key:\n[REDACTED:private_key]\ndone"),
    ("anthropic_api_key", f"export ANTHROPIC={ANTHROPIC} # x",
     "export ANTHROPIC=[REDACTED:anthropic_api_key] # x"),
    ("openai_api_key", f"OPENAI={OPENAI_PROJECT}\n", "OPENAI=[REDACTED:openai_api_key]\n"),
    ("aws_access_key_id", f'"AccessKeyId": "{AWS_ID}",',
     '"AccessKeyId": "[REDACTED:aws_access_key_id]",'),
    ("aws_secret_access_key", f'"SecretAccessKey": "{AWS_SECRET}",',
     '"SecretAccessKey": "[REDACTED:aws_secret_access_key]",'),
    ("aws_session_token", f'"SessionToken": "{AWS_SESSION}",',
     '"SessionToken": "[REDACTED:aws_session_token]",'),
    ("github_token", f"token {GITHUB} ok", "token [REDACTED:github_token] ok"),
    ("gitlab_token", f"GL={GITLAB}", "GL=[REDACTED:gitlab_token]"),
    ("slack_token", f"SLACK={SLACK}", "SLACK=[REDACTED:slack_token]"),
    ("slack_app_token", f"app {SLACK_APP}", "app [REDACTED:slack_app_token]"),
    ("slack_webhook", f"curl https://hooks.slack.com/services/{SLACK_HOOK_PATH} -d x",
     "curl https://hooks.slack.com/services/[REDACTED:slack_webhook] -d x"),
    ("stripe_key", f"stripe {STRIPE}.", "stripe [REDACTED:stripe_key]."),
    ("google_api_key", f"?key={GOOGLE}&q=1", "?key=[REDACTED:google_api_key]&q=1"),
    ("huggingface_token", f"HF_TOKEN_VALUE {HF}", "HF_TOKEN_VALUE [REDACTED:huggingface_token]"),
    ("npm_token", f"//registry.npmjs.org/:_authToken {NPM}",
     "//registry.npmjs.org/:_authToken [REDACTED:npm_token]"),
    ("pypi_token", f"pypi {PYPI}", "pypi [REDACTED:pypi_token]"),
    ("twilio_key", f"twilio {TWILIO}", "twilio [REDACTED:twilio_key]"),
    ("sendgrid_api_key", f"sg {SENDGRID}", "sg [REDACTED:sendgrid_api_key]"),
    ("mailgun_api_key", f"mg {MAILGUN}", "mg [REDACTED:mailgun_api_key]"),
    ("discord_webhook", f"https://discord.com/api/webhooks/123456789012345678/{DISCORD_HOOK_TOKEN}",
     "https://discord.com/api/webhooks/123456789012345678/[REDACTED:discord_webhook]"),
    ("discord_bot_token", f"bot {DISCORD_BOT}", "bot [REDACTED:discord_bot_token]"),
    ("azure_storage_key",
     f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE_KEY};"
     "EndpointSuffix=core.windows.net",
     "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:azure_storage_key];"
     "EndpointSuffix=core.windows.net"),
    ("db_password", "Server=tcp:db,1433;User Id=app;Password=p@ss w0rd!;Encrypt=True",
     "Server=tcp:db,1433;User Id=app;Password=[REDACTED:db_password];Encrypt=True"),
    ("bearer_token", "Authorization: Bearer abcDEF123456ghiJKL789",
     "Authorization: Bearer [REDACTED:bearer_token]"),
    ("basic_auth", "-H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='",
     "-H 'Authorization: Basic [REDACTED:basic_auth]'"),
    ("cli_password", "curl -u admin:hunter2 https://api.example.com",
     "curl -u admin:[REDACTED:cli_password] https://api.example.com"),
    ("url_password", "DATABASE_URL=postgresql://app:s3cr3t-P4ss@db.internal:5432/prod",
     "DATABASE_URL=postgresql://app:[REDACTED:url_password]@db.internal:5432/prod"),
    ("jwt", f"cookie={JWT};", "cookie=[REDACTED:jwt];"),
    ("password", "DB_PASSWORD=hunter2\n", "DB_PASSWORD=[REDACTED:password]\n"),
    ("secret", 'client_secret: "Zq8vN3xL0pR7tY2w"', 'client_secret: "[REDACTED:secret]"'),
]


def test_every_detector_has_a_positive_case():
    assert {kind for kind, _, _ in POSITIVES} == set(DETECTORS_BY_KIND)


@pytest.mark.parametrize(("kind", "text", "expected"), POSITIVES, ids=[p[0] for p in POSITIVES])
def test_a_true_positive_is_redacted_by_its_detector(kind, text, expected):
    assert list(DETECTORS_BY_KIND[kind].spans(text)), f"{kind} found nothing"
    redacted, count = redact_text(text)
    assert redacted == expected
    assert count == expected.count("[REDACTED:")


# ---------------------------------------------------------------------------------------------
# Near misses: nothing at all is redacted
# ---------------------------------------------------------------------------------------------

NEAR_MISSES = [
    ("private_key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n"
                    "-----END PUBLIC KEY-----"),
    ("private_key", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUF\n"),
    ("private_key", "the file starts with BEGIN RSA PRIVATE KEY, without the dashes"),
    ("anthropic_api_key", "sk-ant-api03-short"),
    ("openai_api_key", "sk-this-is-not-a-real-key-just-words"),
    ("openai_api_key", "task-1234567890abcdefghijklmnop"),
    ("aws_access_key_id", "AKIAiosfodnn7example"),
    ("aws_access_key_id", "AKIAIOSFODNN7EXAMPLEXYZ"),
    ("aws_secret_access_key", "aws_secret_access_key="),
    ("aws_secret_access_key", "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}"),
    ("aws_session_token", '"SessionTokenExpiry": "2024-01-01T00:00:00Z"'),
    ("github_token", "ghp_short123"),
    ("github_token", "ghx_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"),
    ("gitlab_token", "glpat-short"),
    ("slack_token", "xoxb-not-a-token"),
    ("slack_token", "xoxq-123456789012-abcdefghijkl"),
    ("slack_app_token", "xapp-config"),
    ("slack_webhook", "see https://hooks.slack.com/services/ for docs"),
    ("stripe_key", "sk_live_abc123"),
    ("stripe_key", "pk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("google_api_key", "AIzaSyD-9tSrke72PouQ"),
    ("huggingface_token", "from huggingface_hub import hf_hub_download"),
    ("npm_token", "npm_config_cache=/tmp/npm"),
    ("pypi_token", "pypi-simple-index and pypi-AgEIcHlwaS5vcmcshort"),
    ("twilio_key", "SK0123456789abcdef0123456789abcde"),
    ("twilio_key", "SKU1234567 and ACME"),
    ("sendgrid_api_key", "SG.short.value"),
    ("mailgun_api_key", "key-value-store and key-ghijklmnopqrstuvwxyzghijklmnopqrst"),
    ("discord_webhook", "https://discord.com/api/webhooks/ is the endpoint"),
    ("discord_bot_token", "MTA1NjQ3.GhIjKl.AbCdEf"),
    ("azure_storage_key", "AccountKey= ;AccountKeyName=primary"),
    ("db_password", "PWD=/work/main\nOLDPWD=/home/user"),
    ("db_password", "Server=db;Password=;Encrypt=True"),
    ("bearer_token", "this API uses Bearer authentication"),
    ("bearer_token", "Bearer abc1"),
    ("basic_auth", "basic authentication is disabled"),
    ("cli_password", "docker run -u 1000:1000 img && git push -u origin main"),
    ("url_password", "https://example.com:8080/path@x and https://user@host/x"),
    ("url_password", "https://user:${PASSWORD}@host/x"),
    ("url_password", "postgresql://user:password@localhost/db"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9 alone"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0 without a second dot"),
    ("password", "password="),
    ("password", "password_policy=strict\npassword_min_length: 12"),
    ("password", 'password: str\ndef f(password: str = None): pass'),
    ("password", "login(user, password=password)\nconnect(password=self.password)"),
    ("password", "password: ${DB_PASSWORD}\npassword: '{{ vault_db_password }}'"),
    ("password", '"password": "", "passwordless": true'),
    ("password", "password = getpass.getpass()\npassword=os.environ['DB_PASSWORD']"),
    ("password", "bypass=1 compass: north"),
    ("password", "username, password = proxy_auth\npassword: string?"),
    ("secret", 'lines.append(f"access_token = {self.access_token}")'),
    ("secret", "private_key: CertificateIssuerPrivateKeyTypes,\n\"api_key\": OPENAI_API_KEY"),
    ("secret", "TOKEN=$(gh auth token)\nkey = mod.X25519PrivateKey"),
    ("secret", "max_tokens=4096\n\"tokens\": 12"),
    ("secret", "token: required\nsecret: inherit"),
    ("secret", "secret_name=foo\ntokenizer=abc12345678"),
    ("secret", "apikey=\napi_key: null"),
    ("secret", "token_type: bearer\n\"next_token\": null"),
]


def test_every_detector_has_a_near_miss():
    assert {kind for kind, _ in NEAR_MISSES} == set(DETECTORS_BY_KIND)


@pytest.mark.parametrize(("kind", "text"), NEAR_MISSES, ids=[n[0] for n in NEAR_MISSES])
def test_a_near_miss_is_not_redacted(kind, text):
    assert list(DETECTORS_BY_KIND[kind].spans(text)) == []
    assert redact_text(text) == (text, 0)


# ---------------------------------------------------------------------------------------------
# More shapes per family
# ---------------------------------------------------------------------------------------------

class TestPrivateKeys:
    @pytest.mark.parametrize("label", ["RSA", "EC", "DSA", "OPENSSH", "ENCRYPTED", ""])
    def test_every_label_is_redacted_to_its_end_line(self, label):
        head = f"-----BEGIN {label} PRIVATE KEY-----".replace("  ", " ")
        tail = f"-----END {label} PRIVATE KEY-----".replace("  ", " ")
        text = f"before\n{head}\n{PEM_BODY}{tail}\nafter"
        assert redact_text(text)[0] == "before\n[REDACTED:private_key]\nafter"

    def test_a_begin_line_without_end_is_redacted_to_the_end_of_the_text(self):
        text = "$ head -3 ~/.ssh/id_rsa\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + PEM_BODY
        assert redact_text(text)[0] == "$ head -3 ~/.ssh/id_rsa\n[REDACTED:private_key]\n"

    def test_without_end_only_the_key_body_lines_are_redacted(self):
        text = ("-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "MIIEpAIBAAKC\n"
                "$ ls -la\ntotal 0\n")
        assert redact_text(text)[0] == "[REDACTED:private_key]\n$ ls -la\ntotal 0\n"

    def test_an_encrypted_pem_with_headers(self):
        text = ("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
                "DEK-Info: AES-128-CBC,8F5D2A1E9C0B7D3F\n\n" + PEM_BODY
                + "-----END RSA PRIVATE KEY-----\nnext")
        assert redact_text(text)[0] == "[REDACTED:private_key]\nnext"

    def test_a_pgp_private_key_block(self):
        text = ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
                + PEM_BODY + "=a1B2\n-----END PGP PRIVATE KEY BLOCK-----\nok")
        assert redact_text(text)[0] == "[REDACTED:private_key]\nok"

    def test_a_key_in_json_with_escaped_newlines(self):
        key = PEM.replace("\n", "\\n") + "\\n"
        text = json.dumps({"type": "service_account", "private_key": PEM + "\n", "x": 1})
        assert key in text
        redacted = redact_text(text)[0]
        assert json.loads(redacted)["private_key"] == "[REDACTED:private_key]\n"
        assert "MIIE" not in redacted

    def test_a_key_with_line_number_prefixes(self):
        lines = (["-----BEGIN RSA PRIVATE KEY-----"] + PEM_BODY.splitlines()
                 + ["-----END RSA PRIVATE KEY-----"])
        numbered = "".join(f"{n:>6}→{line}\n" for n, line in enumerate(lines, 1))
        redacted = redact_text(numbered)[0]
        assert "MIIE" not in redacted and "q7if" not in redacted
        assert redacted.startswith("     1→[REDACTED:private_key]")

    def test_a_key_flattened_onto_one_line(self):
        text = ("KEY='-----BEGIN PRIVATE KEY----- MIIEvQIBADAN BgkqhkiG9w0 "
                "-----END PRIVATE KEY-----'")
        assert redact_text(text)[0] == "KEY='[REDACTED:private_key]'"

    def test_two_keys_are_two_spans(self):
        text = f"{PEM}\nand\n{PEM}"
        assert redact_text(text) == ("[REDACTED:private_key]\nand\n[REDACTED:private_key]", 2)

    def test_a_truncated_key_then_a_full_one(self):
        text = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "...\nthen\n" + PEM
        assert redact_text(text)[0] == "[REDACTED:private_key]\n...\nthen\n[REDACTED:private_key]"


class TestAssignments:
    @pytest.mark.parametrize(("text", "expected"), [
        ("password=hunter2", "password=[REDACTED:password]"),
        ('"password": "correct horse battery"', '"password": "[REDACTED:password]"'),
        ("{'password': 'hunter2'}", "{'password': '[REDACTED:password]'}"),
        ('{\\"password\\": \\"hunter2\\"}', '{\\"password\\": \\"[REDACTED:password]\\"}'),
        ("export PGPASSWORD=hunter2", "export PGPASSWORD=[REDACTED:password]"),
        ("mysql_root_password: hunter2", "mysql_root_password: [REDACTED:password]"),
        ("postgres://db/app?sslmode=require&password=hunter2&x=1",
         "postgres://db/app?sslmode=require&password=[REDACTED:password]&x=1"),
        ("host=db sslpassword=hunter2 dbname=x",
         "host=db sslpassword=[REDACTED:password] dbname=x"),
        ("passphrase := \"open sesame\"", "passphrase := \"[REDACTED:password]\""),
        ('"password": "ab\\"cd"', '"password": "[REDACTED:password]"'),
    ])
    def test_passwords(self, text, expected):
        assert redact_text(text)[0] == expected

    @pytest.mark.parametrize(("text", "expected"), [
        ("api_key=Zq8vN3xL0pR7tY2w", "api_key=[REDACTED:secret]"),
        ('"apiKey": "Zq8vN3xL0pR7tY2w"', '"apiKey": "[REDACTED:secret]"'),
        ("APIKEY: Zq8vN3xL0pR7tY2w", "APIKEY: [REDACTED:secret]"),
        ("X-Api-Key: Zq8vN3xL0pR7tY2w", "X-Api-Key: [REDACTED:secret]"),
        ("access_key = 'Zq8vN3xL0pR7tY2w'", "access_key = '[REDACTED:secret]'"),
        ("SECRET_KEY='django-insecure-k3y'", "SECRET_KEY='[REDACTED:secret]'"),
        ("private_key: Zq8vN3xL0pR7tY2w", "private_key: [REDACTED:secret]"),
        ("GITHUB_TOKEN=Zq8vN3xL0pR7tY2w", "GITHUB_TOKEN=[REDACTED:secret]"),
        ("refresh_token => 'Zq8vN3xL0pR7tY2w'", "refresh_token => '[REDACTED:secret]'"),
        ("config['client_secret'] = \"Zq8vN3xL0pR7tY2w\"",
         "config['client_secret'] = \"[REDACTED:secret]\""),
    ])
    def test_secrets_tokens_and_keys(self, text, expected):
        assert redact_text(text)[0] == expected

    def test_aws_sts_output(self):
        text = json.dumps({"Credentials": {
            "AccessKeyId": "ASIAIOSFODNN7EXAMPLE", "SecretAccessKey": AWS_SECRET,
            "SessionToken": AWS_SESSION, "Expiration": "2024-01-01T00:00:00Z"}}, indent=2)
        redacted, count = redact_text(text)
        assert count == 3
        assert json.loads(redacted)["Credentials"] == {
            "AccessKeyId": "[REDACTED:aws_access_key_id]",
            "SecretAccessKey": "[REDACTED:aws_secret_access_key]",
            "SessionToken": "[REDACTED:aws_session_token]",
            "Expiration": "2024-01-01T00:00:00Z"}

    def test_the_aws_configure_prompt(self):
        text = f"AWS Secret Access Key [****************EKEY]: {AWS_SECRET}"
        assert redact_text(text)[0].endswith(": [REDACTED:aws_secret_access_key]")

    def test_an_env_file(self):
        text = ("# .env\nDEBUG=true\nDB_HOST=localhost\nDB_PASSWORD=hunter2\n"
                f"STRIPE_SECRET_KEY={STRIPE}\nAPI_TOKEN=\"Zq8vN3xL0pR7tY2w\"\n")
        assert redact_text(text)[0] == (
            "# .env\nDEBUG=true\nDB_HOST=localhost\nDB_PASSWORD=[REDACTED:password]\n"
            "STRIPE_SECRET_KEY=[REDACTED:stripe_key]\nAPI_TOKEN=\"[REDACTED:secret]\"\n")


class TestOtherShapes:
    @pytest.mark.parametrize(("secret", "kind"), [
        (OPENAI_LEGACY, "openai_api_key"), (GITHUB_PAT, "github_token"),
        (STRIPE_RK, "stripe_key"), (STRIPE_TEST, "stripe_key"),
        ("ASIAIOSFODNN7EXAMPLE", "aws_access_key_id"),
        ("AC" + "0123456789abcdef0123456789abcdef", "twilio_key"),
        ("0123456789abcdef0123456789abcdef-0123abcd-4567ef01", "mailgun_api_key"),
        ("xoxp-1234567890-1234567890-1234567890-abcdef0123456789abcdef0123456789", "slack_token"),
    ])
    def test_more_token_shapes(self, secret, kind):
        assert secrets(f"value: {secret} end") == [(secret, kind)]

    def test_url_passwords(self):
        assert secrets("redis://:p4ss@cache:6379/0") == [("p4ss", "url_password")]
        assert secrets("mongodb+srv://u:p@ss:w0rd@cluster0.example.net/db") == [
            ("p@ss:w0rd", "url_password")]
        assert secrets("jdbc:postgresql://app:pw123@db/x") == [("pw123", "url_password")]

    def test_a_bearer_jwt_keeps_the_bearer_kind(self):
        assert redact_text(f"Authorization: Bearer {JWT}")[0] == (
            "Authorization: Bearer [REDACTED:bearer_token]")

    def test_a_provider_token_wins_over_generic_kinds_at_the_same_span(self):
        assert redact_text(f"authorization: bearer {GITHUB}")[0].endswith(
            "bearer [REDACTED:github_token]")
        assert redact_text(f'api_key="{OPENAI_PROJECT}"')[0] == (
            'api_key="[REDACTED:openai_api_key]"')
        assert redact_text(f"token={JWT}")[0] == "token=[REDACTED:jwt]"
        assert redact_text(ANTHROPIC)[0] == "[REDACTED:anthropic_api_key]"

    def test_a_discord_canary_webhook(self):
        text = f"https://canary.discord.com/api/webhooks/123456789012345678/{DISCORD_HOOK_TOKEN}"
        assert secrets(text) == [(DISCORD_HOOK_TOKEN, "discord_webhook")]


# ---------------------------------------------------------------------------------------------
# Spans, markers, redaction API
# ---------------------------------------------------------------------------------------------

class TestSpans:
    def test_spans_are_sorted_and_do_not_overlap(self):
        text = f"{PEM} {GITHUB} password=x {JWT} https://a:b@h {AWS_ID}" * 3
        spans = find_secrets(text)
        assert spans == sorted(spans)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))

    def test_leftmost_longest_and_overlaps_are_trimmed_not_dropped(self):
        short = Detector("short", pattern=re.compile(r"ab"))
        long = Detector("long", pattern=re.compile(r"abcd"))
        later = Detector("later", pattern=re.compile(r"cdef"))
        assert find_secrets("xxabcdefyy", [short, long, later]) == [
            (2, 6, "long"), (6, 8, "later")]

    def test_redacting_twice_changes_nothing(self):
        text = (f"password=hunter2 {PEM} postgres://app:pw@db/x Bearer {JWT} "
                f"api_key: Zq8vN3xL0pR7tY2w {AWS_ID}")
        once, count = redact_text(text)
        assert count == 6
        assert redact_text(once) == (once, 0)

    def test_a_marker_is_never_a_secret(self):
        text = "password: [REDACTED:password] url=https://u:[REDACTED:url_password]@h"
        assert find_secrets(text) == []

    def test_a_custom_placeholder(self):
        assert redact_text("password=hunter2", lambda kind: f"<{kind.upper()}>")[0] == (
            "password=<PASSWORD>")

    def test_marker_style_matches_store_redact(self):
        assert marker("jwt") == "[REDACTED:jwt]"

    def test_a_detector_needs_one_of_pattern_and_func(self):
        with pytest.raises(ValueError):
            Detector("x")
        with pytest.raises(ValueError):
            Detector("Bad Kind", func=lambda text: iter(()))


# ---------------------------------------------------------------------------------------------
# Linear time: 1 MB of adversarial input per detector, and for the whole find_secrets
# ---------------------------------------------------------------------------------------------

def fill(unit: str, size: int = MB) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def run(unit: str, prefix: str = "") -> str:
    """``prefix`` then ``unit`` repeated up to 1 MB."""
    return prefix + fill(unit, MB - len(prefix))


COMMON = [
    fill("a"), fill("Ab0+/"), fill("0123456789abcdef"), fill("-"), fill(" "), fill("\n"),
    fill("a\n"), fill("=:"), fill('"'), fill("\\n"), fill("hello world, "),
]

ADVERSARIAL = {
    "private_key": [
        fill("-----BEGIN RSA PRIVATE KEY-----\n"), fill("-----BEGIN RSA PRIVATE KEY-----"),
        fill("-----BEGIN "), fill("-----BEGIN PRIVATE KEY-----\\n"),
        run("MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi6QWh3bZKTw1ZHUQbr0vJqKzN\n",
            "-----BEGIN RSA PRIVATE KEY-----\n"),
        fill("-----BEGIN PRIVATE KEY-----\n" + "A" * 64 + "\n") + "-----END PRIVATE KEY-----",
        fill("-----END PRIVATE KEY-----\n-----BEGIN PRIVATE KEY-----\n"),
        fill("-----BEGIN PRIVATE KEY-----\nxx\n-----END PRIVATE KEY-----\n"),
        run("A", "-----BEGIN PRIVATE KEY-----"), run("A ", "-----BEGIN PRIVATE KEY-----"),
        fill("-----BEGIN PRIVATE KEY-----\n" + "Proc-Type: 4,ENCRYPTED\n" * 3),
        fill("  12→-----BEGIN PRIVATE KEY-----\n  13→"),
    ],
    "anthropic_api_key": [fill("sk-ant-api03-"), run("A", "sk-ant-api03-"),
                          fill(" sk-ant-api03-x")],
    "openai_api_key": [fill("sk-"), run("a", "sk-"), run("a", "sk-proj-"), fill(" sk-" + "a" * 30),
                       fill("sk-proj-"), fill(" sk-1")],
    "aws_access_key_id": [fill("AKIA"), run("A", "AKIA"), fill(" AKIA0123456789ABCDE")],
    "aws_secret_access_key": [fill("aws_secret_access_key="), run("A", "aws_secret_access_key = "),
                              fill('"SecretAccessKey": "'), fill("secret access key [")],
    "aws_session_token": [fill("SessionToken="), run("A", "session_token: "),
                          fill("security_token:\"")],
    "github_token": [fill("ghp_"), run("a", "ghp_"), fill("github_pat_"), run("a", "github_pat_"),
                     fill(" ghp_" + "a" * 35)],
    "gitlab_token": [fill("glpat-"), run("a", "glpat-"), fill("gl"), fill(" glpat-" + "a" * 19)],
    "slack_token": [fill("xoxb-"), fill("xoxb-1-"), run("1", "xoxb-"), run("a", "xoxb-1-")],
    "slack_app_token": [fill("xapp-1-"), run("a", "xapp-1-")],
    "slack_webhook": [fill("hooks.slack.com/services/"), run("A", "hooks.slack.com/services/")],
    "stripe_key": [fill("sk_live_"), run("a", "sk_live_"), fill(" sk_live_abc")],
    "google_api_key": [fill("AIza"), run("a", "AIza"), fill(" AIza" + "a" * 34)],
    "huggingface_token": [fill("hf_"), run("a", "hf_"), fill(" hf_" + "a" * 33)],
    "npm_token": [fill("npm_"), run("a", "npm_")],
    "pypi_token": [fill("pypi-AgEIcHlwaS5vcmc"), run("a", "pypi-AgEIcHlwaS5vcmc")],
    "twilio_key": [fill("SK"), run("a", "SK"), fill(" SK" + "a" * 31), fill("AC0")],
    "sendgrid_api_key": [fill("SG."), fill("SG." + "A" * 22 + "."), run("A", "SG.")],
    "mailgun_api_key": [fill("key-"), run("a", "key-"), fill("a" * 32 + "-"),
                        fill(" " + "a" * 31)],
    "discord_webhook": [fill("discord.com/api/webhooks/"), fill("discord.com/api/webhooks/1/"),
                        run("a", "discord.com/api/webhooks/1/")],
    "discord_bot_token": [fill("M"), fill("M" + "a" * 23 + "."),
                          fill(" M" + "a" * 24 + ".abcdef.")],
    "azure_storage_key": [fill("AccountKey="), run("a", "AccountKey="), fill(";AccountKey=a")],
    "db_password": [fill(";pwd={"), fill(";Password="), fill("password="), run("a", "password="),
                    fill(" pwd = a"), fill(";pwd=a b")],
    "bearer_token": [fill("Bearer "), run("a", "bearer "), fill("bearer a"), fill(" bearer 1")],
    "basic_auth": [fill("Authorization: Basic "), run("a", "Authorization: Basic "),
                   fill("authorization:basic a")],
    "cli_password": [fill("-u a:"), run("a", "-u a:"), fill(" -u "), fill(" --user=a:b")],
    "url_password": [fill("://a:"), fill("a://a:"), fill("x://a:b@"), run("b", "a://"),
                     run("c@", "a://b:"), fill("a" * 31 + "://"), fill(" a://a:a")],
    "jwt": [fill("eyJ"), run("a", "eyJ"), fill("eyJ" + "a" * 10 + "."),
            fill("eyJaaaaaaaaaa.eyJaaaaaaaaaa."), fill(" eyJaaaaaaaaaa.eyJaaaaaaaa")],
    "password": [fill("password="), fill("password: "), fill('password="'), fill("password"),
                 run("a", '"password": "'), fill('\\"password\\": \\"'), fill("pass:"),
                 fill("password = ${"), fill("password=self.")],
    "secret": [fill("token="), fill("api_key: "), fill("secret"), run("a", 'token="'),
               fill("key"), fill("apikey"), fill("access_key='"), fill("token==")],
}


def test_every_detector_has_adversarial_inputs():
    assert set(ADVERSARIAL) == set(DETECTORS_BY_KIND)


def timed(fn):
    """CPU seconds of this process (other processes on a shared machine do not count)."""
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


@pytest.mark.parametrize("det", DETECTORS, ids=[d.kind for d in DETECTORS])
def test_each_detector_is_linear_on_1mb_of_adversarial_input(det):
    # The COMMON inputs get the detector's keyword in front, so its keyword gate lets them in;
    # a pattern gate (``Detector.gate``) is taken off, so the pattern itself runs on every input.
    gate = det.keywords[0] if det.keywords else ""
    det = replace(det, gate=None)
    for text in ADVERSARIAL[det.kind] + [gate + text for text in COMMON[:6]]:
        assert len(text) >= MB - 1
        elapsed, _ = timed(lambda text=text: list(det.spans(text)))
        assert elapsed < LIMIT, f"{det.kind}: {elapsed:.2f}s on {text[:40]!r}..."


@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
def test_find_secrets_is_linear_on_each_adversarial_input(kind):
    for text in ADVERSARIAL[kind]:
        elapsed, _ = timed(lambda text=text: find_secrets(text))
        assert elapsed < LIMIT, f"find_secrets: {elapsed:.2f}s on {text[:40]!r}..."


def test_find_secrets_is_linear_on_a_mix_of_every_trigger():
    units = [text[:2000] for texts in ADVERSARIAL.values() for text in texts]
    text = fill("\n".join(units) + " ")
    elapsed, _ = timed(lambda: redact_text(text))
    assert elapsed < LIMIT, f"redact_text: {elapsed:.2f}s"


@pytest.mark.parametrize("text", COMMON[6:], ids=lambda text: repr(text[:12]))
def test_the_whole_redactor_is_linear_on_common_text_with_every_gate_open(text):
    gates = " ".join(word for det in DETECTORS for word in det.keywords[:1])
    redactor = Redactor()
    elapsed, _ = timed(lambda: redactor.redact(
        {"arguments": gates + text, gates: [gates + text[: MB // 2]]}))
    assert elapsed < 2 * LIMIT, f"Redactor.redact: {elapsed:.2f}s on {text[:40]!r}..."
