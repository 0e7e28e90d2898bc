"""Issue 29: the Sigma modifiers and conditions rules use, evaluated over event fields."""

from __future__ import annotations

import pytest

from store import MissingExtra, RuleError
from store.rules.sigma import parse_rules


def rule(detection, logsource="{category: tool_call, product: ai_agent}"):
    text = ("title: t\nid: 11111111-2222-4333-8444-555555555555\nstatus: test\n"
            f"logsource: {logsource}\nlevel: high\ndetection:\n{detection}")
    (parsed,) = parse_rules(text, "test.yml")
    return parsed


def hit(parsed, **fields):
    return parsed.matcher(fields, {}, [])


@pytest.mark.parametrize(("detection", "yes", "no"), [
    ("  s:\n    CommandLine|contains: Push\n  condition: s",
     {"CommandLine": "git PUSH x"}, {"CommandLine": "git pull"}),
    ("  s:\n    CommandLine|startswith: git\n  condition: s",
     {"CommandLine": "Git status"}, {"CommandLine": "a git"}),
    ("  s:\n    Image|endswith: /curl\n  condition: s",
     {"Image": "/usr/bin/curl"}, {"Image": "/usr/bin/curly"}),
    ("  s:\n    Image: /bin/dd\n  condition: s", {"Image": "/BIN/DD"}, {"Image": "/bin/dd2"}),
    ("  s:\n    CommandLine|re: '^rm\\s+-rf'\n  condition: s",
     {"CommandLine": "rm  -rf x"}, {"CommandLine": "RM -rf x"}),
    ("  s:\n    CommandLine|re|i: '^rm\\s+-rf'\n  condition: s",
     {"CommandLine": "RM -rf x"}, {"CommandLine": "echo rm -rf"}),
    ("  s:\n    CommandLine|contains|all: [curl, '@']\n  condition: s",
     {"CommandLine": "curl -d @f"}, {"CommandLine": "curl -d x"}),
    ("  s:\n    CommandLine|contains: [wget, curl]\n  condition: s",
     {"CommandLine": "wget x"}, {"CommandLine": "fetch x"}),
    ("  s:\n    CommandLine: 'git * --force'\n  condition: s",
     {"CommandLine": "git push --force"}, {"CommandLine": "git push --force x"}),
    ("  s:\n    CommandLine: 'ls -?'\n  condition: s",
     {"CommandLine": "ls -l"}, {"CommandLine": "ls -la"}),
    ("  s:\n    CommandLine|cased|contains: Push\n  condition: s",
     {"CommandLine": "git Push"}, {"CommandLine": "git push"}),
    ("  s:\n    Url|exists: true\n  condition: s", {"Url": "http://x"}, {"Tool": "read"}),
    ("  s:\n    Url: null\n  condition: s", {"Tool": "read"}, {"Url": "http://x"}),
    ("  a:\n    Tool: bash\n  b:\n    CommandLine|contains: sudo\n  condition: a and not b",
     {"Tool": "bash", "CommandLine": "ls"}, {"Tool": "bash", "CommandLine": "sudo ls"}),
    ("  sel_a:\n    Tool: bash\n  sel_b:\n    Tool: read\n  condition: 1 of sel_*",
     {"Tool": "read"}, {"Tool": "write"}),
    ("  sel_a:\n    Tool: bash\n  sel_b:\n    CommandLine|contains: ls\n"
     "  condition: all of sel_*", {"Tool": "bash", "CommandLine": "ls"},
     {"Tool": "bash", "CommandLine": "pwd"}),
    ("  a:\n    Tool: bash\n  b:\n    Tool: read\n  c:\n    Agent: codex\n"
     "  condition: (a or b) and not c", {"Tool": "read", "Agent": "claude-code"},
     {"Tool": "read", "Agent": "codex"}),
    ("  s:\n    - Tool: bash\n    - Agent: codex\n  condition: s",
     {"Agent": "codex"}, {"Tool": "read"}),
    ("  s:\n    - 'rm -rf'\n  condition: s", {"Arguments": '{"c":"rm -rf /"}'},
     {"Arguments": "ls"}),
    ("  s:\n    TargetFilename|endswith: .pem\n  condition: s",
     {"TargetFilename": ["/a/x.txt", "/a/k.PEM"]}, {"TargetFilename": ["/a/x.txt"]}),
    ("  s:\n    Arguments.count|gt: 10\n  condition: s",
     {"Arguments.count": "11"}, {"Arguments.count": "9"}),
    ("  s:\n    CommandLine|windash|contains: ' -f '\n  condition: s",
     {"CommandLine": "x /f y"}, {"CommandLine": "x f y"}),
    ("  s:\n    Url|cidr: 10.0.0.0/8\n  condition: s", {"Url": "10.1.2.3"}, {"Url": "11.0.0.1"}),
])
def test_modifiers_and_conditions(detection, yes, no):
    parsed = rule(detection)

    assert hit(parsed, **yes)
    assert not hit(parsed, **no)


def test_a_rule_applies_to_its_log_source_only():
    parsed = rule("  s:\n    Image|endswith: /rm\n  condition: s",
                  "{category: process_creation, product: linux}")

    assert parsed.applies("process_creation", "linux")
    assert not parsed.applies("tool_call", "ai_agent")
    assert not parsed.applies("process_creation", "windows")


@pytest.mark.parametrize(("text", "problem"), [
    ("title: [", "not a Sigma rule file"),
    ("title: t\nlogsource: {product: linux}\ndetection:\n  s:\n    A: b\n  condition: x\n",
     "x"),
    ("title: t\nlogsource: {product: linux}\ndetection:\n  s:\n    A|nosuch: b\n"
     "  condition: s\n", "nosuch"),
    ("title: t\nlogsource: {product: linux}\ndetection:\n  s:\n    A|re: '(['\n"
     "  condition: s\n", "test.yml"),
    ("title: t\nlogsource: {product: linux}\ndetection:\n  s:\n    A|fieldref: B\n"
     "  condition: s\n", "SigmaFieldReference"),
])
def test_a_bad_rule_is_a_rule_error_naming_the_file(text, problem):
    with pytest.raises(RuleError) as caught:
        parse_rules(text, "test.yml")

    assert "test.yml" in str(caught.value) and problem in str(caught.value)


def test_missing_extra_names_it(monkeypatch):
    import sys

    from store.rules.engine import require_extra

    monkeypatch.setitem(sys.modules, "bashlex", None)
    with pytest.raises(MissingExtra, match=r"transcript-store\[rules\]"):
        require_extra()
