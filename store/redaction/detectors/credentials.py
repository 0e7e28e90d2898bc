"""Credentials in context: connection-string and assignment passwords, auth headers, URL
passwords, JWTs and generic key=value secrets (only the value is replaced)."""

from __future__ import annotations

import re

from store.redaction.detectors.base import ALNUM, Detector, Span, detector
from store.redaction.detectors.private_keys import PEM_BEGIN

__all__ = ["CREDENTIAL_DETECTORS"]


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
    if PEM_BEGIN.match(text, start):  # "private_key": "-----BEGIN ...": the key detector's
        return None
    value = text[start:end]
    if len(value) < min_len or not ALNUM.search(value):
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



#: Most specific first (the order breaks ties between equal spans).
CREDENTIAL_DETECTORS: tuple[Detector, ...] = (
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
        source="gitleaks curl-auth-header (Bearer); store.redaction.redact bearer_token",
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
        source="detect-secrets BasicAuthDetector; store.redaction.redact url_password",
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
