"""One tool vocabulary across agents: the seeded alias rows and the canonical argument views.

**Canonical names** (what ``tools usage`` groups by and ``--tool`` takes): ``bash`` (run a
shell command), ``bash_io`` (background shell output / input / kill), ``read``, ``write``,
``edit``, ``patch`` (V4A / unified patches), ``glob``, ``grep``, ``list``, ``web_fetch``,
``web_search``, ``todo`` (todo lists and plans), ``task`` (spawn a subagent), ``notebook``,
``python``, ``browser``, ``plan_mode``, ``ask_user``, ``finish``, ``think``, ``memory``.
Kward's map (``run_shell_command`` -> ``bash``, ``read_file`` -> ``read``, ``edit_file`` ->
``edit``, ``write_file`` -> ``write``) is the origin of the shell name ``bash``.

**Rows** (:data:`VOCABULARY`): ``(agent, raw name, canonical name)``; ``agent`` ``None`` is a
global alias (the raw name means the same for every agent that uses it), an agent name
(``claude-code``, ``codex``, ``gemini-cli``, ``openhands``, ``cline``, ``roo-code``,
``agents-sdk``, ``kward``, ``qwen-code``, ``crush`` ...: the session's ``agent``) scopes it,
because two agents use one raw name for different things or because the name is too generic
to claim for everyone (``replace``, ``fetch``, ``search_files``). A scoped alias wins over a
global one. The rows are seeded into ``tool_aliases`` by migration 0006 (a frozen copy; rows
added later by later revisions: 0012 for Qwen Code, Kimi CLI and Copilot CLI, 0013 for
Crush, OpenCode and Goose, 0014 for Cline's newer names, Roo Code and OpenHands V1) and are
user-editable from then on
(``transcript-store aliases add|remove``).

Sources (read 2026-12-01; see ``docs/architecture.md``):

* Claude Code: ``@anthropic-ai/claude-agent-sdk@0.3.332`` ``sdk-tools.d.ts``
  (``ToolInputSchemas``: Bash, Read, Write, Edit, Glob, Grep, WebFetch, WebSearch, TodoWrite,
  Agent, NotebookEdit, ExitPlanMode, TaskCreate/Get/Update/List, TaskStop, AskUserQuestion);
  the ``Task`` -> ``Agent`` rename in v2.1.63 (https://code.claude.com/docs/en/sub-agents.md);
  legacy MultiEdit, LS, NotebookRead, BashOutput, KillShell from older SDK copies.
* Codex: ``openai/codex`` ``codex-rs/tools/src/local_tool.rs`` (``shell`` argv,
  ``shell_command``, ``exec_command`` ``cmd``, ``write_stdin``), ``apply_patch_tool.rs``,
  ``plan_tool.rs`` (``update_plan``), ``view_image.rs``; experimental ``read_file``,
  ``list_dir``, ``grep_files`` from the ``codex-rs/tools`` spec tests;
  ``codex-rs/protocol/src/models.rs`` (``local_shell_call``, ``web_search_call``).
* Gemini CLI: ``google-gemini/gemini-cli``
  ``packages/core/src/tools/definitions/base-declarations.ts`` @5411f113 (run_shell_command,
  read_file, read_many_files, write_file, replace, glob, grep_search (was
  search_file_content until v0.28.0), list_directory, web_fetch, google_web_search,
  write_todos, save_memory, enter/exit_plan_mode, ask_user, complete_task) and
  ``packages/core/src/agents/agent-tool.ts`` (invoke_agent).
* OpenHands: ``All-Hands-AI/OpenHands`` ``openhands/llm/tool_names.py`` and
  ``openhands/agenthub/codeact_agent/tools/`` (execute_bash, execute_powershell,
  str_replace_editor, execute_ipython_cell, browser, think, finish, task_tracker; ``fetch`` is
  its default MCP fetch server); V1: ``OpenHands/software-agent-sdk`` @611629e6
  ``openhands-tools/openhands/tools/`` (a tool's name is its class name in snake case:
  terminal, file_editor, planning_file_editor, glob, grep, apply_patch, task_tracker,
  browser_navigate ... browser_close_tab, delegate, task, gemini-style read_file, write_file,
  edit, list_directory) and ``openhands-sdk/openhands/sdk/tool/builtins`` (finish, think);
  the V1 rows since revision 0014.
* Cline: ``cline/cline`` ``src/core/assistant-message/index.ts`` ``toolUseNames`` and
  ``src/shared/tools.ts`` (execute_command, read_file, write_to_file, replace_in_file,
  search_files, list_files, list_code_definition_names, browser_action,
  ask_followup_question, attempt_completion, plan_mode_respond, new_task, web_fetch,
  focus_chain, new_rule, use_subagents) @21cb8d25, and the Cline SDK's
  ``sdk/packages/core/src/extensions/tools/definitions.ts`` (run_commands, read_files,
  search_codebase, fetch_web_content, editor, ask_question, submit_and_exit, spawn_agent).
  Cline's seeded rows since revision 0006; the newer ones and Roo Code's since 0014.
* Roo Code: ``RooCodeInc/Roo-Code`` ``packages/types/src/tool.ts`` ``toolNames`` @cb836567
  (Cline's names, plus apply_diff, edit, search_and_replace, search_replace, edit_file,
  insert_content (older), codebase_search, update_todo_list, switch_mode,
  read_command_output; MCP, skill and slash-command tools have no canonical name).
* Qwen Code: ``QwenLM/qwen-code`` ``packages/core/src/tools/tool-names.ts`` @1af67c6e
  (``ToolNames``: edit, write_file, read_file, grep_search, glob, run_shell_command,
  todo_write, save_memory, task, skill, exit_plan_mode, web_fetch, web_search,
  list_directory, lsp; ``ToolNamesMigration``: search_file_content, replace). ``skill`` and
  ``lsp`` have no canonical name and stay as they are.
* Kimi CLI: ``MoonshotAI/kimi-cli`` ``src/kimi_cli/tools/`` @4a550eff (each tool's ``name``:
  Shell, ReadFile, ReadMediaFile, WriteFile, StrReplaceFile, Glob, Grep, FetchURL,
  SearchWeb, SetTodoList, Agent, Think, AskUserQuestion, TaskList, TaskOutput, TaskStop,
  EnterPlanMode, ExitPlanMode, SendDMail; the PascalCase names Claude Code shares are global
  above, SendDMail has no canonical name).
* GitHub Copilot CLI (closed source): the names its own public materials show: the ``/tools``
  listing in github/copilot-cli#407 (bash, view, create, edit, write_bash, read_bash,
  stop_bash) and ``microsoft/vscode-copilot-chat``
  ``src/extension/agents/copilotcli/common/copilotCLITools.ts`` @09030ce5 (``ToolInfo``:
  str_replace_editor, str_replace, insert, undo_edit, powershell and its io tools, grep,
  glob, report_intent, think, ...; PR #4134: show_file, task, task_complete, ask_user,
  exit_plan_mode, web_fetch). Names already canonical (bash, edit, grep, glob, task, think,
  ask_user) need no row; report_intent has no canonical name.
* Crush: ``charmbracelet/crush`` ``internal/agent/tools/*.go`` (``*ToolName`` constants:
  bash, job_output, job_kill, view, write, edit, multiedit, glob, grep, ls, fetch,
  agentic_fetch, web_fetch, web_search, download, todos, question, sourcegraph, lsp_*) and
  ``internal/agent/agent_tool.go`` (agent).
* OpenCode: ``sst/opencode`` ``packages/opencode/src/tool/*.ts`` (tool ids: bash, read,
  write, edit, multiedit, patch, apply_patch, glob, grep, list, webfetch, websearch,
  codesearch, todowrite, todoread, task, question, skill, lsp, batch, plan_enter, plan_exit).
* Goose: ``block/goose`` ``crates/goose-mcp`` (extension tools named
  ``<extension>__<tool>``: developer__shell, developer__text_editor (``command`` view, write,
  str_replace ...: a sub-command), computercontroller__web_scrape / web_search,
  todo__todo_write / todo_read) and ``crates/goose/src/agents`` (dynamic_task__create_task,
  subagent__execute_task).
* OpenAI Agents SDK / Responses hosted tools: https://openai.github.io/openai-agents-python/tools
  (local_shell, shell, apply_patch, web_search / web_search_preview, code_interpreter,
  computer_use_preview).
* Aider has no tool calls (edit formats in text, https://aider.chat/docs/more/edit-formats.html):
  nothing to map.

**Argument views** (:func:`argument_views`): whatever the agent's argument shape, a call's
shell command as one string, its file path, its search pattern and its URL, computed once when
the call is stored (``tool_calls.command_text`` ...) so that conditions on them are indexed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

__all__ = ["CANONICAL_NAMES", "VIEW_NAMES", "VOCABULARY", "argument_views", "command_line"]

CANONICAL_NAMES: tuple[str, ...] = (
    "bash", "bash_io", "read", "write", "edit", "patch", "glob", "grep", "list", "web_fetch",
    "web_search", "todo", "task", "notebook", "python", "browser", "plan_mode", "ask_user",
    "finish", "think", "memory",
)


def _rows(agent: str | None, mapping: Mapping[str, str]) -> list[tuple[str | None, str, str]]:
    return [(agent, raw, canonical) for raw, canonical in mapping.items()]


_GLOBAL = {
    # Claude Code (PascalCase names are unambiguous)
    "Bash": "bash", "BashOutput": "bash_io", "TaskOutput": "bash_io", "KillShell": "bash_io",
    "KillBash": "bash_io", "TaskStop": "bash_io", "Read": "read", "NotebookRead": "read",
    "Write": "write", "Edit": "edit", "MultiEdit": "edit", "Glob": "glob", "Grep": "grep",
    "LS": "list", "WebFetch": "web_fetch", "WebSearch": "web_search", "TodoWrite": "todo",
    "TaskCreate": "todo", "TaskGet": "todo", "TaskUpdate": "todo", "TaskList": "todo",
    "Agent": "task", "Task": "task", "NotebookEdit": "notebook", "ExitPlanMode": "plan_mode",
    "EnterPlanMode": "plan_mode", "AskUserQuestion": "ask_user",
    # Kward's map (seeded since revision 0001; also Gemini CLI's and Cline's names)
    "run_shell_command": "bash", "read_file": "read", "edit_file": "edit",
    "write_file": "write",
    # Codex
    "shell": "bash", "shell_command": "bash", "exec_command": "bash", "local_shell": "bash",
    "container.exec": "bash", "write_stdin": "bash_io", "apply_patch": "patch",
    "update_plan": "todo", "grep_files": "grep", "list_dir": "list", "spawn_agent": "task",
    # Gemini CLI
    "read_many_files": "read", "grep_search": "grep", "search_file_content": "grep",
    "google_web_search": "web_search", "write_todos": "todo", "save_memory": "memory",
    "invoke_agent": "task", "enter_plan_mode": "plan_mode", "exit_plan_mode": "plan_mode",
    "web_fetch": "web_fetch",
    # OpenHands
    "execute_bash": "bash", "execute_powershell": "bash", "str_replace_editor": "edit",
    "execute_ipython_cell": "python", "task_tracker": "todo",
    # Cline
    "execute_command": "bash", "write_to_file": "write", "replace_in_file": "edit",
    "browser_action": "browser", "ask_followup_question": "ask_user",
    "attempt_completion": "finish", "plan_mode_respond": "plan_mode",
    "act_mode_respond": "plan_mode",
    # Agents SDK / Responses hosted tools
    "web_search_preview": "web_search", "code_interpreter": "python",
    "computer_use_preview": "browser",
}

#: Kward's names that map to themselves (declared known; revision 0001 seeded them).
_KWARD_IDENTITY = (
    "list_directory", "code_search", "web_search", "read_skill", "ask_user_question",
    "summarize_file_structure", "retrieve_tool_output", "fetch_content", "fetch_raw",
    "context_for_task", "context_budget_stats", "git_commit", "open_editor",
    "typesafe_evaluate", "web_research",
)

_SCOPED: dict[str, dict[str, str]] = {
    # Kward keeps list_directory as its own tool name; Gemini CLI's is the canonical ``list``.
    "gemini-cli": {"list_directory": "list", "glob": "glob", "replace": "edit",
                   "ask_user": "ask_user", "complete_task": "finish"},
    "codex": {"read_file": "read", "view_image": "read", "web_search": "web_search"},
    "openhands": {"fetch": "web_fetch", "web_read": "web_fetch", "browser": "browser",
                  "think": "think", "finish": "finish", "edit_file": "edit",
                  # V1 (the OpenHands SDK): tool names from their class names
                  "terminal": "bash", "file_editor": "edit", "planning_file_editor": "edit",
                  "list_directory": "list", "delegate": "task",
                  **{f"browser_{action}": "browser" for action in (
                      "navigate", "click", "type", "get_state", "get_content", "scroll",
                      "go_back", "list_tabs", "switch_tab", "close_tab")}},
    "cline": {"search_files": "grep", "list_files": "list",
              "list_code_definition_names": "list", "new_task": "task",
              "web_search": "web_search", "focus_chain": "todo", "new_rule": "write",
              "use_subagents": "task",
              # the Cline SDK's tools (the CLI and newer extensions)
              "run_commands": "bash", "read_files": "read", "search_codebase": "grep",
              "fetch_web_content": "web_fetch", "editor": "edit", "ask_question": "ask_user",
              "submit_and_exit": "finish", "team_spawn_teammate": "task"},
    # (Cline's names it shares with the global rows: execute_command, read_file ...)
    "roo-code": {"read_command_output": "bash_io", "apply_diff": "edit", "edit": "edit",
                 "search_and_replace": "edit", "search_replace": "edit",
                 "insert_content": "edit", "search_files": "grep", "list_files": "list",
                 "list_code_definition_names": "list", "codebase_search": "grep",
                 "new_task": "task", "update_todo_list": "todo", "switch_mode": "plan_mode"},
    "agents-sdk": {"computer": "browser", "shell": "bash", "apply_patch": "patch"},
    # Qwen Code's own names (the Gemini CLI ones it kept are global above).
    "qwen-code": {"edit": "edit", "replace": "edit", "glob": "glob", "list_directory": "list",
                  "todo_write": "todo", "task": "task"},
    # Kimi CLI (its TaskList lists background tasks, unlike Claude Code's todo list).
    "kimi-cli": {"Shell": "bash", "ReadFile": "read", "ReadMediaFile": "read",
                 "WriteFile": "write", "StrReplaceFile": "edit", "FetchURL": "web_fetch",
                 "SearchWeb": "web_search", "SetTodoList": "todo", "Think": "think",
                 "TaskList": "bash_io"},
    # GitHub Copilot CLI (its names that are not already canonical).
    "copilot-cli": {"powershell": "bash", "view": "read", "show_file": "read",
                    "create": "write", "str_replace": "edit", "insert": "edit",
                    "undo_edit": "edit", "read_bash": "bash_io", "write_bash": "bash_io",
                    "stop_bash": "bash_io", "list_bash": "bash_io",
                    "read_powershell": "bash_io", "write_powershell": "bash_io",
                    "stop_powershell": "bash_io", "task_complete": "finish"},
    "crush": {"bash": "bash", "job_output": "bash_io", "job_kill": "bash_io", "view": "read",
              "write": "write", "edit": "edit", "multiedit": "edit", "glob": "glob",
              "grep": "grep", "ls": "list", "fetch": "web_fetch", "agentic_fetch": "web_fetch",
              "download": "web_fetch", "web_search": "web_search", "todos": "todo",
              "agent": "task", "question": "ask_user"},
    "opencode": {"bash": "bash", "read": "read", "write": "write", "edit": "edit",
                 "multiedit": "edit", "patch": "patch", "glob": "glob", "grep": "grep",
                 "list": "list", "webfetch": "web_fetch", "websearch": "web_search",
                 "todowrite": "todo", "todoread": "todo", "task": "task",
                 "question": "ask_user", "plan_enter": "plan_mode", "plan_exit": "plan_mode"},
    "goose": {"developer__shell": "bash", "developer__text_editor": "edit",
              "computercontroller__web_scrape": "web_fetch",
              "computercontroller__web_search": "web_search",
              "dynamic_task__create_task": "task", "subagent__execute_task": "task",
              "todo__todo_write": "todo", "todo__todo_read": "todo"},
}

#: Every seeded row: ``(agent or None, raw name, canonical name)``.
VOCABULARY: tuple[tuple[str | None, str, str], ...] = (
    *_rows(None, _GLOBAL),
    *((None, name, name) for name in _KWARD_IDENTITY),
    *(row for agent, table in _SCOPED.items() for row in _rows(agent, table)),
)


# -- argument views ---------------------------------------------------------------------------

#: The views, in the order of the ``tool_calls`` columns ``<view>_text``.
VIEW_NAMES: tuple[str, ...] = ("command", "path", "pattern", "url")

# Tools whose ``command`` argument is a sub-command, not a shell command.
_NOT_SHELL = frozenset({"str_replace_editor", "task_tracker", "file_editor",
                        "planning_file_editor", "developer__text_editor",
                        "str-replace-editor",
                        # Amazon Q / Kiro CLI: fs_write, write (create, str_replace, ...),
                        # todo_list (create, complete, ...)
                        "fs_write", "write", "todo_list"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish", "/bin/bash", "/bin/sh", "/bin/zsh",
                     "/usr/bin/bash", "/usr/bin/env", "powershell", "pwsh"})
_PATH_KEYS = ("file_path", "path", "absolute_path", "notebook_path", "dir_path", "directory",
              "directory_path", "target_file", "filePath", "filepath", "dirPath",
              "target_directory", "relative_workspace_path", "directory_absolute_path")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_URL = re.compile(r"https?://[^\s\"'<>)\]]+")
_MAX_VIEW = 2000  # characters kept of a view (indexed; the full text stays in the arguments)


def _command(raw_name: str, args: Mapping[str, Any]) -> str | None:
    if raw_name in _NOT_SHELL:
        return None
    value = args.get("command")
    if value is None:
        value = args.get("cmd")
    if value is None and isinstance(args.get("commands"), list):  # Responses shell_call
        value = "\n".join(c for c in args["commands"] if isinstance(c, str)) or None
    if value is None and isinstance(args.get("action"), Mapping):  # local_shell_call
        value = args["action"].get("command")
    return command_line(value)


_SHELL_NAMES = frozenset(s.rsplit("/", 1)[-1] for s in _SHELLS)


def command_line(value: Any) -> str | None:
    """The command a ``command`` value runs, as a person would type it: a string as it is;
    an argv list of strings ``["bash", "-lc", X]`` (a shell given a script) as the script
    ``X``, any other argv shell-quoted (:func:`shlex.join`); ``None`` for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        if (len(value) >= 3 and value[0].rsplit("/", 1)[-1] in _SHELL_NAMES
                and value[1].startswith("-") and value[1].endswith("c")):
            return str(value[2])
        return shlex.join(value)
    return None


