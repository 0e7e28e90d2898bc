"""The built-in secret detectors of :mod:`store.redact` (domain: stdlib only).

Each :class:`Detector` names a kind of secret and finds it, with a compiled ``pattern`` (the
span replaced is the first participating group whose name starts with ``secret``, else the
whole match; ``accept`` may veto or trim it) or a ``func`` yielding ``(start, end)`` spans.
:data:`DETECTORS` lists them most specific first; ``source`` names the public rule each one
follows (gitleaks' ``config/gitleaks.toml`` rule ids, Yelp detect-secrets' plugins).

Only the secret itself is replaced: an assignment keeps its key (``password=[REDACTED:password]``),
a URL keeps its user and host (``postgres://app:[REDACTED:url_password]@db/x``), a header keeps
its scheme (``Bearer [REDACTED:bearer_token]``).

Linear time
-----------
Python's ``re`` backtracks, so a pattern is only linear if (a) the positions where a match can
start are cheap to reject, and (b) from each start the engine does a bounded amount of work, or
the work done from different starts covers disjoint text. Every pattern here follows these rules
(each detector's comment says which ones it relies on):

* R1 anchored start: a pattern begins with a literal (``AKIA``, ``ghp_``, ``-----BEGIN``, a
  keyword) and/or a negative look-behind for its own body class (``(?<![A-Za-z0-9_])``), so
  inside a run of body characters only the first position can start a match: every run is
  scanned from at most one start.
* R2 bounded repetition: every repeat that could run long has an upper bound (``{20,400}``), so
  one start costs at most a constant number of steps.
* R3 no ambiguity: no nested quantifiers, and consecutive repeats / alternatives use disjoint
  character classes (or the first is possessive, ``*+``/``{m,n}+``, Python 3.11+), so a failed
  attempt cannot retry exponentially or quadratically many splits.
* R4 no scan-to-a-missing-terminator from every start: nothing like ``BEGIN[\\s\\S]*?END``.
  The private-key detector is code, not one regex: it finds ``-----BEGIN ... PRIVATE KEY-----``
  with a bounded regex, reads the key body line by line (each line read once), looks for
  ``-----END`` with ``str.find`` at most once per region (the result is cached, so a text of
  BEGIN lines with no END at all costs one ``find``), and resumes after what it consumed.

``tests/unit/test_detectors.py`` feeds each detector, and the whole redactor, 1 MB of
adversarial text and requires each to finish within a generous bound.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from store.errors import UsageError

__all__ = [
    "DETECTORS",
    "DETECTORS_BY_KIND",
    "MARKER",
    "Detector",
    "detector",
    "marker",
]

Span = tuple[int, int]
Finder = Callable[[str], Iterator[Span]]

_KIND = re.compile(r"[a-z][a-z0-9_]*")
#: A marker already in the text: never redacted again.
MARKER = re.compile(r"\[REDACTED:[a-z][a-z0-9_]{0,64}\]")
_ALNUM = re.compile(r"[A-Za-z0-9]")


def _compiled(pattern: object) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern):
        return pattern
    if not isinstance(pattern, str):
        raise UsageError(f"a redaction pattern must be a regular expression, got {pattern!r}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"not a regular expression: {pattern!r}: {exc}") from None


def marker(kind: str) -> str:
    """The replacement text of a secret of ``kind``."""
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True, slots=True)
class Detector:
    """A kind of secret and how to find it: a compiled ``pattern`` (the span replaced is the
    first participating group whose name starts with ``secret``, else the whole match; ``accept``
    may veto or trim it) or a ``func`` yielding ``(start, end)`` spans. ``source`` names the
    public rule it follows."""

    kind: str
    pattern: re.Pattern[str] | None = None
    func: Finder | None = None
    accept: Callable[[str, int, int, str], Span | None] | None = None
    #: Lower-case strings of which at least one occurs (case-insensitively) in any match: when
    #: none is in the text, the detector is skipped (one C-speed ``in`` each; gitleaks "keywords").
    keywords: tuple[str, ...] = ()
    source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not _KIND.fullmatch(self.kind):
            raise UsageError(
                f"a redaction kind must be lower-case letters, digits and _, got {self.kind!r}")
        if isinstance(self.pattern, str | bytes):
            object.__setattr__(self, "pattern", _compiled(self.pattern))
        if (self.pattern is None) == (self.func is None):
            raise UsageError("a detector needs exactly one of pattern and func")
        if self.pattern is not None and (not self.pattern.pattern or self.pattern.match("")):
            raise UsageError(f"redaction pattern {self.pattern.pattern!r} matches empty text")

    def spans(self, text: str, lowered: str | None = None) -> Iterator[Span]:
        """The ``(start, end)`` of each secret this detector finds in ``text`` (``lowered``:
        ``text.lower()``, when the caller has it already)."""
        if self.keywords:
            if lowered is None:
                lowered = text.lower()
            if not any(word in lowered for word in self.keywords):
                return
        if self.func is not None:
            yield from self.func(text)
            return
        assert self.pattern is not None
        groups = [name for name in self.pattern.groupindex if name.startswith("secret")]
        for found in self.pattern.finditer(text):
            start, end = found.span()
            name = ""
            for name in groups:
                if found.start(name) >= 0:
                    start, end = found.span(name)
                    break
            if self.accept is not None:
                trimmed = self.accept(text, start, end, name)
                if trimmed is None:
                    continue
                start, end = trimmed
            if end > start:
                yield start, end


def detector(kind: str, pattern: str, *, keywords: Iterable[str] = (),
             accept: Callable[[str, int, int, str], Span | None] | None = None,
             source: str = "") -> Detector:
    """A pattern detector. Patterns are compiled with ``re.ASCII``: case-insensitive parts match
    ASCII letters only (so a keyword gate on ``text.lower()`` can never skip a real match)."""
    return Detector(kind, re.compile(pattern, re.ASCII), accept=accept,
                    keywords=tuple(keywords), source=source)


# ---------------------------------------------------------------------------------------------
# Value filters for assignments (placeholders, code, empty values are not secrets)
# ---------------------------------------------------------------------------------------------

#: Lower-cased values that are never secrets (detect-secrets keyword.py FALSE_POSITIVES, and
#: Python/TS type names: ``password: str``).
_STOPWORDS = frozenset("""
none null nil true false undefined undef str string bytes int bool any optional required
password passwd pass secret secrets token tokens apikey api_key key redacted hidden masked
empty env getenv prompt dummy example placeholder todo not str_to_sign some_key test
""".split())

# Placeholders: $VAR ${VAR} $(cmd) {{ x }} ${{ x }} <x> %s %(x)s *** xxx ... [REDACTED...]
# Linear: fullmatch on one value of at most 4096 characters, every repeat bounded (R2).
_PLACEHOLDER = re.compile(
    r"\$[A-Z_][A-Z0-9_]{0,128}"
    r"|\$\{[^}\n]{0,256}\}"
    r"|\$\([^)\n]{0,256}\)"
    r"|\$?\{\{[^}\n]{0,256}\}\}"
    r"|<[^<>\n]{0,128}>"
    r"|%\(?[A-Za-z_]{0,64}\)?[sd]"
    r"|[*xX.#•\-]{1,256}"
    r"|\[[^\]\n]{0,64}\]"
    r"|\[?(?:REDACTED|redacted|Redacted)[^\]\n]{0,64}\]?",
)
# Code, not a value: getpass(, os.environ.get(, os.environ[ (a call or an index; bounded, R2)
_CODE_CALL = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,128}[(\[]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
_SNAKE_NAME = re.compile(r"[a-z][a-z]{0,63}_[a-z_]{1,64}")  # url_user_password, proxy_auth


def _is_code_ref(value: str) -> bool:
    """``getpass(``, ``os.environ[``, or a dotted name of short parts (``self.password``,
    ``settings.SECRET_KEY``, ``mod.X25519PrivateKey``; not ``hvs.CAESI...`` or ``sl.AbC1...``,
    whose last part is longer than 40 characters)."""
    if len(value) > 160:
        return False
    if _CODE_CALL.match(value):
        return True
    parts = value.split(".")
    return 2 <= len(parts) <= 8 and all(_IDENT.fullmatch(part) for part in parts)


_TRAILING = ")]}>.:"  # dropped from the end of an unquoted value: f(password=x), "token: x."
_LOWER_WORDS = re.compile(r"[a-z][a-z_\-]{0,600}")  # "required", "client_credentials"
# f"{run_id}:{self._token}", "{{ vault_token }}": an interpolation, not a value (bounded, R2).
_INTERPOLATION = re.compile(r"\{[A-Za-z_][A-Za-z0-9_.()\[\]]{0,64}\}")
_TEMPLATE_START = ("${", "$(", "{{", "{%", "<%")


def _looks_like_identifier(value: str) -> bool:
    """A bare name such as OPENAI_API_KEY, privateKey, CertificateIssuerPrivateKeyTypes:
    letters (and _ -) only, and either snake/CONSTANT case or mostly lower case. (Random
    letter-only tokens are about half upper case, and most tokens have digits.)"""
    letters = value.replace("_", "").replace("-", "")
    if not (letters.isascii() and letters.isalpha()):
        return False
    upper = sum(1 for char in letters if char.isupper())
    return "_" in value or upper * 4 <= len(letters)


def _value_ok(text: str, start: int, end: int, group: str, *, min_len: int,
              strict: bool) -> Span | None:
    raw = text[start:end]
    if _PLACEHOLDER.fullmatch(raw) or raw.startswith(_TEMPLATE_START) \
            or _INTERPOLATION.search(raw):
        return None
    if group == "secret_bare":  # unquoted: drop closing brackets / a full stop after it
        while end > start and text[end - 1] in _TRAILING:
            end -= 1
    while end > start and text[end - 1] in " \t":
        end -= 1
    if _PEM_BEGIN.match(text, start):  # "private_key": "-----BEGIN ...": the key detector's
        return None
    value = text[start:end]
    if len(value) < min_len or not _ALNUM.search(value):
        return None
    if (value.lower().rstrip("?!") in _STOPWORDS or _PLACEHOLDER.fullmatch(value)
            or value.startswith(_TEMPLATE_START) or _INTERPOLATION.search(value)):
        return None
    if group == "secret_bare" and (_is_code_ref(value) or _SNAKE_NAME.fullmatch(value)):
        return None  # password=self.password, password = proxy_auth
    if strict and (_LOWER_WORDS.fullmatch(value) or (value.isdigit() and len(value) <= 12)
                   or (group == "secret_bare" and _looks_like_identifier(value))):
        # token / key / secret values: not a bare word ("required", "client_credentials"),
        # not a small number ("max_token: 4096").
        return None
    return start, end


def _accept_password(text: str, start: int, end: int, group: str) -> Span | None:
    return _value_ok(text, start, end, group, min_len=1, strict=False)


def _accept_secret(text: str, start: int, end: int, group: str) -> Span | None:
    return _value_ok(text, start, end, group, min_len=8, strict=True)


def _accept_db_password(text: str, start: int, end: int, group: str) -> Span | None:
    if group == "secret2" and not text.startswith(";", end):
        return None
    return _value_ok(text, start, end, group, min_len=1, strict=False)


def _accept_url_password(text: str, start: int, end: int, group: str) -> Span | None:
    value = text[start:end]
    if _PLACEHOLDER.fullmatch(value) or value.startswith(_TEMPLATE_START) \
            or value.lower() in _URL_PLACEHOLDERS:
        return None
    return start, end


_URL_PLACEHOLDERS = frozenset(("password", "pass", "passwd", "pwd", "secret"))


def _accept_cli_password(text: str, start: int, end: int, group: str) -> Span | None:
    value = text[start:end]
    if value.isdigit() or _PLACEHOLDER.fullmatch(value):  # -u 1000:1000 is uid:gid
        return None
    return start, end


# ---------------------------------------------------------------------------------------------
# Assignments: <key ending in a keyword> <sep> <value>; only the value is replaced
# ---------------------------------------------------------------------------------------------

# After the keyword: closing quotes/bracket of the key (`"password"`, `\"password\"`,
# `cfg['password']`), spaces, a separator (= : := => ==), spaces, then the value in one of four
# shapes whose first characters are disjoint (R3):
#   \"...\"  JSON inside a JSON string        (escaped quote opens; stops before \")
#   "..."    double-quoted, JSON escapes kept  (a missing closing quote: to end of line)
#   '...'    single-quoted
#   bare     up to whitespace, a quote, a backslash, , ; & or `
# Every repeat is bounded (R2) and the value repeats are possessive, so one start costs at most
# ~4200 steps and a match is never retried; a start needs the keyword literal (R1). The keyword
# must END the key: "password_policy=x" fails because "_" is no separator.
_SEP = (r"[\\\"'\]]{0,4}[ \t]{0,16}(?::=|=>|==?|:)[ \t]{0,16}")
_VALUE = (r"(?:[rRbBuUfF]{1,2}(?=[\"']))?"  # a Python string prefix: f"...", b'...'
          r"(?:\\\"(?P<secret_esc>(?:[^\"\\\n]|\\[^\"\n]){1,4096}+)"
          r"|\"(?P<secret_dq>(?:[^\"\\\n]|\\.){1,4096}+)"
          r"|'(?P<secret_sq>[^'\n]{1,4096}+)"
          r"|(?P<secret_bare>[^\s\"'\\,;&`]{1,4096}+))")

_PASSWORD_KEYS = r"(?:pass(?:word|wd|phrase)|(?<![a-z])pass)"  # not bypass=, compass:
_KEY_QUALIFIERS = ("api", "access", "secret", "private", "priv", "client", "auth", "app",
                   "account", "service", "master", "encryption", "signing", "session")
# Anchored on the last word of the key (secret, token, key: three literals, cheap to reject at
# each position); "key" must follow a qualifier, tested after "key" matched with fixed-width
# look-behinds (apikey, api_key, api-key, api.key, accessKey, ...).
_SECRET_KEYS = ("(?:secret|token|key(?:"
                + "|".join(f"(?<={q}key)|(?<={q}[_.\\-]key)" for q in _KEY_QUALIFIERS)
                + "))")


# ---------------------------------------------------------------------------------------------
# Private keys (code, not one regex: see R4)
# ---------------------------------------------------------------------------------------------

# "-----BEGIN" then at most 41 tries of the lazy label: constant per start (R1, R2).
_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}? PRIVATE KEY(?: BLOCK)?-----")
# The END line, or what is left of it: two disjoint bounded runs (R2, R3).
_PEM_END = re.compile(r"-----END[ A-Z0-9]{0,60}-{0,5}")
# Rest of the BEGIN line (a key flattened to one line with spaces): one bounded class run.
_PEM_SAME_LINE = re.compile(r"[A-Za-z0-9+/= \t]{0,65536}+")
# One body line: an optional prefix (indentation, "> ", "  12\t" / "  12→" line numbers), then
# base64 or a "Header: value" line, then a line break (\n, \r\n, or the JSON escapes \\n) or a
# zero-width end (-----END on the same line, a closing quote, end of text). All repeats are
# bounded and possessive where the next token is disjoint (R2, R3). The caller matches this at
# increasing positions, so each character is read by one line match (R4).
_PEM_PREFIX = r"[ \t>]{0,16}(?:[0-9]{1,9}(?:\t|→|:|\|)[ \t]{0,4})?"
_PEM_LINE = re.compile(
    r"(?P<body>" + _PEM_PREFIX
    + r"(?P<content>[A-Za-z0-9+/=]{1,65536}+|[A-Za-z][A-Za-z0-9\-]{1,40}:[^\r\n\\]{0,256}+)?)"
    r"[ \t]{0,16}(?:\r?\n|(?:\\{1,2}r)?\\{1,2}n|(?=-----END|[\"'\]},)]|\Z))"
)
_PEM_END_LINE = re.compile(_PEM_PREFIX + r"(?=-----END)")
#: An END further than this from its BEGIN is not used (the body lines decide the span).
PEM_END_WINDOW = 16384
# Some key material between BEGIN and a far END (else: code such as START = "-----BEGIN ...").
_PEM_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{32}")


def _private_keys(text: str) -> Iterator[Span]:
    """PEM / OpenSSH / PGP private keys: from the BEGIN line to the END line, or, without an END,
    to the end of the key body (the base64 lines after BEGIN; the end of the text for output of
    ``head id_rsa``).

    Linear: ``_PEM_BEGIN.search`` resumes after each consumed key; the body loop reads each line
    once; ``str.find("-----END")`` runs again only after passing the last END found (a text with
    no END costs one ``find``); the "no other BEGIN in between" ``find`` stops at the first BEGIN;
    the key-material search runs only when no BEGIN lies before that END, so the next BEGIN is
    beyond it and each region is searched once."""
    pos = 0
    next_end = -2  # position of the first "-----END" at/after the last search; -1: none
    length = len(text)
    while True:
        begin = _PEM_BEGIN.search(text, pos)
        if begin is None:
            return
        start, after = begin.span()
        stop = after
        # 1. the key body, line by line.
        same = _PEM_SAME_LINE.match(text, after)
        q = same.end() if same else after
        content_end = q
        while content_end > after and text[content_end - 1] in " \t":
            content_end -= 1
        stop = content_end  # the key flattened onto the BEGIN line, if any
        while q < length:
            line = _PEM_LINE.match(text, q)
            if line is None or line.end() == q:
                break
            if line.group("content"):
                stop = line.end("body")
            q = line.end()
        end_here = _PEM_END_LINE.match(text, q) if q < length else None
        if end_here is not None:
            stop = _PEM_END.match(text, end_here.end()).end()  # type: ignore[union-attr]
        else:
            # 2. an END further on, when no other BEGIN comes first (unusual formatting).
            if next_end != -1 and next_end < after:
                next_end = text.find("-----END", after)
            if (next_end != -1 and next_end - after <= PEM_END_WINDOW
                    and text.find("-----BEGIN", after, next_end) == -1
                    and _PEM_KEY_MATERIAL.search(text, after, next_end)):
                stop = max(stop, _PEM_END.match(text, next_end).end())  # type: ignore[union-attr]
        yield start, stop
        pos = max(stop, after)


# ---------------------------------------------------------------------------------------------
# The detectors, most specific first (the order breaks ties between equal spans)
# ---------------------------------------------------------------------------------------------

DETECTORS: tuple[Detector, ...] = (
    Detector(
        "private_key", func=_private_keys, keywords=("-----begin",),
        source="gitleaks private-key; detect-secrets PrivateKeyDetector",
    ),
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
    # ADO.NET / ODBC connection strings: "...;Password=p w;..." (the value may hold spaces;
    # "Password=x;" first in the string needs the ";" after it; "PWD=/home/u" is no match).
    # Linear: keyword literal (R1); the value is one bounded possessive run (R2) that cannot
    # contain ";" (R3); the ";" after it is checked in Python, not by a look-ahead, so a failed
    # value is skipped whole by finditer instead of being rescanned from each later start.
    detector(
        "db_password",
        r"(?i:;[ \t]{0,8}(?:password|pwd)[ \t]{0,8}=[ \t]{0,8}(?P<secret>[^;\n\"'\\]{1,1024}+)"
        r"|(?<![a-z0-9_])(?:password|pwd)[ \t]{0,8}=[ \t]{0,8}"
        r"(?P<secret2>[^;\n\"'\\]{1,1024}+))",
        accept=_accept_db_password,
        keywords=("password", "pwd"),
        source="gitleaks database-password (connection-string form)",
    ),
    # Linear: look-behind then "bearer" (R1); the look-ahead for a digit and the token are
    # bounded to 4096 (R2).
    detector(
        "bearer_token",
        r"(?<![A-Za-z0-9])(?i:bearer)[ \t]{1,8}"
        r"(?P<secret>(?=[A-Za-z._~+/=\-]{0,4096}[0-9])[A-Za-z0-9._~+/=\-]{16,4096}+)",
        keywords=("bearer",),
        source="gitleaks curl-auth-header (Bearer); store.redact bearer_token",
    ),
    # Linear: literal "authorization" (R1); bounded separators and value (R2).
    detector(
        "basic_auth",
        r"(?i:authorization)[\\\"']{0,3}[ \t]{0,8}[:=][ \t]{0,8}[\\\"']{0,3}(?i:basic)[ \t]{1,8}"
        r"(?P<secret>[A-Za-z0-9+/]{8,4096}+={0,2})",
        keywords=("authorization",),
        source="gitleaks curl-auth-header (Basic)",
    ),
    # curl -u user:password / --user user:password. Linear: literal flag after a look-behind
    # (R1); user and password are bounded runs split by ":" (not in the user class) (R2, R3).
    detector(
        "cli_password",
        r"(?<![A-Za-z0-9_\-])(?:-u|--user)(?:[ \t]{1,4}|=)[\"']?"
        r"[^\s:\"'@/]{1,256}+:(?!//)(?P<secret>[^\s\"']{1,1024}+)",
        accept=_accept_cli_password,
        keywords=("-u",),
        source="gitleaks curl-auth-user",
    ),
    # scheme://user:password@host. Linear: the scheme starts a run (look-behind for the scheme
    # class, R1) and is bounded to 32 characters (R2); the user class excludes ":" (R3); the
    # password is bounded to 1024 characters, so backtracking to its last "@" is bounded (R2).
    detector(
        "url_password",
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s:/@\"'<>\\]{0,256}+:"
        r"(?P<secret>[^\s/\"'<>\\]{1,1024})@(?=[A-Za-z0-9\[])",
        accept=_accept_url_password,
        keywords=("://",),
        source="detect-secrets BasicAuthDetector; store.redact url_password",
    ),
    # Linear: look-behind then "eyJ" (R1); three bounded possessive runs split by "." (not in
    # the class) (R2, R3).
    detector(
        "jwt",
        r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,8192}+\.ey[A-Za-z0-9_\-]{8,16384}+\."
        r"(?:[A-Za-z0-9_\-]{8,4096}+={0,2})?",
        keywords=("eyj",),
        source="gitleaks jwt; detect-secrets JwtTokenDetector",
    ),
    # Generic assignments (see _SEP/_VALUE). password, passwd, passphrase, pass.
    detector(
        "password",
        r"(?i:" + _PASSWORD_KEYS + ")" + _SEP + _VALUE,
        accept=_accept_password,
        keywords=("pass",),
        source="detect-secrets KeywordDetector; gitleaks generic-api-key (passw(or)?d)",
    ),
    # Generic assignments: secret, token, api_key/apikey, access_key, client_secret,
    # private_key, secret_key, ... (the keyword ends the key name; camelCase too).
    detector(
        "secret",
        r"(?i:" + _SECRET_KEYS + ")" + _SEP + _VALUE,
        accept=_accept_secret,
        keywords=("key", "secret", "token"),
        source="detect-secrets KeywordDetector; gitleaks generic-api-key",
    ),
)

DETECTORS_BY_KIND: dict[str, Detector] = {d.kind: d for d in DETECTORS}
