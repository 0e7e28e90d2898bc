"""A deterministic generator of realistic agent sessions, for the storage benchmark.

Every session is a list of OpenAI-Chat-shaped message records, as an agent loop would append
them, and a stable idempotency key per message (``f"{session_id}:{n}"``). A turn is:

* a ``user`` message (text);
* an ``assistant`` message with 0-3 ``tool_calls``
  (``{"id", "type": "function", "function": {"name", "arguments": <JSON text>}}``) and, when it
  makes calls, text only sometimes (``content: null`` otherwise);
* one ``role: tool`` message per call (``tool_call_id``, ``content``);
* when calls were made, often a final ``assistant`` text.

Tools: ``read_file``, ``bash``, ``edit_file``, ``grep``, ``web_search``. Argument texts are 50 B
to 4 KB (log-uniform, UTF-8 bytes), result texts 100 B to 20 KB (log-uniform); about a third
of all texts are non-ASCII (accents, umlauts, Japanese, emoji). Arguments hold the characters
that JSON must escape (quotes, backslashes, newlines, tabs), mostly as compact JSON, some with
``", "`` / ``": "`` separators; non-ASCII is written raw (as models emit it).

Everything comes from one seeded ``random.Random``: the same arguments give the same sessions,
byte for byte. :data:`ASCII_TERM` and :data:`NON_ASCII_TERM` occur in some arguments (and only
in the fields that carry free text), for substring searches.

Run ``python bench/workload.py`` to print a summary of the default workload.
"""

from __future__ import annotations

import json
import math
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "ASCII_TERM",
    "NON_ASCII_TERM",
    "SEED",
    "TOOLS",
    "Session",
    "WorkloadStats",
    "generate_session",
    "generate_sessions",
    "stats",
]

#: The default seed.
SEED = 20261130
#: The tools the agent calls.
TOOLS = ("read_file", "bash", "edit_file", "grep", "web_search")
#: Substring search terms: one ASCII, one non-ASCII. Both occur in some argument texts.
ASCII_TERM = "TODO(perf)"
NON_ASCII_TERM = "Größe"

ARGUMENT_BYTES = (50, 4096)
RESULT_BYTES = (100, 20_480)
NON_ASCII_SHARE = 1 / 3

_ASCII_WORDS = (
    "the", "a", "of", "to", "and", "in", "is", "for", "return", "self", "value", "def",
    "class", "import", "from", "None", "True", "False", "if", "else", "while", "with", "as",
    "path", "config", "session", "store", "test", "assert", "error", "fix", "bug", "update",
    "build", "cache", "index", "query", "result", "message", "call", "tool", "render",
    "src/store/core/model.py", "tests/unit/test_model.py", "README.md", "--verbose", "-rn", "|",
    "x = 1", "print(x)", "async", "await", "yield", "lambda", "=>", "{", "}", "[", "]", "(",
    ")", ";", "//", "#", "0x1F", "42", "3.14", "1e-9", "http://example.com/a?b=c&d=e",
)
_ESCAPED_WORDS = ('"quoted"', "C:\\Users\\dev", "\\n", "tab\there", "it's", 'say "hi"')
_NON_ASCII_WORDS = (
    "café", "naïve", "Übersicht", "Grüße", "façade", "résumé", "München", "Straße", "ñandú",
    "smörgåsbord", "日本語", "東京", "データベース", "検索", "ツール", "中文", "测试", "한국어",
    "Ελληνικά", "русский", "עברית", "العربية", "🙂", "🚀", "✅", "🔥", "👩‍💻", "–", "—", "…",
    "«guillemets»", "„Anführungszeichen“", "½", "€", "²",
)
_ALNUM = string.ascii_letters + string.digits


@dataclass(frozen=True, slots=True)
class Session:
    """One generated session: its id, its message records and one key per record."""

    session_id: str
    messages: list[dict[str, Any]]
    keys: list[str]

    @property
    def call_count(self) -> int:
        return sum(len(m.get("tool_calls") or ()) for m in self.messages)


