"""A heavy Claude Code home, generated (for ``bench/scale.py``; deterministic).

``make_home(root, messages)`` writes ``root/.claude/projects/<project>/<session>.jsonl``
files shaped as Claude Code writes them (learnt from the real files in
``/work/shared/corpus/claude_code``: the envelope's ``parentUuid``, ``sessionId``, ``cwd``,
``version``, ``gitBranch``, ``uuid``, ``timestamp``; assistant lines carrying the API
message with ``usage`` and one content block each, a turn's blocks on several lines under
one ``message.id``; user lines carrying ``tool_result`` blocks and the tool's own
``toolUseResult``; ``summary`` lines), until the store will count ``messages`` messages.

Sizes follow a year of one heavy user: ~4,000 sessions for 10^6 messages (sessions of
lognormal length, median ~150 messages), ~1.1 KB a line on average: short prompts and
replies, tool calls of a few hundred bytes, results from a line to tens of kilobytes. Texts
are drawn from a vocabulary (so that full-text search has real words to find); 0.2 % of the
results hold the phrase ``segfault at 0x7331``, 0.5 % of the shell commands run ``git push``.
Every file's mtime is its last line's time (months ago: settled).
"""

from __future__ import annotations

import math
import os
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

RARE_TEXT = "segfault at 0x7331"
COMMAND_TEXT = "git push"
#: A word of the prose vocabulary: in about a fifth of the messages (a common word's search).
COMMON_WORD = "handler"

_WORDS = (
    "the a to of and in is it that for on with as this be are from by at an or not "
    "function class module test tests error value return import file path config build "
    "server client request response cache index query table column session message call "
    "result argument parser reader writer store database migration schema update insert "
    "select delete commit branch merge rebase diff patch fix bug issue feature refactor "
    "performance memory latency throughput benchmark profile trace log warning debug info "
    "user assistant tool command output input stream buffer line lines bytes offset size "
    "list dict tuple string integer float boolean none null true false async await task "
    "worker process thread lock queue event handler callback timeout retry backoff limit "
    "page token usage cost model provider agent prompt context window summary title "
    "docker kubernetes deploy release version package dependency install upgrade lint "
    "typecheck format coverage assert fixture mock integration unit end check verify"
).split()
_TOOLS = ("Bash", "Read", "Edit", "Write", "Grep", "Glob", "TodoWrite", "Task", "WebFetch")
_TOOL_WEIGHTS = (34, 26, 14, 5, 8, 5, 4, 2, 2)
_COMMANDS = ("pytest tests -q -x", "git status", "git diff --stat", "ls -la src",
             "npm run build", "cargo test", "make lint", "rg -n TODO src", "git log --oneline -5",
             "python -m mypy --strict src", "docker compose up -d", "npm test -- --watch=false")


@dataclass
class HomeStats:
    files: int = 0
    sessions: int = 0
    lines: int = 0
    messages: int = 0
    calls: int = 0
    bytes: int = 0