def _path(raw_name: str, args: Mapping[str, Any]) -> str | None:
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    for key in ("paths", "include"):  # Gemini read_many_files
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return "\n".join(value)
    for key in ("files", "file_paths"):  # Cline SDK read_files
        value = args.get(key)
        if isinstance(value, list) and value:
            found = [v if isinstance(v, str) else v.get("path") for v in value
                     if isinstance(v, str | Mapping)]
            paths = [f for f in found if isinstance(f, str) and f]
            if paths and len(paths) == len(found):
                return "\n".join(paths)
    operation = args.get("operation")  # Responses apply_patch_call
    if isinstance(operation, Mapping) and isinstance(operation.get("path"), str):
        return str(operation["path"])
    patch = args.get("input") if "patch" in raw_name.lower() else None
    if isinstance(patch, str):
        found = _PATCH_FILE.findall(patch)
        if found:
            return "\n".join(p.strip() for p in found)
    return None


def _pattern(args: Mapping[str, Any]) -> str | None:
    for key in ("pattern", "regex", "glob", "glob_pattern"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    queries = args.get("queries")  # Cline SDK search_codebase
    if isinstance(queries, str) and queries:
        return queries
    if isinstance(queries, list) and queries and all(isinstance(q, str) for q in queries):
        return "\n".join(queries)
    return None


def _url(raw_name: str, args: Mapping[str, Any]) -> str | None:
    for key in ("url", "uri"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    requests = args.get("requests")  # Cline SDK fetch_web_content
    if isinstance(requests, list):
        urls = [r["url"] for r in requests if isinstance(r, Mapping)
                and isinstance(r.get("url"), str) and r["url"]]
        if urls:
            return "\n".join(urls)
    if raw_name == "web_fetch" and isinstance(args.get("prompt"), str):  # Gemini CLI
        found = _URL.findall(args["prompt"])
        if found:
            return "\n".join(found)
    return None


def argument_views(raw_name: str, arguments: Any) -> tuple[str | None, ...]:
    """``(command, path, pattern, url)`` of a call's arguments (``None`` where it has none).

    Decided by argument shape and raw name only (never by the alias table, which changes):
    ``command`` from ``command`` (a string, or an argv list: ``["bash", "-lc", X]`` gives
    ``X``, any other argv its shell-quoted join), ``cmd``, ``commands`` (joined by newlines)
    or ``action.command``, except for tools whose ``command`` is a sub-command
    (``str_replace_editor``, ``task_tracker``); ``path`` from ``file_path``, ``path``,
    ``absolute_path``, ``notebook_path``, ``dir_path``, ``target_directory``,
    ``relative_workspace_path`` (Cursor's older ``list_dir``) ..., the paths
    of ``files`` / ``file_paths`` (Cline SDK), a patch's ``*** Update File:`` lines;
    ``pattern`` from ``pattern``, ``regex``, ``glob`` / ``glob_pattern`` (Zed's find_path,
    Cursor's glob_file_search) or ``queries`` (joined by newlines); ``url`` from ``url`` or
    ``uri``, the ``requests``' URLs (Cline SDK), or the URLs in a Gemini CLI ``web_fetch``
    prompt. Each is cut to 2,000 characters.
    """
    if not isinstance(arguments, Mapping):
        return (None, None, None, None)
    views = (_command(raw_name, arguments), _path(raw_name, arguments), _pattern(arguments),
             _url(raw_name, arguments))
    return tuple(_cut(v) for v in views)


def _cut(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.replace("\x00", "\ufffd")
    return value[:_MAX_VIEW]