@dataclass(frozen=True, slots=True)
class WorkloadStats:
    sessions: int
    messages: int
    calls: int
    results: int
    argument_bytes: int
    result_bytes: int
    non_ascii_share: float
    calls_by_tool: dict[str, int]

    def describe(self) -> str:
        return (
            f"{self.sessions} sessions, {self.messages} messages, {self.calls} tool calls, "
            f"{self.results} results; arguments {self.argument_bytes / 1e6:.1f} MB, results "
            f"{self.result_bytes / 1e6:.1f} MB; {self.non_ascii_share:.0%} of texts non-ASCII"
        )


class _Texts:
    """Text of a given UTF-8 size, ASCII or non-ASCII, from one ``random.Random``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def size(self, bounds: tuple[int, int]) -> int:
        low, high = bounds
        return int(math.exp(self.rng.uniform(math.log(low), math.log(high))))

    def non_ascii(self) -> bool:
        return self.rng.random() < NON_ASCII_SHARE

    def words(self, nbytes: int, non_ascii: bool, *, lines: bool = False) -> str:
        """About ``nbytes`` UTF-8 bytes of words (never more), with newlines when ``lines``."""
        rng = self.rng
        vocab: tuple[str, ...] = _ASCII_WORDS + _ESCAPED_WORDS
        if non_ascii:
            vocab = vocab + _NON_ASCII_WORDS * 2
        count = max(2, nbytes // 4)
        chosen = rng.choices(vocab, k=count)
        if lines:
            for i in range(rng.randrange(6, 12), count, rng.randrange(6, 12)):
                chosen[i] = chosen[i] + "\n"
        text = " ".join(chosen)
        raw = text.encode()[:nbytes]
        return raw.decode("utf-8", "ignore")

    def sentence(self, non_ascii: bool, low: int = 20, high: int = 400) -> str:
        return self.words(self.rng.randint(low, high), non_ascii)


def _call_id(rng: random.Random) -> str:
    return "call_" + "".join(rng.choices(_ALNUM, k=24))


def _arguments(texts: _Texts, tool: str) -> str:
    """The argument JSON text of one call: 50 B to 4 KB, exactly as a model would emit it."""
    rng = texts.rng
    target = texts.size(ARGUMENT_BYTES)
    non_ascii = texts.non_ascii()
    path = f"src/{rng.choice(('store', 'app', 'lib', 'docs'))}/module_{rng.randrange(500)}.py"
    fields: dict[str, Any]
    if tool == "read_file":
        fields = {"path": path, "offset": rng.randrange(0, 2000), "limit": 400, "note": ""}
        fill = "note"
    elif tool == "bash":
        fields = {"command": "", "timeout": rng.choice((30, 60, 120)), "cwd": "/work/repo"}
        fill = "command"
    elif tool == "edit_file":
        fields = {"path": path, "old_string": "", "new_string": "", "replace_all": False}
        fill = "new_string"
    elif tool == "grep":
        fields = {"pattern": "", "path": "src/", "flags": ["-n", "-r"], "context": 2}
        fill = "pattern"
    else:
        fields = {"query": "", "max_results": rng.randint(3, 10), "lang": "en"}
        fill = "query"
    compact = rng.random() < 0.75
    dumps: Callable[[Any], str] = (
        (lambda v: orjson.dumps(v).decode()) if compact
        else (lambda v: json.dumps(v, ensure_ascii=False))
    )
    overhead = len(dumps(fields).encode())
    body = texts.words(max(8, target - overhead), non_ascii, lines=tool == "edit_file")
    if tool == "edit_file":
        cut = len(body) // 3
        fields["old_string"], body = body[:cut], body[cut:]
    # The search terms, each in some of the texts (the non-ASCII one only in non-ASCII ones).
    if rng.random() < 0.12:
        body = ASCII_TERM + " " + body
    elif non_ascii and rng.random() < 0.3:
        body = body + " " + NON_ASCII_TERM
    fields[fill] = body
    text = dumps(fields)
    # Escapes make the text longer than the body: trim the body until the text fits.
    while len(text.encode()) > ARGUMENT_BYTES[1] and len(body) > 1:
        body = body[: len(body) - max(1, (len(text.encode()) - ARGUMENT_BYTES[1]) // 2)]
        fields[fill] = body
        text = dumps(fields)
    return text


def _result(texts: _Texts, tool: str) -> str:
    """A tool's output text: 100 B to 20 KB, lines of code, shell output, matches or links."""
    rng = texts.rng
    size = texts.size(RESULT_BYTES)
    text = texts.words(size, texts.non_ascii(), lines=True)
    if tool == "grep":
        head = f"src/store/module_{rng.randrange(500)}.py:{rng.randrange(1, 900)}: "
        text = head + text
    elif tool == "web_search":
        text = f"1. https://example.org/{rng.randrange(10**6)} — " + text
    elif tool == "bash" and rng.random() < 0.1:
        text = "Traceback (most recent call last):\n" + text
    return text.encode()[:size].decode("utf-8", "ignore")


