"""Issue 26, lineage: a session's parent is first-class (``SessionLink`` in the session row),
set by the importers for every agent that records it, followed by listings, trees and
audits, on both backends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import store
from store import CallQuery, SessionLink, TranscriptStore, UsageError, search_calls, tool_usage
from store.cli.main import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LINEAGE = FIXTURES / "lineage"
OLD, NEW = "aaaa0000-0000-4000-8000-00000000000a", "bbbb0000-0000-4000-8000-00000000000b"
PARENT, CHILD = "cccc0000-0000-4000-8000-00000000000c", "dddd0000-0000-4000-8000-00000000000d"
FORK = "eeee0000-0000-4000-8000-00000000000e"
GMAIN, GSUB = "ffff0000-0000-4000-8000-00000000000f", "gsub-0001"
CLAUDE = "55550000-0000-4000-8000-000000000001"
CLAUDE_SUB = f"{CLAUDE}:agent-a1b2c3d4e5f6a7b8c"


def calls(n: int, name: str = "bash") -> list[dict[str, object]]:
    return [{"role": "assistant", "content": None, "tool_calls": [
        {"id": f"{name}{i}", "type": "function",
         "function": {"name": name, "arguments": json.dumps({"command": f"echo {i}"})}}
        for i in range(n)]}]


def family(db: TranscriptStore) -> None:
    """root (2 calls) -> sub (3 calls, from call bash0) -> subsub (1 call); root -> fork."""
    db.append("root", calls(2))
    db.append("sub", calls(3, "grep"), parent=SessionLink("root", "subagent", "bash0"))
    db.create_session("subsub", parent=SessionLink("sub", "subagent"))
    db.append("subsub", calls(1, "read"))
    db.append("other", calls(5))


class TestTheStore:
    def test_a_link_is_kept_with_the_session_and_loaded_with_it(self, db: TranscriptStore):
        family(db)

        link = SessionLink("root", "subagent", "bash0")
        assert db.get_session("sub").parent == link
        assert db.load("sub").session.parent == link
        assert db.get_session("root").parent is None

    def test_the_tree_holds_children_and_grandchildren_with_their_calls(self, db):
        family(db)

        tree = db.session_tree("root")

        assert [(d, n.session.session_id, n.session.call_count) for d, n in tree.walk()] == [
            (0, "root", 2), (1, "sub", 3), (2, "subsub", 1)]
        assert tree.children[0].session.parent == SessionLink("root", "subagent", "bash0")
        assert db.session_family("sub") == ["sub", "subsub"]
        assert [a.session_id for a in db.session_ancestors("subsub")] == ["sub", "root"]

    def test_calls_are_counted_with_or_without_the_children(self, db: TranscriptStore):
        family(db)

        assert db.count_calls("root") == 2
        assert db.count_calls("root", with_children=True) == 6
        assert db.count_session_calls("sub", with_children=True) == 4
        found = search_calls(db, CallQuery(session_id="root", with_children=True))
        assert sorted({m.session_id for m in found}) == ["root", "sub", "subsub"]
        assert len(search_calls(db, CallQuery(session_id="root"))) == 2
        usage = {u.name: u.calls for u in tool_usage(db, session_id="root",
                                                     with_children=True)}
        assert usage == {"bash": 2, "grep": 3, "read": 1}
        assert {u.name for u in tool_usage(db, session_id="root")} == {"bash"}
        hits = search_calls(db, CallQuery(session_id="root", with_children=True,
                                          text="echo 2"))
        assert [m.session_id for m in hits] == ["sub"]

    def test_listings_follow_the_parent(self, db: TranscriptStore):
        family(db)
        db.fork("root", 1, "root-fork")

        assert [s.session_id for s in db.list_sessions(parent="root", sort="messages")] \
            == ["root-fork", "sub"]  # (one message each: by id)
        assert db.get_session("root-fork").parent == SessionLink("root", "fork")
        assert {s.session_id for s in db.list_sessions(roots=True)} == {"root", "other"}
        assert db.count_sessions(parent="sub") == 1

    def test_a_link_can_be_set_later_but_never_into_a_loop(self, db: TranscriptStore):
        family(db)

        db.link_session("other", SessionLink("subsub", "continuation"))
        assert db.session_family("root") == ["root", "sub", "subsub", "other"]
        with pytest.raises(UsageError, match="descend from itself"):
            db.link_session("root", SessionLink("other", "fork"))
        with pytest.raises(UsageError, match="lineage kind"):
            SessionLink("root", "cousin")
        db.link_session("other", None)
        assert db.get_session("other").parent is None

    def test_a_child_may_name_a_parent_that_is_not_stored(self, db: TranscriptStore):
        db.append("orphan", calls(1), parent=SessionLink("elsewhere", "subagent"))

        assert [s.session_id for s in db.session_children("elsewhere")] == ["orphan"]
        assert db.session_ancestors("orphan") == []


def imported(db: TranscriptStore, *folders: Path) -> store.ImportSummary:
    summary = store.import_paths(db, folders, settle=0)
    assert summary.ok, (summary.problems, summary.failed_files)
    return summary


class TestTheImporters:
    def test_claude_code_subagents_name_the_parent_call(self, db: TranscriptStore):
        imported(db, FIXTURES / "agents" / "claude")

        assert db.get_session(CLAUDE_SUB).parent == SessionLink(CLAUDE, "subagent",
                                                                 "toolu_agent")
        assert db.count_calls(CLAUDE, with_children=True) == db.count_calls(CLAUDE) + 1

    def test_a_claude_code_resume_continues_the_resumed_session(self, db: TranscriptStore):
        summary = imported(db, LINEAGE / "claude")

        assert db.get_session(NEW).parent == SessionLink(OLD, "continuation")
        assert db.get_session(OLD).parent is None
        assert db.get_session(OLD).message_count == 3  # the copied lines are not stored twice
        assert summary.messages_already_stored == 3
        assert [c.call.name for c in db.load(NEW).calls()] == ["read"]

    def test_codex_spawned_and_forked_threads(self, db: TranscriptStore):
        imported(db, LINEAGE / "codex")

        assert db.get_session(CHILD).parent == SessionLink(PARENT, "subagent")
        assert db.get_session(FORK).parent == SessionLink(PARENT, "fork")
        assert db.get_session(PARENT).parent is None
        assert db.get_session(CHILD).metadata["agent_role"] == "worker"
        assert [s.session_id for s in db.session_children(PARENT)] == [CHILD, FORK]

    def test_gemini_cli_subagents_live_below_their_parent(self, db: TranscriptStore):
        imported(db, LINEAGE / "gemini")

        assert db.get_session(GSUB).parent == SessionLink(GMAIN, "subagent")
        assert db.get_session(GMAIN).parent is None
        assert db.count_calls(GMAIN, with_children=True) == 2

    def test_a_child_imported_before_its_parent_is_found_once_it_comes(self, db, tmp_path):
        codex = tmp_path / "codex"
        shutil.copytree(LINEAGE / "codex", codex)
        parent_file = next(codex.rglob(f"*{PARENT}.jsonl"))
        held = parent_file.read_text(encoding="utf-8")
        parent_file.unlink()
        imported(db, codex)
        assert db.session_tree(CHILD).session.parent == SessionLink(PARENT, "subagent")
        parent_file.write_text(held, encoding="utf-8")

        imported(db, codex)

        assert db.session_family(PARENT) == [PARENT, CHILD, FORK]

    def test_a_session_stored_without_its_link_gets_it_on_the_next_import(self, db, tmp_path):
        imported(db, LINEAGE / "codex")
        db.link_session(CHILD, None)  # as stored before the importers set it
        child = next((LINEAGE / "codex").rglob(f"*{CHILD}.jsonl"))
        copy = tmp_path / child.name
        copy.write_bytes(child.read_bytes())

        imported(db, copy)

        assert db.get_session(CHILD).parent == SessionLink(PARENT, "subagent")


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.stdout


class TestTheCommandLine:
    def test_sessions_show_and_tree_show_parent_children_and_grandchildren(self, store_url):
        with TranscriptStore.open(store_url) as db:
            family(db)

        shown = run("sessions", "show", "sub", "--db", store_url)
        tree = [json.loads(line) for line in
                run("sessions", "tree", "sub", "--db", store_url, "--json").splitlines()]
        text = run("sessions", "tree", "root", "--db", store_url)

        assert "subagent (call bash0) of root" in shown
        assert "subsub" in shown and "4 with them" in shown
        assert [(r["session_id"], r["depth"], r["lineage"], r["parent_call_id"])
                for r in tree] == [("root", -1, None, None), ("sub", 0, "subagent", "bash0"),
                                   ("subsub", 1, "subagent", None)]
        assert text.index("root") < text.index("subagent (call bash0) sub") \
            < text.index("subsub")

    def test_sessions_list_parent_and_roots(self, store_url: str):
        with TranscriptStore.open(store_url) as db:
            family(db)

        children = [json.loads(line)["session_id"] for line in run(
            "sessions", "list", "--parent", "root", "--db", store_url, "--json").splitlines()]
        roots = {json.loads(line)["session_id"] for line in run(
            "sessions", "list", "--roots", "--db", store_url, "--json").splitlines()}

        assert children == ["sub"] and roots == {"root", "other"}

    def test_audits_count_with_or_without_the_children(self, store_url: str):
        with TranscriptStore.open(store_url) as db:
            family(db)

        alone = run("calls", "search", "--session", "root", "--db", store_url, "--json")
        every = run("calls", "search", "--session", "root", "--with-children", "--db",
                    store_url, "--json")
        usage = [json.loads(line) for line in run(
            "tools", "usage", "--session", "root", "--with-children", "--db", store_url,
            "--json").splitlines()]
        refused = CliRunner().invoke(cli, ["tools", "usage", "--with-children", "--db",
                                           store_url])

        assert len(alone.splitlines()) == 2 and len(every.splitlines()) == 6
        assert {u["tool"]: u["calls"] for u in usage} == {"bash": 2, "grep": 3, "read": 1}
        assert refused.exit_code == 2 and "--with-children applies with --session" in \
            refused.output


def test_a_resume_read_as_it_is_written_still_continues_the_resumed_session(db, tmp_path):
    """The resumed session's file read first with only the earlier session's lines, then
    again from where that read stopped (as ``watch`` reads): the new id's lines still name
    their parent."""
    source = LINEAGE / "claude" / "projects" / "-home-u-proj" / f"{NEW}.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    copy = tmp_path / source.name
    copy.write_text("".join(lines[:3]), encoding="utf-8")
    imported(db, copy)
    with copy.open("a", encoding="utf-8") as handle:
        handle.write("".join(lines[3:]))

    imported(db, copy)

    assert db.get_session(NEW).parent == SessionLink(OLD, "continuation")
    assert db.get_session(NEW).message_count == 3 and db.get_session(OLD).message_count == 3
