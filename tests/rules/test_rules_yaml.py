"""The rule files are read with libyaml's parser where PyYAML has it (``store.rules.sigma``):
the built-in pack reads to the same documents as with the pure-Python safe loader, and a
text that is not YAML is the same typed error either way. A folder of rules is read file by
file in the order of its sorted paths (``store.rules.engine``), so a rule that does not load
stops the walk there instead of after every file below is listed (``--rules /`` walked the
whole disk first: 15.8 s -> 1.0 s to its error on this machine)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest
import yaml

from store.core.errors import RuleError
from store.rules.engine import load_rules
from store.rules.sigma import parse_rules


def test_the_pack_reads_to_the_same_documents_with_either_parser() -> None:
    assert yaml.__with_libyaml__  # (the wheel ships libyaml: the fast path is the one tested)
    pack = importlib.resources.files("store.rules.pack")
    files = [e for e in pack.iterdir() if e.name.endswith((".yml", ".yaml"))]
    assert len(files) > 5
    for entry in files:
        text = entry.read_text(encoding="utf-8")
        assert list(yaml.load_all(text, Loader=yaml.CSafeLoader)) == list(
            yaml.safe_load_all(text)), entry.name


@pytest.mark.parametrize("text", ["title: [unclosed", "a: b\n  c: d", "\t- tab"])
def test_a_text_that_is_not_yaml_is_a_rule_error(text: str) -> None:
    with pytest.raises(RuleError, match="not a Sigma rule file"):
        parse_rules(text, "bad.yml")


def rule(title: str) -> str:
    return (f"title: {title}\nlogsource: {{category: process_creation, product: linux}}\n"
            "detection:\n  sel:\n    CommandLine|contains: x\n  condition: sel\n")


def test_a_folder_is_read_in_the_order_of_its_sorted_paths(tmp_path: Path) -> None:
    """Nested folders, files and folders of like names, a folder link (not followed), files
    that are not rules: the rules load in sorted path order, as a listing of every file
    sorted would give them."""
    for name in ("b/z.yml", "a.yml", "a/y.yaml", "a-b.yml", "a/c/x.yml", "ab/w.yml",
                 "notes.txt", "c/readme.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(rule(name) if name.endswith(("yml", "yaml")) else "x")
    (tmp_path / "ab" / "link").symlink_to(tmp_path / "b")

    titles = [r.title for r in load_rules([tmp_path])]

    assert titles == ["a/c/x.yml", "a/y.yaml", "a-b.yml", "a.yml", "ab/w.yml", "b/z.yml"]
    listed = sorted(p for p in tmp_path.rglob("*") if p.suffix in (".yml", ".yaml"))
    assert titles == [str(p.relative_to(tmp_path)) for p in listed]


def test_a_folder_without_rule_files_and_a_bad_rule_in_a_tree_are_named(tmp_path: Path) -> None:
    (tmp_path / "empty" / "deeper").mkdir(parents=True)
    (tmp_path / "empty" / "deeper" / "notes.txt").write_text("x")
    with pytest.raises(RuleError, match="empty: no .yml or .yaml rule files in this folder"):
        load_rules([tmp_path / "empty"])

    (tmp_path / "tree" / "a").mkdir(parents=True)
    (tmp_path / "tree" / "a" / "bad.yml").write_text("title: t\n")
    (tmp_path / "tree" / "b.yml").write_text(rule("b"))
    with pytest.raises(RuleError, match=r"tree/a/bad\.yml: .*must have a log source"):
        load_rules([tmp_path / "tree"])
