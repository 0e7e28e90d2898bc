"""Reader of Aider's chat history (``.aider.chat.history.md`` in a repository; domain).

Learnt from Aider's own writer, ``aider/io.py`` of ``Aider-AI/aider`` (read at 5dc9490b,
May 2026; the format dates from 6ea9085e, May 2023): ``InputOutput.__init__`` appends
``\\n# aider chat started at %Y-%m-%d %H:%M:%S\\n\\n`` (local time, no zone) when aider
starts; ``user_input`` writes what the user typed as ``#### `` lines (each line of a
multi-line input prefixed, every line ending in two spaces, a Markdown line break);
``ai_output`` writes the model's reply as it is, after a blank line; ``tool_output``,
``tool_warning``, ``tool_error`` and the confirmations (``confirm_ask``, ``prompt_ask``:
the question and the answer) write aider's own lines as ``> <text>  `` (a message with line
breaks: its first line quoted, the rest as they are). What aider writes there comes from
``aider/coders/base_coder.py`` (same commit): the announcements (``Aider v<version>``,
``Main model: <name> with <format> edit format``, ``Model: ... using ...`` before April
2024), ``Applied edit to <path>``, ``Did not apply edit to <path> (--dry-run)``, ``Unable to
create <path>, skipping edits.``, ``Skipping edits to <path>``, the failed edit blocks
(``aider/coders/editblock_coder.py``: ``SearchReplaceNoExactMatch: This SEARCH block failed
to exactly match lines in <path>``), ``Running <command>`` for a shell command the model
suggested and the user allowed, ``Added N lines of output to the chat.``, ``Error occurred
while running command ...`` (``aider/run_cmd.py``), and the usage report ``Tokens: <sent>
sent, <write> cache write, <hit> cache hit, <received> received. Cost: $<x> message, $<y>
session.`` (counts rounded by ``format_tokens``: ``2.3k``, ``12k``; the cost on a line of its
own when both cache counts are shown).

* Each header starts a session ``aider:<the repository folder's name>:<start>`` (``#2`` ...
  for a second run started in the same second), started at the header's time, read as UTC
  (the file records no zone); its cwd is the folder holding the file (aider writes it at the
  repository's root). A run with no input and no reply (aider started and left: only its
  startup lines) is skipped, with that reason.
* ``#### `` lines are one user message per input; the reply after them an assistant message
  (edit blocks, code and shell blocks kept as the text they are); each run of ``> `` lines a
  ``system`` message with aider's output verbatim (the metadata says ``aider_output``).
* Calls are what aider's output says it did: an edit applied, refused or failed to match
  becomes an ``edit`` call with its ``path``; ``Running <command>`` a ``run`` call (``bash``)
  with its ``command``. They go on the reply before the output (an assistant message of their
  own when there is none) with ids ``<session>:call-<n>``; their results, in a ``tool``
  message after it: an edit's outcome (errors marked), a command's result only when aider
  added its output to the chat (the output itself is not in the file) or failed to run it,
  else none.
* ``Tokens:`` lines are the preceding reply's usage, the counts as printed (``sent`` as
  input, ``received`` as output, cache write and hit as cache creation and read; rounded
  counts as ``k`` says); ``Cost:`` is kept in the reply's metadata as written. The model is the
  last ``Model:`` announcement (``/model`` announces the new one).
* Keys are ``<session>:<n>``, the message's place in its run: the file is only appended to.
  A file still being written (not settled) has its last exchange, from the last ``#### ``
  input on, held back until it settles or the next input is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from store.agents.registry import FileInput
from store.core.model import Message, Part, Role, TextPart, ToolResult, make_tool_call
from store.importers.base import Collector
from store.usage.tokens import TokenUsage

__all__ = ["read_file"]

_HEADER = re.compile(r"# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*")
_MODEL = re.compile(r"(?:Main model|Model): (\S+) (?:with|using) ")
_VERSION = re.compile(r"Aider v(\S+)")
_COUNT = r"([\d.]+[kM]?)"
_TOKENS = re.compile(rf"Tokens: {_COUNT} sent(?:, {_COUNT} cache write)?(?:, {_COUNT} cache "
                     rf"hit)?, {_COUNT} received\.")
_COST = re.compile(r"Cost: \$([\d.]+) message, \$([\d.]+) session\.")
#: Aider's edit reports: (pattern with the path, is the edit an error).
_EDITS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (re.compile(r"Applied edit to (.+)"), False),
    (re.compile(r"Did not apply edit to (.+) \(--dry-run\)"), False),
    (re.compile(r"Unable to create (.+), skipping edits\."), True),
    (re.compile(r"Skipping edits to (.+?)(?: that matches gitignore spec\.)?"), True),
    (re.compile(r"(?:## )?SearchReplaceNoExactMatch: This SEARCH block failed to exactly "
                r"match lines in (.+)"), True),
)
_RUNNING = re.compile(r"Running (.+)")
_ADDED = re.compile(r"Added \d+ lines? of output to the chat\.")
_RUN_ERROR = re.compile(r"Error occurred while running command '(.*)': .*")

Block = Literal["prompt", "reply", "output"]


@dataclass(slots=True)
class _Entry:
    """A message being built: its role, parts, first line and metadata."""

    role: Role
    parts: list[Part]
    line: int
    metadata: dict[str, Any] = field(default_factory=dict)
    usage: TokenUsage | None = None


@dataclass(slots=True)
class _Run:
    """One run of aider: its header's line and time, and its blocks ``(kind, first line,
    lines)``."""

    line: int
    started: str
    blocks: list[tuple[Block, int, list[str]]] = field(default_factory=list)


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: an Aider chat history (see the module docstring)."""
    runs = _runs(file.text, collector)
    held = _held_from(runs) if not collector.source.settled else None
    folder = file.path.resolve().parent
    seen: dict[str, int] = {}
    for run in runs:
        sid = f"aider:{folder.name}:{run.started.replace(' ', 'T')}"
        seen[sid] = seen.get(sid, 0) + 1
        if seen[sid] > 1:
            sid = f"{sid}#{seen[sid]}"
        blocks = [b for b in run.blocks if held is None or b[1] < held]
        if not any(kind != "output" for kind, _, _ in blocks):
            if blocks or not run.blocks:
                collector.skip("aider: a run with no input (at most its startup lines)")
            continue
        _read_run(run, blocks, sid, str(folder), collector)
    if held is not None:
        collector.defer(held)


