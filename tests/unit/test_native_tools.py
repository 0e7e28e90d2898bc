"""The calls of a session resumed into another agent, in that agent's own vocabulary
(store.replay.native.tools): names and argument shapes, and what is kept as recorded."""

from __future__ import annotations

from typing import Any

import pytest

from store.core.model import ToolCall
from store.replay.native.claude_code import project_folder
from store.replay.native.tools import translate_call


def call(raw: str, current: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall("c1", current, args, raw_name=raw)


@pytest.mark.parametrize(("raw", "current", "args", "target", "name", "expected", "dropped"), [
    # Codex argv -> Claude's string; another working folder becomes a cd
    ("shell", "bash", {"command": ["bash", "-lc", "make"], "workdir": "/w/sub",
                       "timeout_ms": 5000}, "claude-code", "Bash",
     {"command": "cd /w/sub && make", "timeout": 5000}, ()),
    ("exec_command", "bash", {"cmd": "ls -la", "yield_time_ms": 10}, "claude-code", "Bash",
     {"command": "ls -la"}, ("yield_time_ms",)),
    ("Bash", "bash", {"command": "rm -rf b", "description": "d", "run_in_background": True},
     "codex", "shell_command", {"command": "rm -rf b", "workdir": "/w"},
     ("description", "run_in_background")),
    ("update_plan", "todo", {"plan": [{"step": "a", "status": "completed"}]}, "claude-code",
     "TodoWrite", {"todos": [{"content": "a", "status": "completed", "activeForm": "a"}]}, ()),
    ("TodoWrite", "todo", {"todos": [{"content": "a", "status": "pending", "activeForm": "A"}]},
     "codex", "update_plan", {"plan": [{"step": "a", "status": "pending"}]}, ()),
    ("Grep", "grep", {"pattern": "x", "glob": "*.py", "output_mode": "content"}, "codex",
     "grep_files", {"pattern": "x", "include": "*.py"}, ("output_mode",)),
    ("read_file", "read", {"absolute_path": "/w/a.py"}, "claude-code", "Read",
     {"file_path": "/w/a.py"}, ()),
    ("replace", "edit", {"file_path": "/w/a", "old_string": "a", "new_string": "b"},
     "claude-code", "Edit", {"file_path": "/w/a", "old_string": "a", "new_string": "b"}, ()),
])
def test_a_call_takes_the_agents_name_and_argument_shape(
        raw: str, current: str, args: dict[str, Any], target: Any, name: str,
        expected: dict[str, Any], dropped: tuple[str, ...]) -> None:
    done = translate_call(call(raw, current, args), target, same_agent=False, cwd="/w")
    assert (done.name, done.input, done.dropped, done.exact) == (name, expected, dropped, False)


def test_a_tool_without_counterpart_or_unreadable_arguments_keeps_its_recorded_form() -> None:
    edit = call("Edit", "edit", {"file_path": "/w/a", "old_string": "a", "new_string": "b"})
    done = translate_call(edit, "codex", same_agent=False, cwd="/w")
    assert (done.name, done.input, done.exact) == ("Edit", dict(edit.input), True)
    odd = call("run_shell_command", "bash", {"script": "ls"})  # no command to read
    done = translate_call(odd, "codex", same_agent=False, cwd="/w")
    assert (done.name, done.input) == ("run_shell_command", {"script": "ls"})


def test_the_recording_agent_keeps_every_call_exactly() -> None:
    bash = call("Bash", "bash", {"command": "ls", "description": "list"})
    done = translate_call(bash, "claude-code", same_agent=True, cwd="/w")
    assert (done.name, done.input, done.exact) == ("Bash", {"command": "ls", "description":
                                                            "list"}, True)


def test_claude_codes_project_folder_replaces_every_non_alphanumeric() -> None:
    assert project_folder("/home/u/proj") == "-home-u-proj"
    assert project_folder("/home/u/my.app_2") == "-home-u-my-app-2"
