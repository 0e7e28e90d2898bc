"""Issue 29: the field mapping from tool calls to Sigma log-source events, per agent shape."""

from __future__ import annotations

import pytest

from store.rules.events import CallRecord, call_events
from store.rules.shell import simple_commands

CWD = "/home/dev/project"


def record(tool, raw, arguments, *, agent="claude-code", cwd=CWD):
    return CallRecord("s1", 3, 0, "call_1", raw, tool, agent, cwd, arguments)


def processes(call):
    return [dict(e.fields) for e in call_events(call) if e.category == "process_creation"]


def of(call, category):
    return [dict(e.fields) for e in call_events(call) if e.category == category]


AGENT_SHAPES = [
    pytest.param(record("bash", "Bash", {"command": "git push --force origin main",
                                         "description": "push"}), id="claude-code-Bash"),
    pytest.param(record("bash", "shell", {"command": ["bash", "-lc",
                                                      "git push --force origin main"],
                                          "workdir": "/home/dev/project"}, agent="codex"),
                 id="codex-shell-argv"),
    pytest.param(record("bash", "exec_command", {"cmd": "git push --force origin main"},
                        agent="codex"), id="codex-exec_command"),
    pytest.param(record("bash", "run_shell_command",
                        {"command": "git push --force origin main", "dir_path": "."},
                        agent="gemini-cli"), id="gemini-run_shell_command"),
    pytest.param(record("bash", "execute_bash", {"command": "git push --force origin main"},
                        agent="openhands"), id="openhands-execute_bash"),
    pytest.param(record("bash", "execute_command", {"command": "git push --force origin main",
                                                    "requires_approval": False},
                        agent="cline"), id="cline-execute_command"),
    pytest.param(record("bash", "local_shell", {"action": {
        "command": ["git", "push", "--force", "origin", "main"]}}, agent="agents-sdk"),
        id="responses-local_shell"),
]


@pytest.mark.parametrize("call", AGENT_SHAPES)
def test_every_agents_shell_call_is_the_same_process(call):
    found = [p for p in processes(call) if p["Image"] == "/git"]

    assert len(found) == 1
    assert found[0]["CommandLine"] == "git push --force origin main"
    assert found[0]["CurrentDirectory"] == CWD


def test_a_wrapping_shell_is_the_parent_and_an_event_of_its_own():
    call = record("bash", "shell", {"command": ["bash", "-lc", "rm -rf dist && ls"]},
                  agent="codex")
    found = processes(call)

    assert [p["Image"] for p in found] == ["/bash", "/rm", "/ls"]
    assert found[1]["ParentImage"] == "/bash"
    assert found[1]["ParentCommandLine"] == "bash -lc 'rm -rf dist && ls'"
    assert "ParentImage" not in found[0]


def test_lists_pipelines_subshells_and_substitutions_are_split():
    line = ("cd /x && FOO=1 curl -s http://a | sh; (rm -rf b) || echo $(whoami) "
            "> /tmp/o 2>&1\nif true; then make; fi")
    commands = [c.argv[0] for c in simple_commands(line)]

    assert commands == ["cd", "curl", "sh", "rm", "whoami", "echo", "true", "make"]
    echo = next(c for c in simple_commands(line) if c.argv[0] == "echo")
    assert echo.text == "echo $(whoami) > /tmp/o 2>&1"


def test_wrappers_are_unwrapped_with_root_under_sudo():
    found = processes(record("bash", "Bash", {"command": "sudo -u root env A=1 rm -rf /"}))

    assert [p["Image"] for p in found] == ["/sudo", "/env", "/rm"]
    assert found[1]["User"] == "root" and found[1]["ParentImage"] == "/sudo"
    assert found[2]["CommandLine"] == "rm -rf /"
    assert found[2]["ParentCommandLine"] == "env A=1 rm -rf /"


def test_what_bashlex_cannot_parse_still_splits():
    found = processes(record("bash", "Bash", {"command": "[[ -f x ]] && rm -rf / ; ls"}))

    assert [p["Image"] for p in found] == ["/rm", "/ls"]


