"""The rule files are read with libyaml's parser where PyYAML has it (``store.rules.sigma``):
the built-in pack reads to the same documents as with the pure-Python safe loader, and a
text that is not YAML is the same typed error either way."""

from __future__ import annotations

import importlib.resources

import pytest
import yaml

from store.core.errors import RuleError
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