class _Text:
    """Pools of prose and file bodies made once, sliced per use (fast at 10^7 lines)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.prose = " ".join(rng.choice(_WORDS) for _ in range(400_000))
        code_lines = [f"    {rng.choice(_WORDS)}_{rng.choice(_WORDS)} = "
                      f"{rng.choice(_WORDS)}({rng.choice(_WORDS)}, {rng.randrange(1000)})"
                      for _ in range(20_000)]
        self.code = "\n".join(code_lines)

    def words(self, size: int) -> str:
        start = self.rng.randrange(0, len(self.prose) - size - 1)
        return self.prose[start:start + size]

    def file_body(self, size: int) -> str:
        start = self.rng.randrange(0, len(self.code) - size - 1)
        return self.code[start:start + size]

    def size(self, median: float, sigma: float, cap: int) -> int:
        return max(8, min(cap, int(self.rng.lognormvariate(math.log(median), sigma))))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _session_lines(rng: random.Random, text: _Text, sid: str, project: str, start: datetime,
                   target: int, stats: HomeStats) -> tuple[list[bytes], datetime]:
    """One session's lines, holding ``target`` messages (as the store counts them)."""
    cwd = "/home/dev/" + project
    env = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
           "version": "1.0.108", "gitBranch": "main"}
    out: list[bytes] = []
    parent: str | None = None
    now = start
    messages = 0

    def emit(record: dict[str, object]) -> None:
        nonlocal parent, now
        now += timedelta(seconds=rng.uniform(0.5, 40))
        line_uuid = _uuid(rng)
        full = {"parentUuid": parent, **env, **record, "uuid": line_uuid,
                "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"}
        parent = line_uuid
        out.append(orjson.dumps(full))

    def usage() -> dict[str, object]:
        return {"input_tokens": rng.randrange(1, 30),
                "cache_creation_input_tokens": rng.randrange(0, 5000),
                "cache_read_input_tokens": rng.randrange(0, 90_000),
                "output_tokens": rng.randrange(1, 1500), "service_tier": "standard"}

    emit({"type": "user", "message": {"role": "user", "content": text.words(
        text.size(160, 1.0, 4000))}})
    messages += 1
    while messages < target:
        msg_id = "msg_01" + _uuid(rng).replace("-", "")[:22]
        request = "req_011" + _uuid(rng).replace("-", "")[:21]
        model = "claude-sonnet-4-20250514" if rng.random() < 0.8 else "claude-opus-4-1-20250805"
        blocks: list[dict[str, object]] = []
        if rng.random() < 0.15:
            blocks.append({"type": "thinking", "thinking": text.words(text.size(300, 0.8, 4000)),
                           "signature": "EqQB" + _uuid(rng).replace("-", "") * 3})
        if rng.random() < 0.45:
            blocks.append({"type": "text", "text": text.words(text.size(180, 0.9, 3000))})
        calls: list[tuple[str, str, dict[str, object]]] = []
        ending = messages + 1 >= target or rng.random() < 0.06
        if not ending:
            for _ in range(1 if rng.random() < 0.9 else rng.randrange(2, 5)):
                name = rng.choices(_TOOLS, _TOOL_WEIGHTS)[0]
                calls.append((name, "toolu_01" + _uuid(rng).replace("-", "")[:22],
                              _tool_input(rng, text, name, cwd)))
            for name, call_id, arguments in calls:
                blocks.append({"type": "tool_use", "id": call_id, "name": name,
                               "input": arguments})
        if not blocks:
            blocks.append({"type": "text", "text": text.words(text.size(180, 0.9, 3000))})
        for number, block in enumerate(blocks):
            last = number == len(blocks) - 1
            stop = ("tool_use" if calls else "end_turn") if last else None
            emit({"message": {"id": msg_id, "type": "message", "role": "assistant",
                              "model": model, "content": [block], "stop_reason": stop,
                              "stop_sequence": None, "usage": usage()},
                  "requestId": request, "type": "assistant"})
        messages += 1
        stats.calls += len(calls)
        for name, call_id, arguments in calls:
            content, tool_result = _tool_output(rng, text, name, arguments)
            emit({"type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": call_id, "type": "tool_result", "content": content,
                 **({"is_error": True} if rng.random() < 0.03 else {})}]},
                "toolUseResult": tool_result})
            messages += 1
        if ending and messages < target:
            emit({"type": "user", "message": {"role": "user", "content": text.words(
                text.size(120, 1.0, 3000))}})
            messages += 1
    if rng.random() < 0.5:
        out.append(orjson.dumps({"type": "summary", "summary": text.words(50).strip(),
                                 "leafUuid": parent}))
    stats.messages += messages
    return out, now


def _tool_input(rng: random.Random, text: _Text, name: str, cwd: str) -> dict[str, object]:
    path = f"{cwd}/src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{rng.randrange(300)}.py"
    if name == "Bash":
        command = COMMAND_TEXT + " origin main" if rng.random() < 0.005 else \
            rng.choice(_COMMANDS) + f" {rng.choice(_WORDS)}_{rng.randrange(100)}"
        return {"command": command, "description": text.words(40).strip()}
    if name == "Read":
        return {"file_path": path}
    if name == "Edit":
        return {"file_path": path, "old_string": text.file_body(text.size(120, 0.8, 2000)),
                "new_string": text.file_body(text.size(140, 0.8, 2000))}
    if name == "Write":
        return {"file_path": path, "content": text.file_body(text.size(900, 0.9, 12000))}
    if name == "Grep":
        return {"pattern": rng.choice(_WORDS) + "_" + rng.choice(_WORDS), "path": cwd,
                "output_mode": "content"}
    if name == "Glob":
        return {"pattern": f"**/*{rng.choice(_WORDS)}*.py"}
    if name == "TodoWrite":
        return {"todos": [{"content": text.words(50).strip(), "status": "pending",
                           "activeForm": text.words(50).strip()} for _ in range(3)]}
    if name == "Task":
        return {"description": text.words(30).strip(), "prompt": text.words(400),
                "subagent_type": "general-purpose"}
    return {"url": f"https://docs.example.org/{rng.choice(_WORDS)}", "prompt": text.words(60)}


