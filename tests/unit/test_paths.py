"""``store.core.paths.expand_home``: ``~`` and ``~user`` expanded as a shell expands them; a
user that does not exist leaves the word as written (pathlib's ``expanduser`` raised)."""

from __future__ import annotations

import os
from pathlib import Path

from store.core.paths import expand_home


def test_home_is_expanded_and_an_unknown_user_left_as_written(monkeypatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    assert expand_home("~") == Path("/home/someone")
    assert expand_home("~/a/b.sqlite") == Path("/home/someone/a/b.sqlite")
    assert expand_home(Path("~/x")) == Path("/home/someone/x")
    assert expand_home("~no-such-user-0/x") == Path("~no-such-user-0/x")
    assert expand_home("/abs/~x") == Path("/abs/~x")
    assert expand_home("rel") == Path("rel")
    assert os.path.expanduser("~no-such-user-0") == "~no-such-user-0"
