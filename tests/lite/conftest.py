"""A store with many agents' calls for the stdlib readers' equivalence tests (issue 39): every
agent fixture of tests/fixtures/agents and the corpus's agent files imported, and sessions
whose editor tools name their action, errors, calls without a result, invalid arguments, a
global alias and aliases scoped to an agent."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import CORPUS

import store

FIXTURES = Path(__file__).parent.parent / "fixtures" / "agents"


def _call(call_id: str, name: str, arguments: dict[str, object] | str) -> dict[str, object]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def _editor_session(db: store.TranscriptStore, sid: str, agent: str, name: str,
                    cwd: str) -> None:
    calls = [_call(f"{sid}-v", name, {"command": "view", "path": "/p/a.py"}),
             _call(f"{sid}-c", name, {"command": "create", "path": "/p/b.py", "file_text": "x"}),
             _call(f"{sid}-e", name, {"command": "str_replace", "path": "/p/a.py",
                                      "old_str": "a", "new_str": "b"}),
             _call(f"{sid}-u", name, {"command": "frobnicate", "path": "/p/c.py"}),
             _call(f"{sid}-i", name, '{"command": "view", "path": '),
             _call(f"{sid}-b", "bash", {"command": "git push origin main"}),
             _call(f"{sid}-n", "Bash", {"command": "ls -la"})]
    results = [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls[:4]]
    results.append({"role": "tool", "tool_call_id": calls[5]["id"],
                    "content": "error: rejected", "is_error": True})
    db.append(sid, [{"role": "user", "content": "look at a.py"},
                    {"role": "assistant", "content": None, "tool_calls": calls},
                    *results], agent=agent, cwd=cwd)


def populate(db: store.TranscriptStore, scratch: Path) -> None:
    home = scratch / "files"
    shutil.copytree(FIXTURES, home / "agents")
    for part in ("claude_code", "codex"):
        if (CORPUS / part).exists():
            shutil.copytree(CORPUS / part, home / part)
    for path in home.rglob("*"):
        if path.is_file():
            os.utime(path, (1_700_000_000, 1_700_000_000))
    store.import_paths(db, [home])
    _editor_session(db, "oh-1", "openhands", "str_replace_editor", "/w/proj")
    _editor_session(db, "oh-2", "openhands", "file_editor", "/w/proj/sub")
    _editor_session(db, "cp-1", "copilot-cli", "str_replace_editor", "/w/other")
    _editor_session(db, "goose-1", "goose", "developer__text_editor", "/w/100%_x")
    db.add_alias("ls", "list")
    db.add_alias("Bash", "shell-run", agent="openhands")
    db.add_alias("Read", "view-file", agent="claude-code")


@pytest.fixture(scope="session")
def lite_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The populated SQLite file (read only by the tests)."""
    scratch = tmp_path_factory.mktemp("lite")
    path = scratch / "many.sqlite"
    with store.TranscriptStore.open(f"sqlite:///{path}") as db:
        populate(db, scratch)
        db.update_search_index()  # (as on PostgreSQL: the indexes caught up)
    yield path


@pytest.fixture(scope="session")
def lite_pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same store on PostgreSQL, in a database of its own (read only by the tests): the
    stdlib readers run there on psycopg alone (``store/db/reading/pgread.py``)."""
    from backends import scratch_postgres

    with scratch_postgres(f"ts_lite_{os.getpid()}") as url:
        with store.TranscriptStore.open(url) as db:
            populate(db, tmp_path_factory.mktemp("lite-pg"))
            db.update_search_index()  # (the summaries, which PostgreSQL's readers read)
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def lite_url(request: pytest.FixtureRequest) -> str:
    """The populated store's URL, on each backend the stdlib readers take."""
    if request.param == "sqlite":
        return f"sqlite:///{request.getfixturevalue('lite_db')}"
    url: str = request.getfixturevalue("lite_pg")
    return url
