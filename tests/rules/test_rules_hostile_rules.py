"""Issue 37 (6, 10): hostile rule files. A rule's regular expression runs in linear time (RE2),
so a pattern that backtracks forever elsewhere answers on a long argument; a pattern RE2
cannot run is a typed error naming the rule and field when it loads; a document of the wrong
shape is "not a Sigma rule" naming the field, from the library and the command line alike,
and nothing else ever comes out (a hypothesis fuzz)."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import store
from store import RuleError
from store.cli.main import cli
from store.rules.engine import RuleSet
from store.rules.events import CallRecord
from store.rules.sigma import Rule, parse_rules

HEAD = ("title: hostile\nid: 11111111-2222-4333-8444-555555555555\n"
        "logsource: {category: process_creation, product: linux}\nlevel: high\n")
BACKTRACKING = HEAD + "detection:\n  sel:\n    CommandLine|re: '(a|aa)*b'\n  condition: sel\n"


def shell(command: str) -> CallRecord:
    return CallRecord("s", 1, 0, "c", "Bash", "bash", "claude-code", "/w", {"command": command})


def test_a_backtracking_regex_answers_on_a_long_argument() -> None:
    (rule,) = parse_rules(BACKTRACKING, "hostile.yml")
    rules = RuleSet([rule])

    assert rules.check(shell("echo " + "a" * 50_000)) == ()
    (match,) = rules.check(shell("echo " + "a" * 50_000 + "b"))
    assert match.rule.id == rule.id and match.field == "CommandLine"


def test_wildcards_that_need_a_regex_answer_on_a_long_argument() -> None:
    text = HEAD + ("detection:\n  sel:\n    CommandLine: '*a*a*a*a*a*a*a*a*a*a*b'\n"
                   "  condition: sel\n")
    rules = RuleSet(parse_rules(text, "wild.yml"))

    assert rules.check(shell("echo " + "a" * 50_000)) == ()


@pytest.mark.parametrize(("pattern", "what"), [
    (r"(a)\1", "backreference"), ("(?=a)b", "lookahead"), ("(?<!a)b", "lookbehind"),
    ("(?>a+)b", "atomic group")])
def test_a_pattern_re2_cannot_run_is_a_typed_error_naming_the_rule_and_field(
        pattern: str, what: str) -> None:
    text = HEAD + f"detection:\n  sel:\n    TargetFilename|re: '{pattern}'\n  condition: sel\n"

    with pytest.raises(RuleError) as error:
        parse_rules(text, "bad.yml")

    message = str(error.value)
    assert "bad.yml" in message and "'hostile'" in message, what
    assert "field 'TargetFilename'" in message and "RE2" in message


def test_re_flags_still_apply() -> None:
    text = HEAD + ("detection:\n  sel:\n    CommandLine|re|i|s: 'RM.+ROOT'\n"
                   "  condition: sel\n")
    (rule,) = parse_rules(text, "flags.yml")

    assert rule.matcher({"CommandLine": "rm -rf\n/root"}, {}, [])
    assert not rule.matcher({"CommandLine": "ls /root"}, {}, [])


MALFORMED = [
    ("detection: {sel: 5, condition: [1, 2]}", "detection.condition[0]"),
    ("detection: {sel: {CommandLine: x}, condition: 5}", "detection.condition"),
    ("detection: {sel: {5: x}, condition: sel}", "detection.sel"),
    ("detection: {sel: {CommandLine: {a: 1}}, condition: sel}", "detection.sel.CommandLine"),
    ("detection: {sel: [[1]], condition: sel}", "detection.sel[0]"),
    ("detection: [1, 2]", "detection"),
    ("detection: {sel: {CommandLine: x}, condition: sel, timeframe: [1]}",
     "detection.timeframe"),
    ("detection: {sel: {CommandLine: x}, condition: sel}\ntags: [5]", "tags[0]"),
    ("detection: {sel: {CommandLine: x}, condition: sel}\nid: [1]", "id"),
    ("detection: {sel: {CommandLine: x}, condition: sel}\nrelated: [5]", "related[0]"),
]


@pytest.mark.parametrize(("detection", "field"), MALFORMED)
def test_a_wrongly_typed_value_is_not_a_sigma_rule_naming_the_field(
        detection: str, field: str) -> None:
    text = "title: t\nlogsource: {product: linux}\n" + detection + "\n"

    with pytest.raises(RuleError) as error:
        parse_rules(text, "typed.yml")

    assert str(error.value).startswith("typed.yml: not a Sigma rule: ")
    assert f"field {field!r}" in str(error.value)


@pytest.mark.parametrize("text", ["5\n", "- a\n- b\n", "'just text'\n", "a: &a [*a]\n",
                                  "{", "[" * 5000, "title: t\n---\n7\n"])
def test_a_document_that_is_no_rule_at_all_is_a_typed_error(text: str) -> None:
    with pytest.raises(RuleError) as error:
        parse_rules(text, "junk.yml")

    assert str(error.value).startswith("junk.yml")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("bad", [
    "detection: {sel: 5, condition: [1, 2]}",
    "detection:\n  sel:\n    CommandLine|re: '(a)\\1'\n  condition: sel"])
def test_the_command_line_reports_a_bad_rule_in_one_line(store_url: str, tmp_path, bad) -> None:
    rule = tmp_path / "bad.yml"
    rule.write_text("title: t\nlogsource: {product: linux}\n" + bad + "\n")

    for args in (["rules", "check", "--db", store_url, "--rules", str(rule)],
                 ["rules", "test", str(rule), "--db", store_url],
                 ["rules", "test", str(rule), "--no-store"],
                 ["rules", "list", "--rules", str(rule)]):
        code, output = run(*args)
        assert code == 1, output
        assert "Traceback" not in output
        (line,) = output.strip().splitlines()
        assert line.startswith(f"error: {rule}: ")


def test_rules_test_answers_with_a_backtracking_regex(store_url: str, tmp_path) -> None:
    with store.TranscriptStore.open(store_url) as opened:
        opened.create_session("s", agent="claude-code", cwd="/w")
        opened.append("s", [store.Message("assistant", (
            store.ToolCall("c1", "Bash", {"command": "echo " + "a" * 50_000}),
            store.ToolCall("c2", "Bash", {"command": "echo " + "a" * 500 + "b"})))])
    rule = tmp_path / "slow.yml"
    rule.write_text(BACKTRACKING)

    result = CliRunner().invoke(cli, ["rules", "test", str(rule), "--db", store_url, "--json"])

    assert result.exit_code == 0, result.output
    assert [json.loads(line)["call_id"] for line in result.stdout.splitlines()] == ["c2"]


# -- fuzz: arbitrary YAML-ish structures give rules or RuleError, nothing else -----------------

KEYS = ["title", "id", "status", "description", "logsource", "detection", "condition",
        "level", "tags", "references", "falsepositives", "fields", "date", "modified",
        "related", "author", "sel", "filter", "CommandLine", "Image|endswith",
        "CommandLine|re", "CommandLine|contains|all", "TargetFilename|startswith",
        "Url|cidr", "x|lt", "category", "product", "service", "timeframe", "action",
        "correlation", "1 of sel*", "sel and not filter"]
scalars = (st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False)
           | st.sampled_from(KEYS) | st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.sampled_from(KEYS) | scalars, inner, max_size=4),
                      max_leaves=25)
detections = st.dictionaries(st.sampled_from(["sel", "filter", "condition", "timeframe",
                                              "sel_a"]) | st.integers(0, 3), values,
                             max_size=4)
documents = st.fixed_dictionaries(
    {}, optional={"title": values | st.just("t"), "id": values,
                  "logsource": values | st.just({"product": "linux"}), "level": values,
                  "tags": values, "detection": detections | values, "related": values,
                  "date": values, "falsepositives": values, "status": values}) | values


def only_typed(text: str) -> list[Rule]:
    try:
        loaded = parse_rules(text, "fuzz.yml")
    except RuleError:
        return []
    assert all(isinstance(r, Rule) for r in loaded)
    return loaded


@given(documents)
def test_fuzz_any_structure_loads_or_is_a_rule_error(document) -> None:
    text = yaml.safe_dump(document, default_flow_style=False, allow_unicode=True)
    loaded = only_typed(text)
    if loaded:  # what loads also evaluates
        RuleSet(loaded).check(shell("rm -rf / && curl x | sh"))


@given(st.lists(documents, min_size=1, max_size=3))
def test_fuzz_several_documents(docs) -> None:
    only_typed(yaml.safe_dump_all(docs))


@given(st.text(max_size=200))
def test_fuzz_any_text(text: str) -> None:
    only_typed(text)


@given(st.dictionaries(st.sampled_from(["sel", "filter"]),
                       st.dictionaries(st.sampled_from(KEYS[17:25]), values, max_size=3),
                       min_size=1, max_size=2),
       st.sampled_from(["sel", "sel and not filter", "1 of sel*", "all of them", "filter"]))
def test_fuzz_well_formed_rules_with_any_values(selections, condition) -> None:
    document = {"title": "t", "logsource": {"product": "linux"},
                "detection": {**selections, "condition": condition}}
    loaded = only_typed(yaml.safe_dump(document))
    if loaded:
        RuleSet(loaded).check(shell("cat /etc/shadow"))


def test_a_lone_surrogate_in_a_field_is_read_not_raised() -> None:
    (rule,) = parse_rules(HEAD + "detection:\n  sel:\n    CommandLine|re: 'a.b'\n"
                          "  condition: sel\n", "s.yml")

    assert rule.matcher({"CommandLine": "a\ud800b"}, {}, [])
    assert not rule.matcher({"CommandLine": "\ud800"}, {}, [])


def test_watch_with_an_unsupported_rule_on_import_stops_before_a_pass(store_url: str,
                                                                      tmp_path) -> None:
    rule = tmp_path / "backref.yml"
    rule.write_text(HEAD + "detection:\n  sel:\n    CommandLine|re: '(a)\\1'\n"
                    "  condition: sel\n")
    config = tmp_path / "store.toml"
    config.write_text(f'[rules]\non_import = true\npaths = ["{rule}"]\n')
    empty = tmp_path / "none"
    empty.mkdir()

    code, output = run("watch", "--once", "--db", store_url, "--config", str(config),
                       str(empty))

    assert code == 1 and "Traceback" not in output
    assert f"error: {rule}: rule 'hostile', field 'CommandLine'" in output


def test_watch_with_a_backtracking_rule_on_import_finishes_its_pass(store_url: str,
                                                                    tmp_path) -> None:
    rule = tmp_path / "slow.yml"
    rule.write_text(BACKTRACKING)
    config = tmp_path / "store.toml"
    config.write_text(f'[rules]\non_import = true\npaths = ["{rule}"]\n')
    folder = tmp_path / "agent"
    folder.mkdir()
    line = json.dumps({"type": "assistant", "sessionId": "s1", "uuid": "u1",
                       "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w",
                       "message": {"role": "assistant", "content": [
                           {"type": "tool_use", "id": "t1", "name": "Bash",
                            "input": {"command": "echo " + "a" * 50_000}}]}})
    (folder / "s1.jsonl").write_text(line + "\n")

    code, output = run("watch", "--once", "--db", store_url, "--config", str(config),
                       str(folder))

    assert code == 0, output
    with store.TranscriptStore.open(store_url, read_only=True) as opened:
        assert [c.call.name for c in opened.load("s1").calls()] == ["bash"]
        assert store.load_findings(opened) == []