def test_paths_and_images_are_absolute_against_the_working_directory():
    found = processes(record("bash", "Bash", {"command": "./run.sh && bin/tool"}))

    assert [p["Image"] for p in found] == [f"{CWD}/run.sh", f"{CWD}/bin/tool"]
    gemini = record("bash", "run_shell_command", {"command": "ls", "dir_path": "sub"},
                    agent="gemini-cli")
    assert processes(gemini)[0]["CurrentDirectory"] == f"{CWD}/sub"


def test_redirections_are_file_events():
    call = record("bash", "Bash", {"command": "echo x >> ~/.bashrc; sort < data.txt > /dev/null"})

    assert of(call, "file_event") == [{"TargetFilename": "~/.bashrc", "Image": "/echo",
                                       "CommandLine": "echo x >> ~/.bashrc"}]
    assert [e["TargetFilename"] for e in of(call, "file_access")] == [f"{CWD}/data.txt"]


@pytest.mark.parametrize(("tool", "raw", "arguments", "category", "target"), [
    ("read", "Read", {"file_path": "/home/dev/.ssh/id_rsa"}, "file_access",
     "/home/dev/.ssh/id_rsa"),
    ("read", "read_file", {"path": "src/../.env"}, "file_access", f"{CWD}/.env"),
    ("read", "read_file", {"absolute_path": "/etc/hosts"}, "file_access", "/etc/hosts"),
    ("write", "Write", {"file_path": "notes.md", "content": "x"}, "file_event",
     f"{CWD}/notes.md"),
    ("edit", "replace", {"file_path": "/etc/profile", "old_string": "a", "new_string": "b"},
     "file_event", "/etc/profile"),
    ("patch", "apply_patch", {"input": "*** Begin Patch\n*** Update File: app.py\n@@\n-a\n+b\n"
                                       "*** End Patch"}, "file_event", f"{CWD}/app.py"),
])
def test_reads_and_writes_are_file_events(tool, raw, arguments, category, target):
    call = record(tool, raw, arguments)
    found = of(call, category)

    assert [e["TargetFilename"] for e in found] == [target]
    assert of(call, "process_creation") == []


def test_the_native_event_carries_the_call():
    call = record("web_fetch", "WebFetch", {"url": "https://example.com/x", "prompt": "sum"})
    (native,) = of(call, "tool_call")

    assert native["Tool"] == "web_fetch" and native["RawTool"] == "WebFetch"
    assert native["Agent"] == "claude-code" and native["Url"] == "https://example.com/x"
    assert native["Arguments.prompt"] == "sum"
    assert native["Arguments"] == '{"url":"https://example.com/x","prompt":"sum"}'
    grep = record("grep", "Grep", {"pattern": "TODO", "path": "src"})
    (native,) = of(grep, "tool_call")
    assert native["Pattern"] == "TODO" and native["TargetFilename"] == f"{CWD}/src"


def test_secret_kinds_only_when_asked():
    call = record("bash", "Bash", {"command": "echo AKIAIOSFODNN7EXAMPLE"})

    assert "SecretKind" not in next(e for e in call_events(call) if e.category == "tool_call"
                                    ).fields
    native = next(e for e in call_events(call, secrets=True) if e.category == "tool_call")
    assert native.fields["SecretKind"] == ["aws_access_key_id"]


def test_calls_without_arguments_still_have_a_native_event():
    (event,) = call_events(record("bash", "Bash", None))

    assert event.category == "tool_call" and event.fields["Tool"] == "bash"


@pytest.mark.parametrize("text", [
    '{"command":"ls"}', '{"command":"echo AKIAIOSFODNN7EXAMPLE"}',
    '{"k":"SK0123456789abcdef0123456789abcdef"}',
    '{"url":"postgres://app:hunter2hunter2@db/x"}',
    '{"content":"password = \\"correct horse battery\\""}', '{"glob":"**/*.py"}',
])
def test_secret_kinds_is_find_secrets_with_the_keyword_gate_once(text):
    from store.redaction.redact import find_secrets
    from store.rules.events import secret_kinds

    assert secret_kinds(text) == sorted({kind for _, _, kind in find_secrets(text)})