def _runs(text: str, collector: Collector) -> list[_Run]:
    """The file's runs, each split into prompt, reply and output blocks."""
    runs: list[_Run] = []
    current: list[str] | None = None
    kind: Block | None = None
    lines = [raw.removesuffix("\r") for raw in text.split("\n")]
    until = -1  # (the last line of a message of aider's that spans lines)
    for index, line in enumerate(lines):
        number = index + 1
        header = _HEADER.fullmatch(line)
        if header and index > until:
            runs.append(_Run(number, header.group(1)))
            kind = None
            continue
        if not runs:
            if line.strip():
                collector.problem(number, "text before the first `# aider chat started at` "
                                          "header: not read")
            continue
        if index <= until:  # inside a message of aider's: its lines as they are
            assert current is not None
            current.append(line[:-2] if index == until else line.rstrip())
            continue
        if not line.strip():
            if kind == "reply" and current is not None:
                current.append("")
            else:
                kind = None
            continue
        is_prompt = line.startswith("#### ") and line.endswith("  ")
        is_output = line.startswith(">") and line.endswith("  ")
        if (line.startswith(">") and not is_output
                and (kind != "reply" or not lines[index - 1].strip())):
            until = _spans_to(lines, index)
            is_output = until > index
        wanted: Block = ("prompt" if is_prompt else "output" if is_output
                         or kind == "output" else "reply")
        if wanted != kind or current is None:
            current = []
            runs[-1].blocks.append((wanted, number, current))
            kind = wanted
        if is_prompt:
            current.append(line[5:-2])
        elif line.startswith(">") and wanted == "output":
            text_ = line[2:] if line.startswith("> ") else line[1:]
            current.append(text_[:-2] if line.endswith("  ") else text_)
        else:
            current.append(line.rstrip() if wanted == "output" else line)
    return runs


def _spans_to(lines: list[str], index: int) -> int:
    """Where a ``>`` line without its line break ends when it starts a message of aider's that
    spans lines (only its first line is quoted; its last ends in the two spaces): the index of
    that last line, else ``index`` (a quote in a reply)."""
    for ahead in range(index + 1, len(lines)):
        line = lines[ahead]
        if _HEADER.fullmatch(line):
            return index
        if line.endswith("  "):
            return index if line.startswith((">", "#### ")) else ahead
    return index


def _held_from(runs: list[_Run]) -> int | None:
    """The first line held back in a file still being written: its last input's, else its
    last block's (``None``: nothing to hold)."""
    blocks = [b for run in runs for b in run.blocks]
    prompts = [line for kind, line, _ in blocks if kind == "prompt"]
    if prompts:
        return prompts[-1]
    return blocks[-1][1] if blocks else None


