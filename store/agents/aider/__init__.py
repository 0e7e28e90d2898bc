"""Aider: ``.aider.chat.history.md``, a Markdown log in each repository (the definition).

Aider appends every run to the history file at the root of the git repository it works in
(``--chat-history-file``; without git, the folder it was started in): a ``# aider chat
started at <local time>`` header, the user's input as ``#### `` lines, the model's replies as
they are, and aider's own output (its notices, confirmations, results of edits and shell
commands, token and cost reports) as ``> `` lines. The files are Markdown, not JSON: they are
told by their name and read whole as text (``text=True``).

Aider keeps no home of its own: ``import DIR`` finds a history in any folder below ``DIR``;
``import`` without paths looks only in the user's home's projects, one and two folders down
(``~/<project>/``, ``~/<folder>/<project>/``: a glob of two folder listings, no deeper walk).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, AgentDefinition, Sample

__all__ = ["AGENT", "HISTORY_FILE"]

#: The history file's default name (aider/args.py ``default_chat_history_file``).
HISTORY_FILE = ".aider.chat.history.md"


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """Only Aider writes a file by this name (read as text: records play no part)."""
    return PROVEN if path is not None and fnmatch.fnmatchcase(path.name, HISTORY_FILE) else 0.0


AGENT = AgentDefinition(
    name="aider",
    display_name="Aider",
    package=__name__,
    order=263,
    detect=detect,
    # No home: a history per repository. Without paths, the home's projects one and two
    # folders down (a glob, no recursive walk); `import ~/code` finds any below it.
    homes=(AgentFolders("aider", None, "", (f"*/{HISTORY_FILE}", f"*/*/{HISTORY_FILE}")),),
    file_names=(HISTORY_FILE,),
    text=True,
    kinds={
        "header": "a session: `# aider chat started at <time>` (its start, local time)",
        "prompt": "message: `#### ` lines, what the user typed (one message per input)",
        "reply": "message: the model's reply as written (edit blocks and code kept as text)",
        "output": ("message (system): aider's own `> ` lines, kept verbatim; edits applied "
                   "or failed and shell commands run become calls and results, token and "
                   "cost reports usage"),
    },
    records={
        "calls": ("none as such → `Applied edit to <path>` (and failed or skipped edits) "
                  "→ `edit` calls, `Running <command>` → `bash` calls, numbered by the store"),
        "results": ("the same output lines → results (an edit's outcome; a command's only "
                    "when aider added its output to the chat, the output itself not written)"),
        "errors": ("`SearchReplaceNoExactMatch ... in <path>`, `Unable to create`, "
                   "`Skipping edits to`, `Error occurred while running command` → error "
                   "results; a command whose output was not added → no result"),
        "times": ("the header's start only (local time, no zone: read as UTC) → session "
                  "start and end; no per-message times"),
        "cwd": "— (the history sits at the repository's root) → the file's folder",
        "model": "`Model:` / `Main model:` announcement → session and per-reply model",
        "title": "— → the first real prompt (`/add` and other commands left out)",
        "usage": ("`Tokens: N sent, N cache write, N cache hit, N received.` (rounded: "
                  "`2.3k`) → one usage row per reply, as printed; `Cost:` in metadata"),
        "lineage": "— (architect and editor replies follow each other in one session)",
        "not recorded": ("call ids, exact token counts, commands' output and exit codes, "
                         "message times, the time zone, declined commands' text as calls"),
    },
    tools={"edit": "edit", "run": "bash"},
)
