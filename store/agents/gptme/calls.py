"""The calls gptme's replies write as text, and what its tools' outputs say (domain).

Learnt from ``gptme/gptme`` at d27f98d3 (August 2026): ``gptme/tools/base.py``
(``ToolUse.iter_from_content``: fenced blocks whose language's first word is a tool's block
type, ``_from_codeblock``: ``save``/``append``/``patch`` take the path after the word; the tool
format's ``toolcall_re`` ``^@name(call_id): {json}`` outside fenced blocks, its JSON ended by
counting braces, ``_to_params``), ``gptme/codeblock.py`` (fences of three or more backticks at
a line's start, nested blocks opened by a fence with a language and closed by a bare one), the
tools' ``block_types`` and parameters (``tools/shell.py``, ``python.py``, ``save.py``,
``patch.py``, ``read.py``, ``tmux.py`` ...), and their outputs (``shell.py``
``_format_shell_output``: ``Return code: N`` last when it is not 0, ``Command timed out``,
``Command interrupted``, ``Command denied``; ``util/ask_execute.py``: ``Operation aborted:
user chose not to run.``, ``Error during execution: ...``; ``base.py``: ``Error executing
tool '<name>': ...``; ``tools/__init__.py`` ``execute_msg``: ``Interrupted by user``, ``Tool
'<name>' was not executed (interrupted).``, ``... is not available for execution.``).

The XML tool format (``<tool-use>``) is not read: its calls stay in the reply's text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from store.core.arguments import loads_json

__all__ = ["BLOCK_TOOLS", "FoundCall", "calls_in", "is_error_output"]

#: Block types (a fenced block's first word) -> the tool that runs them (each tool's
#: ``block_types``; ``python`` is commented out of ipython's, ``py`` is in).
BLOCK_TOOLS: dict[str, str] = {
    "shell": "shell", "ipython": "ipython", "py": "ipython", "save": "save",
    "append": "append", "patch": "patch", "read": "read", "tmux": "tmux", "gh": "gh",
    "todo": "todo", "choice": "choice", "clarify": "clarify", "complete": "complete",
    "elicit": "elicit", "form": "form", "hashline_edit": "hashline_edit", "mcp": "mcp",
    "morph": "morph", "patch_anchored": "patch_anchored", "view_anchored": "view_anchored",
    "patch_many": "patch_many", "progress": "progress", "restart": "restart", "vent": "vent",
}
#: The parameter a block's content fills, by tool (its first required one after the args).
_CONTENT_PARAMETER = {"shell": "command", "ipython": "code", "save": "content",
                      "append": "content", "patch": "patch", "tmux": "command",
                      "morph": "edit", "hashline_edit": "edit", "patch_anchored": "ops"}
_FENCE = re.compile(r"^(`{3,})(.*)$")
_TOOLCALL = re.compile(r"^@([\w.]+)\(([\w\-:.]+)\):\s*(?=\{)", re.MULTILINE)
_THINKING = re.compile(r"<(think|thinking)>.*?</\1>", re.DOTALL)
_RETURN_CODE = re.compile(r"Return code: (-?\d+)")
_ERROR_STARTS = ("Error", "Command denied", "Command timed out", "Command interrupted",
                 "Interrupted by user", "Operation aborted", "Save aborted", "Append aborted",
                 "Patch failed", "File not found:", "Permission denied:", "Read denied:",
                 "Not a file:", "Cannot read binary file:")


@dataclass(frozen=True, slots=True)
class FoundCall:
    """A call written in a reply: its tool, arguments (a dict, or the JSON text as written
    when it is not an object), the recorded call id (tool format) and where it starts."""

    tool: str
    arguments: dict[str, Any] | str
    call_id: str | None
    start: int


def _blocks(text: str) -> list[tuple[int, int, str, str]]:
    """The fenced blocks of ``text``: ``(start, end, language, content)`` (offsets of the
    opening fence's line and past the closing one); a block never closed is not a block."""
    lines = text.split("\n")
    offsets = []
    at = 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    found = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        width, lang = len(opening.group(1)), opening.group(2).strip()
        depth, j = 1, i + 1
        while j < len(lines):
            inner = _FENCE.match(lines[j])
            if inner:
                bare = not inner.group(2).strip()
                if bare and (depth > 1 or len(inner.group(1)) == width):
                    depth -= 1
                    if depth == 0:
                        break
                elif not bare:
                    depth += 1
            j += 1
        if j >= len(lines):  # (never closed: gptme runs no such block)
            i += 1
            continue
        found.append((offsets[i], offsets[j] + len(lines[j]), lang,
                      "\n".join(lines[i + 1:j])))
        i = j + 1
    return found


def _block_arguments(tool: str, words: list[str], content: str) -> dict[str, Any]:
    """A block's arguments as gptme maps them (``ToolUse._to_params``)."""
    arguments: dict[str, Any] = {}
    if tool in ("save", "append", "patch", "read", "morph", "hashline_edit", "patch_anchored",
                "view_anchored") and words:
        arguments["path"] = " ".join(words) if tool != "read" else words[0]
        if tool == "read":
            for name, value in zip(("start_line", "end_line"), words[1:], strict=False):
                arguments[name] = value
    elif words:
        arguments["args"] = " ".join(words)
    parameter = _CONTENT_PARAMETER.get(tool)
    if parameter is not None:
        arguments[parameter] = content
    elif content.strip():
        arguments["content"] = content
    return arguments


def _json_end(text: str, start: int) -> int | None:
    """Where the JSON object starting at ``start`` ends (braces counted outside strings, as
    ``find_json_end`` does); ``None`` when it never closes."""
    depth = 0
    in_string = escape = False
    for index in range(start, len(text)):
        char = text[index]
        if escape:
            escape = False
        elif char == "\\":
            escape = True
        elif char == '"':
            in_string = not in_string
        elif not in_string:
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return index + 1
    return None


def _object(raw: str) -> Any:
    """A tool-format call's arguments: JSON, or the Python literal gptme's non-streaming
    Anthropic path writes (``f"{block.input}"``, a dict's ``repr``); ``None`` for neither."""
    try:
        return loads_json(raw)
    except ValueError:
        pass
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def calls_in(text: str) -> list[FoundCall]:
    """The calls a reply writes, in the order they appear (none inside its ``<think>``
    blocks, as gptme reads none there)."""
    text = _THINKING.sub(lambda m: " " * len(m.group(0)), text)
    blocks = _blocks(text)
    found: list[FoundCall] = []
    for start, _, lang, content in blocks:
        words = lang.split()
        tool = BLOCK_TOOLS.get(words[0]) if words else None
        if tool is not None:
            found.append(FoundCall(tool, _block_arguments(tool, words[1:], content), None,
                                   start))
    search = 0
    while match := _TOOLCALL.search(text, search):
        inside = next((end for start, end, _, _ in blocks if start <= match.start() < end), None)
        if inside is not None:
            search = inside
            continue
        end = _json_end(text, match.end())
        if end is None:
            break
        raw = text[match.end():end]
        search = end
        value = _object(raw)
        found.append(FoundCall(match.group(1), value if isinstance(value, dict) else raw,
                               match.group(2), match.start()))
    found.sort(key=lambda c: c.start)
    return found


def is_error_output(text: str) -> bool:
    """True when a tool's output says the call failed, was refused or was cut short."""
    body = text.strip()
    if body.startswith(_ERROR_STARTS):
        return True
    if body.endswith(("was not executed (interrupted).", "is not available for execution.")):
        return True
    last = body.rsplit("\n", 1)[-1].strip()
    if last.startswith("Process interrupted"):
        return True
    code = _RETURN_CODE.fullmatch(last)
    return code is not None and code.group(1) != "0"