def generate_session(rng: random.Random, session_id: str, turns: int) -> Session:
    """One session of ``turns`` turns (see the module docstring)."""
    texts = _Texts(rng)
    records: list[dict[str, Any]] = []
    for _ in range(turns):
        records.append({"role": "user", "content": texts.sentence(texts.non_ascii(), 20, 600)})
        ncalls = rng.choices((0, 1, 2, 3), weights=(25, 35, 25, 15))[0]
        if ncalls == 0:
            records.append(
                {"role": "assistant", "content": texts.sentence(texts.non_ascii(), 40, 1500)}
            )
            continue
        calls: list[dict[str, Any]] = []
        for _ in range(ncalls):
            tool = rng.choice(TOOLS)
            calls.append({
                "id": _call_id(rng),
                "type": "function",
                "function": {"name": tool, "arguments": _arguments(texts, tool)},
            })
        preface = texts.sentence(texts.non_ascii(), 20, 300) if rng.random() < 0.4 else None
        records.append({"role": "assistant", "content": preface, "tool_calls": calls})
        for call in calls:
            records.append({
                "role": "tool",
                "tool_call_id": call["id"],
                "content": _result(texts, call["function"]["name"]),
            })
        if rng.random() < 0.6:
            records.append(
                {"role": "assistant", "content": texts.sentence(texts.non_ascii(), 40, 1500)}
            )
    keys = [f"{session_id}:{n}" for n in range(len(records))]
    return Session(session_id, records, keys)


def generate_sessions(
    count: int = 100, turns: int = 20, *, seed: int = SEED, prefix: str = "bench"
) -> list[Session]:
    """``count`` sessions of ``turns`` turns each, ids ``f"{prefix}-{i:04d}"``; deterministic."""
    rng = random.Random(seed)
    return [generate_session(rng, f"{prefix}-{i:04d}", turns) for i in range(count)]


def _texts_of(record: dict[str, Any]) -> list[str]:
    out = [record["content"]] if isinstance(record.get("content"), str) else []
    out.extend(c["function"]["arguments"] for c in record.get("tool_calls") or ())
    return out


def stats(sessions: list[Session]) -> WorkloadStats:
    """Sizes and shares of a workload (for the benchmark's header)."""
    calls = results = arg_bytes = res_bytes = texts = non_ascii = 0
    by_tool: dict[str, int] = {}
    for session in sessions:
        for record in session.messages:
            for call in record.get("tool_calls") or ():
                calls += 1
                arg_bytes += len(call["function"]["arguments"].encode())
                name = call["function"]["name"]
                by_tool[name] = by_tool.get(name, 0) + 1
            if record["role"] == "tool":
                results += 1
                res_bytes += len(record["content"].encode())
            for text in _texts_of(record):
                texts += 1
                non_ascii += not text.isascii()
    return WorkloadStats(
        len(sessions), sum(len(s.messages) for s in sessions), calls, results, arg_bytes,
        res_bytes, non_ascii / max(texts, 1), dict(sorted(by_tool.items())),
    )


if __name__ == "__main__":
    generated = generate_sessions()
    summary = stats(generated)
    print(summary.describe())
    print("calls by tool:", summary.calls_by_tool)
    sizes = sorted(
        len(c["function"]["arguments"].encode())
        for s in generated for m in s.messages for c in m.get("tool_calls") or ()
    )
    print(f"argument bytes: min {sizes[0]}, median {sizes[len(sizes) // 2]}, max {sizes[-1]}")
    results = sorted(
        len(m["content"].encode()) for s in generated for m in s.messages if m["role"] == "tool"
    )
    print(f"result bytes: min {results[0]}, median {results[len(results) // 2]}, "
          f"max {results[-1]}")
