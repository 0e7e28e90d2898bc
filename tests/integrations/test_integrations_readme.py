"""The README lines of the integrations run, and they are the examples atop their modules.

``readme_snippets.md`` holds the lines the README shows (the lead pastes them there, where
``tests/test_readme.py`` runs every python block again).
"""

from __future__ import annotations

import importlib
import re
import textwrap
import warnings
from pathlib import Path

import pytest

SNIPPETS = (Path(__file__).with_name("readme_snippets.md")).read_text(encoding="utf-8")
BLOCKS = [code for lang, code in re.findall(r"```(\w+)\n(.*?)```", SNIPPETS, re.DOTALL)
          if lang == "python"]
MODULES = ["store.integrations.openai_agents", "store.integrations.langchain",
           "store.integrations.pydantic_ai"]


def docstring_example(module: str) -> str:
    doc = importlib.import_module(module).__doc__ or ""
    found = re.search(r"::\n\n((?:    .*\n|\n)+?)\n(?=\S)", doc)
    assert found, f"{module} has no example at the top"
    return textwrap.dedent(found.group(1)).strip() + "\n"


def test_there_is_one_snippet_per_module_and_it_is_the_modules_example():
    assert len(BLOCKS) == len(MODULES)
    for module, block in zip(MODULES, BLOCKS, strict=True):
        assert block.strip() + "\n" == docstring_example(module), module


@pytest.mark.parametrize("code", BLOCKS, ids=MODULES)
def test_the_snippets_run(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(compile(code, "readme_snippets.md", "exec"), {})