def _tool_output(rng: random.Random, text: _Text, name: str,
                 arguments: dict[str, object]) -> tuple[str, object]:
    if name == "Read":
        body = text.file_body(text.size(300, 1.1, 40_000))
        return body, {"type": "text", "file": {"filePath": arguments["file_path"],
                                               "numLines": body.count("\n") + 1}}
    if name in ("Edit", "Write"):
        return (f"The file {arguments['file_path']} has been updated.",
                {"filePath": arguments["file_path"]})
    body = text.words(text.size(120, 1.2, 20_000))
    if rng.random() < 0.002:
        body += f"\nSegmentation fault: {RARE_TEXT} in worker\n"
    if name == "Bash":
        return body, {"stdout": body[:200], "stderr": "", "interrupted": False}
    return body, {"durationMs": rng.randrange(5, 900)}


def make_home(root: Path, messages: int, seed: int = 39) -> HomeStats:
    """Write the home under ``root`` (its ``.claude/projects``) holding ``messages`` messages."""
    rng = random.Random(seed)
    text = _Text(rng)
    stats = HomeStats()
    projects = root / ".claude" / "projects"
    names = [f"-home-dev-{rng.choice(_WORDS)}-{index}" for index in range(40)]
    start = datetime(2025, 1, 1, tzinfo=UTC)
    span = 330 * 86400
    while stats.messages < messages:
        want = max(4, min(4000, int(rng.lognormvariate(math.log(150), 0.9))))
        want = min(want, messages - stats.messages) if messages - stats.messages >= 4 else 4
        project = rng.choice(names)
        sid = _uuid(rng)
        began = start + timedelta(seconds=span * stats.messages / messages)
        lines, ended = _session_lines(rng, text, sid, project.strip("-"), began, want, stats)
        folder = projects / project
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{sid}.jsonl"
        body = b"\n".join(lines) + b"\n"
        target.write_bytes(body)
        stamp = ended.timestamp()
        os.utime(target, (stamp, stamp))
        stats.files += 1
        stats.sessions += 1
        stats.lines += len(lines)
        stats.bytes += len(body)
    return stats


def iter_lines(root: Path) -> list[Path]:
    """The home's files, in name order."""
    return sorted((root / ".claude" / "projects").rglob("*.jsonl"))


def read_commands(sid: str) -> list[tuple[str, list[str]]]:
    """The read commands ``bench/scale.py`` times (label, arguments), ``sid`` a session's id."""
    return [("calls search --text", ["calls", "search", "--text", RARE_TEXT]),
            ("calls search --command (all hits)",
             ["calls", "search", "--command", COMMAND_TEXT, "--limit", "0", "--json"]),
            ("calls search --command (all hits, table)",
             ["calls", "search", "--command", COMMAND_TEXT, "--limit", "0"]),
            ("tools usage", ["tools", "usage"]),
            # the home's last month (it spans 2025-01-01 and the 330 days after)
            ("tools usage --since (a month)", ["tools", "usage", "--since", "2025-11-01"]),
            ("sessions list", ["sessions", "list"]),
            ("sessions show ID", ["sessions", "show", sid]),
            ("sessions show ID --last-turns 3",
             ["sessions", "show", sid, "--last-turns", "3"]),
            ("usage daily", ["usage", "daily"]),
            ("usage session", ["usage", "session"]),
            ("usage project", ["usage", "project"]),
            ("search (a rare phrase)", ["search", RARE_TEXT]),
            ("search (a common word, best 20)", ["search", COMMON_WORD]),
            ("search (a common word, tool parts)", ["search", COMMON_WORD, "--role", "tool"]),
            ("tools usage --by day", ["tools", "usage", "--by", "day"]),
            ("tools usage --by model", ["tools", "usage", "--by", "model"]),
            ("sessions tree ID", ["sessions", "tree", sid]),
            ("aliases list", ["aliases", "list"])]