def _read_run(run: _Run, blocks: list[tuple[Block, int, list[str]]], sid: str, cwd: str,
              collector: Collector) -> None:
    state = _State(sid)
    for kind, line, lines in blocks:
        if kind == "prompt":
            state.entries.append(_Entry("user", [TextPart("\n".join(lines))], line))
        elif kind == "reply":
            text = "\n".join(lines).strip()
            if text:
                state.entries.append(_Entry("assistant", [TextPart(text)], line,
                                            _model(state.model)))
        else:
            state.output(lines, line)
    started = datetime.strptime(run.started, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    metadata: dict[str, Any] = {"history_line": run.line, "started_local": run.started}
    if state.version:
        metadata["aider_version"] = state.version
    session = collector.session(sid, provider=None, model=state.first_model, cwd=cwd,
                                metadata=metadata)
    session.started_at = started
    for index, entry in enumerate(state.entries):
        message = Message(entry.role, tuple(entry.parts), "aider", None,
                          metadata=entry.metadata)
        collector.add(session, message, f"{sid}:{index}", entry.line, usage=entry.usage)


def _model(model: str | None) -> dict[str, Any]:
    return {"model": model} if model else {}


class _State:
    """What a run's output blocks have said so far: the model, the calls waiting."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.entries: list[_Entry] = []
        self.model: str | None = None
        self.first_model: str | None = None
        self.version: str | None = None
        self.calls = 0

    def output(self, lines: list[str], line: int) -> None:
        """One block of aider's own lines: calls, results, usage; kept verbatim."""
        reply = self.entries[-1] if self.entries and self.entries[-1].role == "assistant" \
            else None
        results: list[ToolResult] = []
        running: list[tuple[str, str]] = []  # (call id, command) waiting for a result
        calls: list[Part] = []
        for text in lines:
            text = text.strip()
            if (found := _VERSION.fullmatch(text)) and self.version is None:
                self.version = found.group(1)
            if found := _MODEL.match(text):
                self.model = found.group(1)
                self.first_model = self.first_model or self.model
            elif (found := _TOKENS.match(text)) and reply is not None:
                reply.usage = _usage(found, self.model, reply.usage)
                cost = _COST.search(text)
                if cost:
                    reply.metadata["aider_cost"] = {"message": cost[1], "session": cost[2]}
            elif (found := _COST.fullmatch(text)) and reply is not None:
                reply.metadata["aider_cost"] = {"message": found[1], "session": found[2]}
            elif found := _RUNNING.fullmatch(text):
                call_id = self._call_id()
                calls.append(make_tool_call(call_id, "run", {"command": found.group(1)},
                                            source="aider"))
                running.append((call_id, found.group(1)))
            elif _ADDED.fullmatch(text) and running:
                call_id, _ = running.pop(0)
                results.append(ToolResult(call_id, text, False, None, {}, "aider"))
            elif (found := _RUN_ERROR.fullmatch(text)) and running:
                call_id, _ = running.pop(0)
                results.append(ToolResult(call_id, text, True, None, {}, "aider"))
            else:
                for pattern, failed in _EDITS:
                    if edit := pattern.fullmatch(text):
                        call_id = self._call_id()
                        calls.append(make_tool_call(call_id, "edit", {"path": edit.group(1)},
                                                    source="aider"))
                        results.append(ToolResult(call_id, text, failed, None, {}, "aider"))
                        break
        if calls:
            if reply is None:
                reply = _Entry("assistant", [], line,
                               {**_model(self.model), "aider_calls_only": True})
                self.entries.append(reply)
            reply.parts.extend(calls)
        if results:
            self.entries.append(_Entry("tool", list(results), line))
        self.entries.append(_Entry("system", [TextPart("\n".join(lines))], line,
                                   {"aider_output": True}))

    def _call_id(self) -> str:
        self.calls += 1
        return f"{self.sid}:call-{self.calls}"


def _tokens(text: str | None) -> int:
    """A count as aider prints it: ``950``, ``2.3k``, ``12k``, ``1.2M``."""
    if not text:
        return 0
    scale = {"k": 1000, "M": 1_000_000}.get(text[-1], 1)
    number = text[:-1] if scale > 1 else text
    try:
        return round(float(number) * scale)
    except ValueError:
        return 0


def _usage(found: re.Match[str], model: str | None, earlier: TokenUsage | None) -> TokenUsage:
    usage = TokenUsage(input_tokens=_tokens(found[1]), output_tokens=_tokens(found[4]),
                       cache_creation_tokens=_tokens(found[2]),
                       cache_read_tokens=_tokens(found[3]), model=model)
    return usage if earlier is None else earlier + usage
