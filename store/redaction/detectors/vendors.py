"""Vendor tokens with a fixed shape: API keys, access tokens and webhooks of named services."""

from __future__ import annotations

from store.redaction.detectors.base import Detector, detector

__all__ = ["VENDOR_DETECTORS"]

#: Most specific first (the order breaks ties between equal spans).
VENDOR_DETECTORS: tuple[Detector, ...] = (
    # Linear: literal "sk-ant-" after a look-behind for the body class (R1), body bounded and
    # possessive (R2, R3).
    detector(
        "anthropic_api_key",
        r"(?<![A-Za-z0-9_\-])sk-ant-(?:api|admin|oat|ort|sid)[0-9]{2}-[A-Za-z0-9_\-]{20,400}+",
        keywords=("sk-ant-",),
        source="gitleaks anthropic-api-key / anthropic-admin-api-key",
    ),
    # Linear: R1 (literal "sk-" after a look-behind for the body class); the two look-aheads
    # (a digit and a letter somewhere in the key) are bounded to 400 characters (R2).
    detector(
        "openai_api_key",
        r"(?<![A-Za-z0-9_\-])sk-(?:proj-|svcacct-|admin-|None-)?"
        r"(?=[A-Za-z0-9_\-]{0,400}[0-9])(?=[A-Za-z0-9_\-]{0,400}[A-Za-z])[A-Za-z0-9_\-]{20,400}+",
        keywords=("sk-",),
        source="gitleaks openai-api-key; detect-secrets OpenAIDetector",
    ),
    # Linear: literal prefix after a look-behind (R1), exactly 16 characters (R2).
    detector(
        "aws_access_key_id",
        r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        keywords=("akia", "asia", "abia", "acca", "a3t"),
        source="gitleaks aws-access-token; detect-secrets AWSKeyDetector",
    ),
    # Linear: R1, bounded possessive bodies (R2, R3).
    detector(
        "github_token",
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}+|github_pat_[A-Za-z0-9_]{22,255}+)"
        r"(?![A-Za-z0-9_])",
        keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        source="gitleaks github-pat / github-oauth / github-app-token / github-refresh-token / "
               "github-fine-grained-pat",
    ),
    # Linear: R1, bounded possessive body (R2).
    detector(
        "gitlab_token",
        r"(?<![A-Za-z0-9_\-])gl(?:pat|dt|rt|ptt|soat|oas|ft|imt|ffct|agent|cbt)-"
        r"[A-Za-z0-9_\-]{20,300}+(?:\.[0-9a-z]{9})?",
        keywords=("gl",),
        source="gitleaks gitlab-pat / gitlab-pat-routable / gitlab-deploy-token / ...",
    ),
    # Linear: R1; the digit run and the body are bounded and disjoint at the "-" between (R3).
    detector(
        "slack_token",
        r"(?<![A-Za-z0-9\-])xox[abposre]-[0-9]{1,16}-[A-Za-z0-9\-]{8,250}+",
        keywords=("xox",),
        source="gitleaks slack-bot-token / slack-user-token / slack-legacy-*; "
               "detect-secrets SlackDetector",
    ),
    # Linear: R1, bounded possessive body (R2).
    detector(
        "slack_app_token",
        r"(?<![A-Za-z0-9\-])xapp-[0-9]-[A-Za-z0-9\-]{16,250}+",
        keywords=("xapp-",),
        source="gitleaks slack-app-token",
    ),
    # Linear: literal host (R1); the path is one bounded possessive run (R2). Only the path
    # (the credential) is replaced.
    detector(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+\-]{20,256}+)",
        keywords=("hooks.slack.com/",),
        source="gitleaks slack-webhook-url; detect-secrets SlackDetector",
    ),
    # Linear: R1, bounded possessive body (R2).
    detector(
        "stripe_key",
        r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,255}+",
        keywords=("k_live_", "k_test_", "k_prod_"),
        source="gitleaks stripe-access-token; detect-secrets StripeDetector",
    ),
    # Linear: R1, exactly 35 characters (R2).
    detector(
        "google_api_key",
        r"(?<![A-Za-z0-9_\-])AIza[0-9A-Za-z_\-]{35}(?![A-Za-z0-9_\-])",
        keywords=("aiza",),
        source="gitleaks gcp-api-key",
    ),
    # Linear: R1, bounded (R2).
    detector(
        "huggingface_token",
        r"(?<![A-Za-z0-9_])(?:hf_|api_org_)[A-Za-z0-9]{34,40}(?![A-Za-z0-9_])",
        keywords=("hf_", "api_org_"),
        source="gitleaks huggingface-access-token / huggingface-organization-api-token",
    ),
    # Linear: R1, exactly 36 characters (R2).
    detector(
        "npm_token",
        r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])",
        keywords=("npm_",),
        source="gitleaks npm-access-token; detect-secrets NpmDetector",
    ),
    # Linear: R1 (long literal prefix), bounded possessive body (R2).
    detector(
        "pypi_token",
        r"(?<![A-Za-z0-9_\-])pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{50,4096}+",
        keywords=("pypi-age",),
        source="gitleaks pypi-upload-token; detect-secrets PypiTokenDetector",
    ),
    # Linear: R1, exactly 32 hex characters (R2).
    detector(
        "twilio_key",
        r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        gate=r"SK|AC",  # its literal opening
        source="gitleaks twilio-api-key; detect-secrets TwilioKeyDetector",
    ),
    # Linear: R1, fixed lengths (R2).
    detector(
        "sendgrid_api_key",
        r"(?<![A-Za-z0-9_\-])SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])",
        keywords=("sg.",),
        source="gitleaks sendgrid-api-token; detect-secrets SendGridDetector",
    ),
    # Linear: R1 (the look-behind covers the hex class), fixed lengths (R2).
    detector(
        "mailgun_api_key",
        r"(?<![A-Za-z0-9_\-])(?:key-[0-9a-f]{32}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})"
        r"(?![A-Za-z0-9_\-])",
        # gate: each alternative without its look-around (the second without its first run)
        gate=r"key-[0-9a-f]{32}|-[0-9a-f]{8}-[0-9a-f]{8}",
        source="gitleaks mailgun-private-api-token / mailgun-signing-key",
    ),
    # Linear: literal host (R1); id and token are bounded runs split by "/" (R2, R3).
    detector(
        "discord_webhook",
        r"discord(?:app)?\.com/api(?:/v[0-9]{1,2})?/webhooks/[0-9]{5,30}/"
        r"(?P<secret>[A-Za-z0-9_\-]{20,256}+)",
        keywords=("/webhooks/",),
        source="Discord webhook URL shape (discord.js WebhookRegex)",
    ),
    # Linear: R1, three bounded runs split by "." (not in the class) (R2, R3).
    detector(
        "discord_bot_token",
        r"(?<![A-Za-z0-9_\-])[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}"
        r"(?![A-Za-z0-9_\-])",
        gate=r"\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}",  # its middle part, from the first dot
        source="detect-secrets DiscordBotTokenDetector",
    ),
    # Linear: the keyword is a literal alternation (R1); separator and value bounded (R2).
    detector(
        "aws_secret_access_key",
        r"(?i:(?:(?<=aws)|(?<=aws[ _.\-]))secret[ _.\-]?(?:access[ _.\-]?)?key"
        r"|secret[ _.\-]?access[ _.\-]?key)"
        r"[\\\"'\]]{0,4}[ \t]{0,16}(?:\[[^\]\n]{0,64}\][ \t]{0,4})?(?::=|=>|[:=])[ \t]{0,16}"
        r"[\\\"']{0,2}(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        keywords=("secret",),
        source="detect-secrets AWSKeyDetector.get_secret_access_key / "
               "aws_secret_access_key.py; `aws configure` prompt; aws sts JSON",
    ),
    # Linear: as aws_secret_access_key; the value is one bounded possessive run.
    detector(
        "aws_session_token",
        r"(?i:(?:session|security)[ _.\-]?token)"
        r"[\\\"'\]]{0,4}[ \t]{0,16}(?::=|=>|[:=])[ \t]{0,16}[\\\"']{0,2}"
        r"(?P<secret>[A-Za-z0-9/+=]{16,8192}+)",
        keywords=("token",),
        source="aws sts JSON SessionToken / AWS_SESSION_TOKEN",
    ),
    # Linear: keyword literal (R1); one bounded possessive value run (R2).
    detector(
        "azure_storage_key",
        r"(?i:(?<![a-z0-9])(?:AccountKey|SharedAccessKey|SharedAccessSignature))"
        r"[ \t]{0,8}=[ \t]{0,8}(?P<secret>[^;\s\"'\\<>]{8,4096}+)",
        keywords=("accountkey", "sharedaccess"),
        source="detect-secrets AzureStorageKeyDetector (AccountKey=)",
    ),
)
